// rtl/nasa_in_buf.sv through tb/rtl/nasa_in_buf_wide.sv (4 KB, 32-byte words, 4 read ports of 16
// bytes each, as the engine uses it) against a byte model: every cycle a random whole-word write
// and a random byte address per port; one cycle later each port holds the 16 bytes from its
// address (reads spanning two words included; bytes past the end of the buffer are not part of the
// contract) as they were before that cycle's write (read-during-write returns the old data).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "Vnasa_in_buf_wide.h"
#include "nasa/sim/vbench.h"

namespace {

using nasa::sim::Bench;

constexpr uint32_t kBytes = 4096, kMemBytes = 32, kPorts = 4, kWidth = 16, kAW = 12;

TEST(InBufRtl, WideReadsAtAnyAddressWithWrites) {
  const uint32_t seed = nasa::sim::test_seed("rtlunit_in_buf_wide random", 99);
  Bench<Vnasa_in_buf_wide> b("nasa_in_buf_wide", seed);
  auto& r = b.rng();
  std::vector<uint8_t> mem(kBytes, 0);
  // the RAM has no reset: write every word first
  for (uint32_t a = 0; a < kBytes; a += kMemBytes) {
    std::vector<uint8_t> w(kMemBytes);
    r.fill(w);
    b->we_i = 1;
    b->waddr_i = static_cast<uint16_t>(a);
    nasa::sim::to_port(w, b->wdata_i);
    b.tick();
    std::copy(w.begin(), w.end(), mem.begin() + a);
  }
  int bad = 0;
  uint32_t last_w = 0;
  std::vector<uint8_t> w(kMemBytes);
  std::vector<uint32_t> ra(kPorts);
  for (uint64_t i = 0, n = nasa::sim::iterations(100000); i < n && bad < 10; ++i) {
    r.fill(w);
    const bool we = r.chance(50);
    const uint32_t waddr = static_cast<uint32_t>(r.uniform(0, kBytes / kMemBytes - 1)) * kMemBytes;
    b->we_i = we;
    b->waddr_i = static_cast<uint16_t>(waddr);
    nasa::sim::to_port(w, b->wdata_i);
    uint64_t raddr = 0;
    for (uint32_t p = 0; p < kPorts; ++p) {
      // near the last write half of the time (read-during-write, word spans)
      ra[p] = r.chance(50) ? static_cast<uint32_t>(r.uniform(0, kBytes - 1))
                           : (last_w + static_cast<uint32_t>(r.uniform(0, 2 * kMemBytes))) % kBytes;
      raddr |= uint64_t{ra[p]} << (p * kAW);
    }
    b->raddr_i = raddr;
    b.tick();
    const auto got = nasa::sim::port_bytes(b->rdata_o, kPorts * kWidth);
    for (uint32_t p = 0; p < kPorts; ++p) {
      for (uint32_t k = 0; k < kWidth && ra[p] + k < kBytes; ++k) {
        const uint8_t want = mem[ra[p] + k];  // reads see the memory before this cycle's write
        if (got[p * kWidth + k] != want && bad++ < 10) {
          ADD_FAILURE() << fmt::format("cycle {} port {} address {:#x} byte {}: {:#04x}, expected {:#04x}",
                                       b.cycle(), p, ra[p], k, got[p * kWidth + k], want);
        }
      }
    }
    if (we) {
      std::copy(w.begin(), w.end(), mem.begin() + waddr);
      last_w = waddr;
    }
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
