// rtl/nasa_mac8x2.sv, the board's two-products-a-cycle multiplier, as the board builds it (one
// SB_MAC16 in its 8x8 mode, simulated by Yosys's own model of the primitive, cells_sim.v) and in
// fabric, side by side (tb/rtl/nasa_mac8x2_pair.sv): every pair of int8 operands in both halves
// gives the exact signed product on both, two enabled cycles later, a low clock enable holds
// both pipeline stages, and a held A operand meets every B streamed against it.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>

#include "Vnasa_mac8x2_pair.h"
#include "nasa/sim/vbench.h"

namespace {

using nasa::sim::Bench;

uint32_t products(uint16_t a, uint16_t b) {
  const auto hi = static_cast<int16_t>(static_cast<int8_t>(a >> 8) * static_cast<int8_t>(b >> 8));
  const auto lo = static_cast<int16_t>(static_cast<int8_t>(a) * static_cast<int8_t>(b));
  return static_cast<uint32_t>(static_cast<uint16_t>(hi)) << 16 | static_cast<uint16_t>(lo);
}

// Drives (a, b, en) a cycle each and checks both outputs against the model: the operands of the
// last two enabled cycles are in the pipeline; the output is the product of the older one.
class Pair {
 public:
  Pair() : b_("nasa_mac8x2_pair", 1) {
    b_->en_i = 0;
    b_->a_i = 0;
    b_->b_i = 0;
    b_.settle();
  }
  // hold: the A register keeps its operand (a is not taken).
  void step(uint16_t a, uint16_t w, bool en, bool hold = false) {
    b_->a_i = a;
    b_->b_i = w;
    b_->en_i = en;
    b_->a_hold_i = hold;
    b_.tick();
    if (en) {
      if (!hold) a_reg_ = a;
      stages_.push_back(products(a_reg_, w));
      if (stages_.size() > 2) stages_.pop_front();
    }
    if (stages_.size() == 2 && filled_ >= 2) {
      ASSERT_EQ(b_->dsp_o, stages_.front()) << "SB_MAC16 after a=" << a << " b=" << w;
      ASSERT_EQ(b_->fabric_o, stages_.front()) << "fabric after a=" << a << " b=" << w;
    }
    if (en) ++filled_;
    ++checked_;
  }
  uint64_t checked() const { return checked_; }

 private:
  Bench<Vnasa_mac8x2_pair> b_;
  std::deque<uint32_t> stages_;  // the products of the last two enabled cycles, oldest first
  uint16_t a_reg_ = 0;           // the A register's operand
  uint64_t filled_ = 0, checked_ = 0;
};

// Every (a, b) of int8 in the low half, the top half running the same pairs in another order.
TEST(MacEightByTwo, EveryInt8PairIsExactOnTheDspAndInFabric) {
  Pair p;
  for (uint32_t a = 0; a < 256; ++a) {
    for (uint32_t b = 0; b < 256; ++b) {
      const uint32_t ta = (b * 37 + a) & 0xFF, tb = (a * 101 + b * 3) & 0xFF;
      p.step(static_cast<uint16_t>(ta << 8 | a), static_cast<uint16_t>(tb << 8 | b), true);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  EXPECT_EQ(p.checked(), 65536u);
}

// The corners (-128 x -128 = 16384, -128 x 127, 0) with the clock enable dropped at random:
// held stages neither advance nor change.
TEST(MacEightByTwo, ClockEnableHoldsBothStages) {
  Pair p;
  std::mt19937 rng(7);
  const uint8_t corners[] = {0x80, 0x7F, 0x00, 0xFF, 0x01, 0x81};
  for (int i = 0; i < 20000; ++i) {
    auto pick = [&] {
      return rng() % 4 == 0 ? static_cast<uint8_t>(rng()) : corners[rng() % sizeof corners];
    };
    const auto a = static_cast<uint16_t>(pick() << 8 | pick());
    const auto b = static_cast<uint16_t>(pick() << 8 | pick());
    p.step(a, b, rng() % 3 != 0);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// A held against a stream of B operands (the MAC array's use: one pixel's channels against a
// stream of weight rows), the hold and the clock enable dropped at random.
TEST(MacEightByTwo, HeldOperandMeetsEveryStreamedOne) {
  Pair p;
  std::mt19937 rng(11);
  bool loaded = false;  // (holding before the first load would hold the power-up value)
  for (int i = 0; i < 50000; ++i) {
    const bool en = rng() % 5 != 0, hold = loaded && rng() % 4 != 0;
    loaded = loaded || (en && !hold);
    p.step(static_cast<uint16_t>(rng()), static_cast<uint16_t>(rng()), en, hold);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
