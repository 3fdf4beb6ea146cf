// rtl/nasa_mcu_cpu_serial.sv (the bit-serial RV32I controller, not on the board yet) against the
// ISS's Core::Serial in lockstep (tb/mcu_lockstep.h): random RV32I programs, trapping programs
// (mul* are illegal on this core), and every shift amount and load offset.
#include <gtest/gtest.h>

#include "Vnasa_mcu_cpu_serial.h"
#include "mcu_lockstep.h"

namespace {

using namespace mcu_lockstep;
constexpr auto kCore = nasa::mcu::Core::Serial;

TEST(McuCpuSerialRtl, RandomProgramsRetireInLockstepWithTheIss) {
  std::mt19937 g(11);
  for (int t = 0, n = programs(300); t < n; ++t) {
    const auto prog = random_program(g, 200, false, false);
    check<Vnasa_mcu_cpu_serial>(prog, 1000 + t, "program " + std::to_string(t), kCore);
    if (HasFatalFailure()) return;
  }
}

TEST(McuCpuSerialRtl, IllegalAndMisalignedInstructionsTrapAtTheSameAddress) {
  std::mt19937 g(12);
  for (int t = 0, n = programs(300) / 3; t < n; ++t) {
    const auto prog = random_program(g, 100, true, false);
    check<Vnasa_mcu_cpu_serial>(prog, 5000 + t, "program " + std::to_string(t), kCore);
    if (HasFatalFailure()) return;
  }
}

// Shifts take their result through SPre and SWb with an amount-dependent split: every amount of
// every shift, register and immediate forms, of a value with both sign bits; and every load size
// at every byte offset (SPre shifts the word to it), results stored.
TEST(McuCpuSerialRtl, EveryShiftAmountAndLoadOffset) {
  std::vector<uint32_t> p = {lui(1, kRamBase >> 12), lui(3, 0x80F0F), i_type(0x5A5, 3, 0, 3, 0x13),
                             lui(4, 0x7F0F0), i_type(0x5A5, 4, 0, 4, 0x13)};
  int slot = 0;
  auto store = [&](uint32_t r) { p.push_back(s_type(4 * (slot++ % 256), r, 1, 2)); };
  for (uint32_t v : {3u, 4u}) {
    for (uint32_t sh = 0; sh < 32; ++sh) {
      p.push_back(i_type(static_cast<int32_t>(sh), 0, 0, 5, 0x13));  // x5 = amount
      for (const auto& [f7, f3] : {std::pair{0u, 1u}, {0u, 5u}, {0x20u, 5u}}) {
        p.push_back(r_type(f7, 5, v, f3, 6, 0x33));
        store(6);
        p.push_back(i_type(static_cast<int32_t>(sh | (f7 << 5)), v, f3, 7, 0x13));
        store(7);
      }
    }
  }
  store(3);  // a known word at 4 * slot, then loads of it at every offset
  const int w = 4 * ((slot - 1) % 256);
  for (uint32_t f3 : {0u, 1u, 2u, 4u, 5u}) {
    const uint32_t align = (f3 & 3) == 0 ? 1 : (f3 & 3) == 1 ? 2 : 4;
    for (uint32_t off = 0; off < 4; off += align) {
      p.push_back(i_type(static_cast<int32_t>(w + off), 1, f3, 8, 0x03));
      store(8);
    }
  }
  p.push_back(0);
  check<Vnasa_mcu_cpu_serial>(p, 9, "shift amounts and load offsets", kCore);
}

}  // namespace
