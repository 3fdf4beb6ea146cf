// rtl/nasa_wbuf.sv alone (Cols 16 banks of Depth 16384 bytes, MemBytes 32) against a byte model
// of the banks: row writes (one whole word of one bank), scatter writes (byte l of the data to
// byte `waddr` of bank l, the depthwise taps) and dealt row writes (a K-split tile's rows over f = 2
// or 4 bank groups: data bytes k*f + g to MemBytes/f bytes at `waddr` of bank g*Cols/f + row) in
// random mixes, and every cycle a read at a random
// byte address: one cycle later rdata_o holds byte `raddr` of every bank as it was before that
// cycle's write (a read and a write of the same word in one cycle read the old data).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "Vnasa_wbuf.h"
#include "nasa/sim/vbench.h"

namespace {

using nasa::sim::Bench;

constexpr uint32_t kCols = 16, kMemBytes = 32, kDepth = 16384;  // the RTL's defaults

class WbufBench {
 public:
  explicit WbufBench(uint64_t seed)
      : b_("nasa_wbuf", seed), banks_(kCols, std::vector<uint8_t>(kDepth, 0)) {
    b_->we_i = 0;
    b_->scatter_i = 0;
    b_->ks_i = 0;
    // the RAM has no reset (its power-up contents follow NASA_X_SEED): write every word once so
    // the model knows the contents; the reads meanwhile return what was there, unchecked
    for (uint32_t bank = 0; bank < kCols; ++bank) {
      for (uint32_t a = 0; a < kDepth; a += kMemBytes) cycle(1, bank, a, 0, /*check=*/false);
    }
  }

  // One cycle: an optional write (kind 1 row, 2 scatter, 3 / 4 dealt over 2 / 4 groups) and a
  // read at raddr; checks the read (one cycle later) unless `check` is false.
  void cycle(int write_kind, uint32_t bank, uint32_t waddr, uint32_t raddr, bool check = true) {
    auto& r = b_.rng();
    std::vector<uint8_t> data(kMemBytes);
    r.fill(data);
    b_->we_i = write_kind != 0;
    b_->scatter_i = write_kind == 2;
    const uint32_t f = write_kind == 3 ? 2 : (write_kind == 4 ? 4 : 1);
    b_->ks_i = f == 4 ? 2 : (f == 2 ? 1 : 0);
    b_->wbank_i = static_cast<uint8_t>(bank);
    b_->waddr_i = static_cast<uint16_t>(waddr);
    nasa::sim::to_port(data, b_->wdata_i);
    b_->raddr_i = static_cast<uint16_t>(raddr);
    // what the read of this cycle returns: the banks before this cycle's write
    std::vector<uint8_t> want(kCols);
    for (uint32_t c = 0; c < kCols; ++c) want[c] = banks_[c][raddr];
    if (write_kind == 1) {
      for (uint32_t i = 0; i < kMemBytes; ++i) banks_[bank][waddr + i] = data[i];
    } else if (write_kind == 2) {
      for (uint32_t c = 0; c < kCols; ++c) banks_[c][waddr] = data[c];
    } else if (write_kind >= 3) {
      for (uint32_t g = 0; g < f; ++g) {
        for (uint32_t k = 0; k < kMemBytes / f; ++k) {
          banks_[g * kCols / f + bank][waddr + k] = data[k * f + g];
        }
      }
    }
    b_.tick();
    const auto got = nasa::sim::port_bytes(b_->rdata_o, kCols);
    for (uint32_t c = 0; c < kCols && check; ++c) {
      if (got[c] != want[c] && bad_++ < 10) {
        ADD_FAILURE() << fmt::format("cycle {}: read {:#x} bank {}: RTL {:#04x} expected {:#04x}",
                                     b_.cycle(), raddr, c, got[c], want[c]);
      }
    }
  }

  int failures() const { return bad_; }
  nasa::sim::Random& rng() { return b_.rng(); }

 private:
  Bench<Vnasa_wbuf> b_;
  std::vector<std::vector<uint8_t>> banks_;
  int bad_ = 0;
};

TEST(WbufRtl, RandomRowAndScatterWritesAndReads) {
  const uint32_t seed = nasa::sim::test_seed("rtlunit_wbuf random", 31337);
  WbufBench w(seed);
  auto& r = w.rng();
  // reads near recent writes half of the time (same word, read-during-write included)
  uint32_t last = 0;
  for (uint64_t i = 0, n = nasa::sim::iterations(200000); i < n && w.failures() == 0; ++i) {
    const int kind = static_cast<int>(r.uniform(0, 4));
    const uint32_t f = kind == 3 ? 2 : (kind == 4 ? 4 : 1);
    const auto bank = static_cast<uint32_t>(r.uniform(0, kCols / f - 1));
    uint32_t waddr = static_cast<uint32_t>(r.uniform(0, kDepth - 1));
    if (kind != 2) waddr &= ~(kMemBytes / f - 1);
    const uint32_t raddr = r.chance(50) ? static_cast<uint32_t>(r.uniform(0, kDepth - 1))
                                        : (last & ~(kMemBytes - 1)) + static_cast<uint32_t>(r.uniform(0, kMemBytes - 1));
    w.cycle(kind, bank, waddr, raddr);
    if (kind != 0) last = waddr;
  }
  EXPECT_EQ(w.failures(), 0);
}

// A tile the way the loader writes it: Conv rows, one bank after another, then read back byte
// by byte as the PE array steps through the reduction; depthwise taps scattered, then read.
TEST(WbufRtl, TileWrittenThenReadInOrder) {
  WbufBench w(5);
  const uint32_t base = kDepth - 2 * kMemBytes;  // a tile that wraps around the ring's end
  for (uint32_t bank = 0; bank < kCols; ++bank) {
    w.cycle(1, bank, base, 0);
    w.cycle(1, bank, base + kMemBytes, 0);
    w.cycle(1, bank, 0, 0);
  }
  for (uint32_t k = 0; k < 3 * kMemBytes; ++k) w.cycle(0, 0, 0, (base + k) % kDepth);
  for (uint32_t t = 0; t < 49; ++t) w.cycle(2, 0, 1000 + t, 0);
  for (uint32_t t = 0; t < 49; ++t) w.cycle(0, 0, 0, 1000 + t);
  EXPECT_EQ(w.failures(), 0);
}

}  // namespace
