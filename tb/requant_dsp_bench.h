// The bench of rtl/nasa_requant_dsp.sv, the requantization of the board's MAC array through DSPs,
// as the board builds it (SB_MAC16 in its unsigned 16x16 mode, simulated by Yosys's own model of
// the primitive, cells_sim.v) and in fabric, side by side (a tb/rtl/ wrapper with both): every
// result equals the reference model's requantization and activation clamp (nasa::ref::requant,
// nasa::ref::activate), `latency` cycles after the unit took its input, at the unit's input rate
// (an input every cycle with Dual = 1, every other cycle without). Used by
// tb/rtlunit_requant_dsp_pair.cpp (one DSP) and tb/rtlunit_requant_dsp_dual_pair.cpp (two);
// include after the Verilated wrapper's header.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <limits>
#include <string>

#include "nasa/hw_spec.h"
#include "nasa/refmodel.h"
#include "nasa/sim/vbench.h"

namespace requant_dsp_bench {

using nasa::sim::Bench;

struct In {
  int32_t v = 0;
  uint16_t m = 0;
  uint8_t s = 1;
  nasa::hw::Act act = nasa::hw::Act::None;
  uint8_t q6 = 0;
};

inline int8_t expected(const In& x) {
  return nasa::ref::activate(nasa::ref::requant(x.v, x.m, x.s), static_cast<uint8_t>(x.act), x.q6);
}

// The clamp interval the unit takes for an activation (the reference's activate()).
inline std::pair<int8_t, int8_t> interval(const In& x) {
  switch (x.act) {
    case nasa::hw::Act::Relu:
      return {0, 127};
    case nasa::hw::Act::Relu6:
      return {0, static_cast<int8_t>(x.q6)};
    default:
      return {-128, 127};
  }
}

// The wrapper V (ports of tb/rtl/nasa_requant_dsp_pair.sv) with its unit's latency.
template <class V>
class Pair {
 public:
  Pair(const char* top, int latency) : b_(top, 1), latency_(latency) {
    b_->rst_ni = 0;
    b_->valid_i = 0;
    b_.tick();
    b_.tick();
    b_->rst_ni = 1;
    b_.settle();
  }
  // Offers `x` (or nothing) for one cycle; returns whether the unit took it. Checks every result
  // that comes out against the inputs in flight, both units alike.
  bool step(const In* x) {
    const bool ready = b_->dsp_ready_o;
    EXPECT_EQ(ready, static_cast<bool>(b_->fabric_ready_o)) << "cycle " << cycle_;
    b_->valid_i = x != nullptr;
    if (x) {
      const auto [lo, hi] = interval(*x);
      b_->v_i = static_cast<uint32_t>(x->v);
      b_->m_i = x->m;
      b_->s_i = x->s;
      b_->lo_i = static_cast<uint8_t>(lo);
      b_->hi_i = static_cast<uint8_t>(hi);
    }
    b_.tick();
    ++cycle_;
    const bool took = x && ready;
    if (took) flight_.push_back({*x, cycle_ + latency_});
    EXPECT_EQ(static_cast<bool>(b_->dsp_valid_o), static_cast<bool>(b_->fabric_valid_o));
    if (b_->dsp_valid_o) {
      if (flight_.empty()) {
        ADD_FAILURE() << "valid_o at cycle " << cycle_ << " with nothing in flight";
        return took;
      }
      const auto [in, due] = flight_.front();
      flight_.pop_front();
      EXPECT_EQ(due, cycle_) << "latency";
      const int8_t want = expected(in);
      EXPECT_EQ(static_cast<int8_t>(b_->dsp_y_o), want)
          << "SB_MAC16: v=" << in.v << " M=" << in.m << " S=" << int{in.s}
          << " act=" << static_cast<int>(in.act) << " q6=" << int{in.q6};
      EXPECT_EQ(static_cast<int8_t>(b_->fabric_y_o), want)
          << "fabric: v=" << in.v << " M=" << in.m << " S=" << int{in.s};
      ++checked_;
    } else if (!flight_.empty()) {
      EXPECT_LT(cycle_, flight_.front().second) << "result due and not given";
    }
    return took;
  }
  void drain() {
    for (uint64_t i = 0; i < latency_ + 1; ++i) step(nullptr);
    EXPECT_TRUE(flight_.empty());
  }
  uint64_t checked() const { return checked_; }

