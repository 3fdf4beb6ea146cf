// The bench of rtl/nasa_dot_lanes.sv, the output-stationary lanes of the board's MAC array (six
// SB_MAC16 in their 8x8 mode, each with its own weights against activations shared by the groups,
// each group accumulating one output channel), as the board builds it (the DSPs simulated by
// Yosys's own model of the primitive, cells_sim.v) and in fabric, side by side (a tb/rtl/ wrapper
// with both): every dot product's sums are exact and leave the drain one a cycle from 5 cycles
// after its last step, whatever the lengths, idle cycles and back-to-back dot products; a last
// step the drain cannot take yet waits (ready_o). Used by tb/rtlunit_dot_lanes_pair.cpp (six
// groups of one DSP) and tb/rtlunit_dot_lanes_grouped_pair.cpp (three of two); include after the
// Verilated wrapper's header.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "nasa/sim/vbench.h"

namespace dot_lanes_bench {

using nasa::sim::Bench;
constexpr int kDsps = 6;
constexpr uint64_t kLatency = 5;  // cycles from a last step to its first sum on the drain

template <int G>
struct Step {
  std::array<int8_t, 2 * kDsps> w{};  // DSP d: w[2d], w[2d + 1]
  std::array<int8_t, 2 * G> x{};      // the j-th DSP of each group: x[2j], x[2j + 1]
};

int32_t int24(uint32_t v) { return static_cast<int32_t>(v << 8) >> 8; }

// The wrapper V (ports of tb/rtl/nasa_dot_lanes_pair.sv) with groups of G DSPs.
template <class V, int G>
class Pair {
 public:
  static constexpr int kSums = kDsps / G;
  explicit Pair(const char* top) : b_(top, 1) {
    b_->rst_ni = 0;
    b_->valid_i = 0;
    b_.tick();
    b_->rst_ni = 1;
    b_.settle();
  }
  // Offers a step (or nothing) for one cycle; returns whether it was taken.
  bool step(const Step<G>* s, bool first, bool last) {
    b_->valid_i = s != nullptr;
    b_->first_i = first;
    b_->last_i = last;
    if (s) {
      for (int k = 0; k < 3; ++k) {
        uint32_t word = 0;
        for (int j = 0; j < 4; ++j)
          word |= uint32_t{static_cast<uint8_t>(s->w[4 * k + j])} << (8 * j);
        b_->w_i[k] = word;
      }
      uint32_t x = 0;
      for (int j = 0; j < 2 * G; ++j) x |= uint32_t{static_cast<uint8_t>(s->x[j])} << (8 * j);
      b_->x_i = x;
    }
    b_.settle();  // (ready_o follows last_i)
    const bool ready = b_->dsp_ready_o;
    EXPECT_EQ(ready, static_cast<bool>(b_->fabric_ready_o)) << "cycle " << cycle_;
    b_.tick();
    ++cycle_;
    const bool took = s && ready;
    if (s && !ready) {
      EXPECT_TRUE(last) << "a step other than a last one refused, cycle " << cycle_;
    }
    if (took) {
      if (first) acc_.fill(0);
      for (int d = 0; d < kDsps; ++d) {
        const int j = d % G;
        acc_[d / G] +=
            int32_t{s->w[2 * d]} * s->x[2 * j] + int32_t{s->w[2 * d + 1]} * s->x[2 * j + 1];
      }
      if (last) {
        for (int g = 0; g < kSums; ++g) flight_.push_back({acc_[g], cycle_ + kLatency - 1 + g});
      }
    }
    EXPECT_EQ(static_cast<bool>(b_->dsp_valid_o), static_cast<bool>(b_->fabric_valid_o));
    if (b_->dsp_valid_o) {
      if (flight_.empty()) {
        ADD_FAILURE() << "a sum at cycle " << cycle_ << " with nothing in flight";
        return took;
      }
      const auto [want, due] = flight_.front();
      flight_.pop_front();
      EXPECT_EQ(due, cycle_) << "drain timing";
      EXPECT_EQ(int24(b_->dsp_sum_o), want) << "SB_MAC16, cycle " << cycle_;
      EXPECT_EQ(int24(b_->fabric_sum_o), want) << "fabric, cycle " << cycle_;
      ++checked_;
    } else if (!flight_.empty()) {
      EXPECT_LT(cycle_, flight_.front().second) << "sum due and not given";
    }
    return took;
  }
  void drain() {
    for (uint64_t i = 0; i < kLatency + kSums + 1; ++i) step(nullptr, false, false);
    EXPECT_TRUE(flight_.empty());
  }
  uint64_t checked() const { return checked_; }
  uint64_t cycle() const { return cycle_; }

