// rtl/nasa_dot8.sv, the lane group of the board's MAC array (four SB_MAC16 in their 8x8 mode, one
// operand row held against a stream of rows), as the board builds it (the DSPs simulated by
// Yosys's own model of the primitive, cells_sim.v) and in fabric, side by side
// (tb/rtl/nasa_dot8_pair.sv): every enabled cycle's sum is the exact dot product of the held row
// and that cycle's row, 3 cycles later, whatever the pattern of loads and idle cycles.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <deque>

#include "Vnasa_dot8_pair.h"
#include "nasa/sim/vbench.h"

namespace {

using nasa::sim::Bench;
using Row = std::array<int8_t, 8>;
constexpr uint64_t kLatency = 3;  // clock edges from the one taking the operands to valid_o

uint64_t pack(const Row& r) {
  uint64_t v = 0;
  for (int k = 0; k < 8; ++k) v |= uint64_t{static_cast<uint8_t>(r[k])} << (8 * k);
  return v;
}

int32_t dot(const Row& a, const Row& b) {
  int32_t s = 0;
  for (int k = 0; k < 8; ++k) s += int32_t{a[k]} * int32_t{b[k]};
  return s;
}

int32_t int19(uint32_t v) { return static_cast<int32_t>(v << 13) >> 13; }

class Pair {
 public:
  Pair() : b_("nasa_dot8_pair", 1) {
    b_->rst_ni = 0;
    b_->en_i = 0;
    b_.tick();
    b_->rst_ni = 1;
    b_.settle();
  }
  // One cycle: b against the held row (load: a becomes the held row first), or idle.
  void step(bool en, bool load, const Row& a, const Row& b) {
    b_->en_i = en;
    b_->load_i = load;
    b_->a_i = pack(a);
    b_->b_i = pack(b);
    b_.tick();
    ++cycle_;
    if (en) {
      if (load) held_ = a;
      flight_.push_back({dot(held_, b), cycle_ + kLatency});
    }
    EXPECT_EQ(static_cast<bool>(b_->dsp_valid_o), static_cast<bool>(b_->fabric_valid_o));
    if (b_->dsp_valid_o) {
      ASSERT_FALSE(flight_.empty()) << "valid_o at cycle " << cycle_ << " with nothing in flight";
      const auto [want, due] = flight_.front();
      flight_.pop_front();
      EXPECT_EQ(due, cycle_) << "latency";
      ASSERT_EQ(int19(b_->dsp_sum_o), want) << "SB_MAC16, cycle " << cycle_;
      ASSERT_EQ(int19(b_->fabric_sum_o), want) << "fabric, cycle " << cycle_;
      ++checked_;
    } else if (!flight_.empty()) {
      ASSERT_LT(cycle_, flight_.front().second) << "a sum due and not given";
    }
  }
  void drain() {
    for (uint64_t i = 0; i < kLatency; ++i) step(false, false, {}, {});
    EXPECT_TRUE(flight_.empty());
  }
  uint64_t checked() const { return checked_; }

 private:
  Bench<Vnasa_dot8_pair> b_;
  Row held_{};
  std::deque<std::pair<int32_t, uint64_t>> flight_;  // expected sums and their cycle
  uint64_t cycle_ = 0, checked_ = 0;
};

// Random rows, loads and idle cycles (the first enabled cycle loads: nothing is held before).
TEST(DotEight, EverySumIsTheExactDotProductOfTheHeldAndStreamedRows) {
  Pair p;
  nasa::sim::Random r(nasa::sim::test_seed("DotEight.Random", 3));
  const uint64_t n = nasa::sim::iterations(100000);
  bool loaded = false;
  uint64_t enabled = 0;
  for (uint64_t i = 0; i < n; ++i) {
    Row a, b;
    for (auto& x : a) x = static_cast<int8_t>(r());
    for (auto& x : b) x = static_cast<int8_t>(r());
    const bool en = r.chance(85);
    const bool load = !loaded || r.chance(20);
    loaded = loaded || (en && load);
    enabled += en;
    p.step(en, load, a, b);
    if (::testing::Test::HasFailure()) return;
  }
  p.drain();
  EXPECT_EQ(p.checked(), enabled);
}

// The extremes: every element -128 or 127 against -128 or 127 (the sum's largest magnitudes,
// 8 x 16384 = 131072 and -8 x 16256), back to back.
TEST(DotEight, ExtremeRowsAreExact) {
  Pair p;
  const int8_t ends[] = {-128, 127, 0, -1};
  for (int8_t x : ends) {
    for (int8_t y : ends) {
      Row a, b;
      a.fill(x);
      b.fill(y);
      p.step(true, true, a, b);
      b[3] = static_cast<int8_t>(-y);  // and one element of the other sign
      p.step(true, false, a, b);
      if (::testing::Test::HasFailure()) return;
    }
  }
  p.drain();
  EXPECT_EQ(p.checked(), 32u);
}

}  // namespace