 private:
  Bench<V> b_;
  uint64_t latency_;
  std::deque<std::pair<In, uint64_t>> flight_;  // taken inputs and the cycle of their result
  uint64_t cycle_ = 0, checked_ = 0;
};

inline In random_in(nasa::sim::Random& r) {
  In x;
  // accumulators of every magnitude, the int32 extremes among them
  const int bits = static_cast<int>(r.uniform(0, 32));
  const uint32_t raw = static_cast<uint32_t>(r());
  x.v = bits == 32
            ? static_cast<int32_t>(raw)
            : static_cast<int32_t>(raw & ((uint32_t{1} << bits) - 1)) * (r.uniform(0, 1) ? -1 : 1);
  if (r.uniform(0, 49) == 0) {
    x.v =
        r.uniform(0, 1) ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max();
  }
  x.m = static_cast<uint16_t>(r.uniform(0, 7) == 0 ? (r.uniform(0, 1) ? 0xFFFF : r.uniform(0, 3))
                                                   : r());
  x.s = static_cast<uint8_t>(1 + r.uniform(0, nasa::hw::kMaxShift - 1));
  x.act = static_cast<nasa::hw::Act>(r.uniform(0, 2));
  x.q6 = static_cast<uint8_t>(r.uniform(0, 127));
  return x;
}

// Inputs offered every cycle: the unit takes one every `every` cycles (1 or 2), and every result
// is exact.
template <class V>
void back_to_back(const char* top, int latency, uint64_t every, const std::string& seed_name) {
  Pair<V> p(top, latency);
  nasa::sim::Random r(nasa::sim::test_seed(seed_name, 11));
  const uint64_t n = nasa::sim::iterations(200000);
  uint64_t offered = 0, taken = 0;
  In x = random_in(r);
  while (taken < n) {
    ++offered;
    if (p.step(&x)) {
      ++taken;
      x = random_in(r);
    }
    if (::testing::Test::HasFailure()) return;
  }
  p.drain();
  EXPECT_EQ(p.checked(), n);
  EXPECT_EQ(offered, every * (n - 1) + 1);  // with every = 2: taken, refused, taken, ...
}

// Inputs at random moments, with the corners of every operand: S = 1 and 47, M = 0 and 65535,
// the int32 extremes, each activation.
template <class V>
void irregular(const char* top, int latency, const std::string& seed_name) {
  Pair<V> p(top, latency);
  nasa::sim::Random r(nasa::sim::test_seed(seed_name, 5));
  const int32_t vs[] = {0,
                        1,
                        -1,
                        std::numeric_limits<int32_t>::min(),
                        std::numeric_limits<int32_t>::max(),
                        0x8000,
                        -0x8000,
                        0xFFFF,
                        -0x10000};
  const uint16_t ms[] = {0, 1, 0x8000, 0xFFFF};
  const uint8_t ss[] = {1, 2, 15, 16, 31, 32, 46, 47};
  std::deque<In> todo;
  for (int32_t v : vs) {
    for (uint16_t m : ms) {
      for (uint8_t s : ss) {
        for (int a = 0; a < 3; ++a) todo.push_back({v, m, s, static_cast<nasa::hw::Act>(a), 6});
      }
    }
  }
  for (uint64_t i = 0; i < nasa::sim::iterations(20000); ++i) todo.push_back(random_in(r));
  const size_t n = todo.size();
  while (!todo.empty()) {
    if (r.uniform(0, 2) == 0) {
      p.step(nullptr);
    } else if (p.step(&todo.front())) {
      todo.pop_front();
    }
    if (::testing::Test::HasFailure()) return;
  }
  p.drain();
  EXPECT_EQ(p.checked(), n);
}

}  // namespace requant_dsp_bench