 private:
  Bench<V> b_;
  std::array<int32_t, kSums> acc_{};
  std::deque<std::pair<int32_t, uint64_t>> flight_;  // sums and the cycle each is due
  uint64_t cycle_ = 0, checked_ = 0;
};

template <int G>
Step<G> random_step(nasa::sim::Random& r) {
  Step<G> s;
  for (auto& v : s.w) v = static_cast<int8_t>(r());
  for (auto& v : s.x) v = static_cast<int8_t>(r());
  return s;
}

// Runs dot products of the given lengths (steps), offering their steps with idle cycles drawn
// with probability idle/8; checks each sum. Returns the cycles taken.
template <class V, int G>
uint64_t run(Pair<V, G>& p, nasa::sim::Random& r, const std::vector<int>& lengths, int idle,
             const Step<G>* fixed = nullptr) {
  const uint64_t start = p.cycle();
  for (int n : lengths) {
    for (int i = 0; i < n; ++i) {
      const Step<G> s = fixed ? *fixed : random_step<G>(r);
      while (idle > 0 && static_cast<int>(r.uniform(0, 7)) < idle) p.step(nullptr, false, false);
      while (!p.step(&s, i == 0, i == n - 1)) {
        if (::testing::Test::HasFailure()) return 0;
      }
      if (::testing::Test::HasFailure()) return 0;
    }
  }
  p.drain();
  return p.cycle() - start;
}

// Dot products of random lengths (1 to 40 steps), with and without idle cycles between steps:
// every sum exact and on time.
template <class V, int G>
void random_dot_products(const char* top, const std::string& seed_name) {
  Pair<V, G> p(top);
  nasa::sim::Random r(nasa::sim::test_seed(seed_name, 3));
  const uint64_t n = nasa::sim::iterations(4000);
  for (int idle : {0, 3}) {
    std::vector<int> lengths(n);
    for (auto& l : lengths) l = static_cast<int>(r.uniform(1, 40));
    const uint64_t before = p.checked();
    run(p, r, lengths, idle);
    if (::testing::Test::HasFailure()) return;
    EXPECT_EQ(p.checked() - before, n * (Pair<V, G>::kSums));
  }
}

// Dot products of as many steps as sums, or more, run back to back: one step a cycle, no cycle
// lost to the drain; shorter ones wait for it (a last step at most every kSums cycles).
template <class V, int G>
void back_to_back(const char* top, const std::string& seed_name) {
  constexpr uint64_t kSums = Pair<V, G>::kSums, kTail = kLatency + kSums + 1;
  Pair<V, G> p(top);
  nasa::sim::Random r(nasa::sim::test_seed(seed_name, 4));
  const std::vector<int> just(500, kSums), long_ones(100, 24), one_step(200, 1);
  EXPECT_EQ(run(p, r, just, 0), 500u * kSums + kTail);
  EXPECT_EQ(run(p, r, long_ones, 0), 100u * 24 + kTail);
  // one step per dot product, a last step every kSums cycles
  EXPECT_EQ(run(p, r, one_step, 0), 200u * kSums - (kSums - 1) + kTail);
  EXPECT_EQ(p.checked(), (500u + 100u + 200u) * kSums);
}

// The largest sums: 256 input channels of -128 x -128 and of -128 x 127 on every product,
// +-2^22 in 24 bits.
template <class V, int G>
void extreme_sums(const char* top, const std::string& seed_name) {
  Pair<V, G> p(top);
  nasa::sim::Random r(nasa::sim::test_seed(seed_name, 5));
  Step<G> s;
  s.w.fill(-128);
  s.x.fill(-128);
  run(p, r, {128 / G}, 0, &s);
  s.x.fill(127);
  run(p, r, {128 / G}, 0, &s);
  EXPECT_EQ(p.checked(), 2u * (Pair<V, G>::kSums));
}

}  // namespace dot_lanes_bench
