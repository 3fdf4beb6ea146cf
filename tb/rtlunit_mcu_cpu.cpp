// rtl/nasa_mcu_cpu.sv (the board's RV32I + Zmmul controller) against the ISS in lockstep
// (tb/mcu_lockstep.h): random programs, trapping programs, the multiply's special operands.
#include <gtest/gtest.h>

#include "Vnasa_mcu_cpu.h"
#include "mcu_lockstep.h"

namespace {

using namespace mcu_lockstep;
constexpr auto kCore = nasa::mcu::Core::Multicycle;

TEST(McuCpuRtl, RandomProgramsRetireInLockstepWithTheIss) {
  std::mt19937 g(1);
  for (int t = 0, n = programs(300); t < n; ++t) {
    const auto prog = random_program(g, 200, false);
    check<Vnasa_mcu_cpu>(prog, 1000 + t, "program " + std::to_string(t), kCore);
    if (HasFatalFailure()) return;
  }
}

TEST(McuCpuRtl, IllegalAndMisalignedInstructionsTrapAtTheSameAddress) {
  std::mt19937 g(2);
  for (int t = 0, n = programs(300) / 3; t < n; ++t) {
    const auto prog = random_program(g, 100, true);
    check<Vnasa_mcu_cpu>(prog, 5000 + t, "program " + std::to_string(t), kCore);
    if (HasFatalFailure()) return;
  }
}

TEST(McuCpuRtl, MultiplySpecialCases) {
  // x3 = -2^31, x4 = -1, x5 = 0, x6 = 7: mul/mulh/mulhsu/mulhu of every pair, results stored
  std::vector<uint32_t> p = {lui(1, kRamBase >> 12), lui(3, 0x80000), i_type(-1, 0, 0, 4, 0x13),
                             i_type(0, 0, 0, 5, 0x13), i_type(7, 0, 0, 6, 0x13)};
  int slot = 0;
  for (uint32_t a : {3u, 4u, 5u, 6u}) {
    for (uint32_t b : {3u, 4u, 5u, 6u}) {
      for (uint32_t f3 = 0; f3 < 4; ++f3) {
        p.push_back(r_type(1, b, a, f3, 7, 0x33));
        p.push_back(s_type(4 * (slot++ % 256), 7, 1, 2));
      }
    }
  }
  p.push_back(0);
  check<Vnasa_mcu_cpu>(p, 9, "multiply special cases", kCore);
}

}  // namespace
