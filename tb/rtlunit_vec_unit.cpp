// rtl/nasa_vec_unit.sv alone (16 lanes) against the reference model: whole MaxPool, AvgPool, Gap
// and Add layers of 16 channels are fed to the unit tap by tap the way the engine does (one output
// pixel per tile, one window tap per enabled cycle, taps outside the image zero and not valid),
// with random idle cycles (en_i low) between taps; every pixel's 32-bit lane results must equal
// the formula (sum, max from -128, requant(a, M, S) + requant(b, Mb, Sb)), and after the drain's
// rule (requant for sums, saturate for max/add, then the activation) every output byte must equal
// nasa::ref::execute of the same layer.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "Vnasa_vec_unit.h"
#include "nasa/desc.h"
#include "nasa/hw_spec.h"
#include "nasa/refmodel.h"
#include "nasa/sim/vbench.h"

namespace {

using nasa::Desc;
using nasa::hw::Op;
using nasa::sim::Bench;

constexpr int kLanes = 16;  // the RTL's default
constexpr uint8_t kModeSum = 1, kModeMax = 2, kModeAdd = 3;

// requant(x, M, S) = (x*M + 2^(S-1)) >> S, exact (docs/engine.md "Numerics")
int64_t rq(int64_t x, uint32_t m, uint32_t s) {
  return (x * int64_t{m} + (int64_t{1} << (s - 1))) >> s;
}

class VecBench {
 public:
  explicit VecBench(uint64_t seed) : b_("nasa_vec_unit", seed) {
    b_->en_i = 0;
    b_->mode_i = kModeSum;
    b_->first_i = 0;
    b_->last_i = 0;
    b_.reset(2);
  }
  Bench<Vnasa_vec_unit>& bench() { return b_; }

  // One tap; random idle cycles (en_i low, inputs scrambled) before it.
  void tap(uint8_t mode, bool first, bool last, const std::vector<int8_t>& x,
           const std::vector<bool>& valid, const Desc& d) {
    while (b_.rng().chance(20)) {
      b_->en_i = 0;
      b_->mode_i = static_cast<uint8_t>(b_.rng().uniform(1, 3));
      b_->first_i = b_.rng().chance(50);
      b_->last_i = b_.rng().chance(50);
      std::vector<uint8_t> junk(kLanes);
      b_.rng().fill(junk);
      nasa::sim::to_port(junk, b_->x_i);
      b_.tick();
    }
    b_->en_i = 1;
    b_->mode_i = mode;
    b_->first_i = first;
    b_->last_i = last;
    uint16_t v = 0;
    std::vector<uint8_t> bytes(kLanes);
    for (int l = 0; l < kLanes; ++l) {
      bytes[l] = static_cast<uint8_t>(x[l]);
      if (valid[l]) v = static_cast<uint16_t>(v | (1u << l));
    }
    nasa::sim::to_port(bytes, b_->x_i);
    b_->valid_i = v;
    b_->m_i = d.m;
    b_->s_i = d.s;
    b_->mb_i = d.mb;
    b_->sb_i = d.sb;
    b_.tick();
    b_->en_i = 0;
  }

  std::vector<int32_t> result() {
    b_.settle();
    const auto bytes = nasa::sim::port_bytes(b_->res_o, kLanes * 4);
    std::vector<int32_t> r(kLanes);
    std::memcpy(r.data(), bytes.data(), bytes.size());
    return r;
  }

 private:
  Bench<Vnasa_vec_unit> b_;
};

struct Layer {
  Desc d;
  std::vector<uint8_t> mem;  // in at 0, in2 after it, out after that
};

Layer make_layer(nasa::sim::Random& r, Op op) {
  Layer L;
  Desc& d = L.d;
  d.op = static_cast<uint8_t>(op);
  d.act = static_cast<uint8_t>(r.uniform(0, 2));
  d.q6 = static_cast<uint8_t>(r.uniform(0, 127));
  d.k = 3;
  d.stride = static_cast<uint8_t>(r.uniform(1, 2));
  static const uint16_t sizes[] = {1, 2, 3, 4, 5, 7, 8};
  d.h = sizes[r.uniform(0, 6)];
  d.w = sizes[r.uniform(0, 6)];
  d.cin = d.cout = kLanes;
  if (op == Op::Add || op == Op::Gap) d.stride = 1;
  // M, S: edge values now and then, else so that typical outputs neither vanish nor saturate
  const bool edge = r.chance(15);
  d.m = static_cast<uint16_t>(edge ? (r.chance(50) ? 65535 : r.uniform(0, 1)) : r.uniform(1, 65535));
  d.s = static_cast<uint8_t>(edge ? (r.chance(50) ? 1 : r.uniform(26, 47)) : r.uniform(8, 26));
  d.mb = static_cast<uint16_t>(r.uniform(0, 65535));
  d.sb = static_cast<uint8_t>(r.chance(15) ? r.uniform(26, 47) : r.uniform(1, 25));
  const uint32_t in_bytes = uint32_t{d.h} * d.w * kLanes;
  d.in_addr = 0;
  d.in2_addr = in_bytes;
  d.out_addr = 2 * in_bytes;
  L.mem.assign(3 * in_bytes + 64, 0);
  // activations: signed uniform, ReLU-like, or extremes
  const uint64_t kind = r.uniform(0, 2);
  for (uint32_t i = 0; i < 2 * in_bytes; ++i) {
    int v = static_cast<int>(r.uniform(0, 255)) - 128;
    if (kind == 1) v = r.chance(50) ? 0 : std::abs(v) / 2;
    if (kind == 2) v = r.chance(50) ? -128 : 127;
    L.mem[i] = static_cast<uint8_t>(v);
  }
  return L;
}

// Feeds the layer to the unit and checks every pixel's lanes and output bytes.
void run_layer(VecBench& vb, Layer& L) {
  const Desc& d = L.d;
  const auto op = static_cast<Op>(d.op);
  std::vector<uint8_t> want_mem = L.mem;
  nasa::ref::execute(d, want_mem);
  const int32_t H = d.h, W = d.w, st = d.stride;
  const int32_t Ho = op == Op::Gap ? 1 : (H + st - 1) / st, Wo = op == Op::Gap ? 1 : (W + st - 1) / st;
  auto in = [&](uint32_t base, int32_t y, int32_t x, int l) {
    return static_cast<int8_t>(L.mem[base + (uint32_t(y) * W + uint32_t(x)) * kLanes + l]);
  };
  SCOPED_TRACE(fmt::format("op {} H {} W {} stride {} M {} S {} Mb {} Sb {} act {} q6 {}",
                           nasa::op_name(d.op), d.h, d.w, d.stride, d.m, d.s, d.mb, d.sb, d.act,
                           d.q6));
  int bad = 0;
  for (int32_t oy = 0; oy < Ho; ++oy) {
    for (int32_t ox = 0; ox < Wo; ++ox) {
      std::vector<int64_t> want(kLanes, 0);
      std::vector<int8_t> x(kLanes);
      std::vector<bool> valid(kLanes);
      if (op == Op::Add) {
        for (int l = 0; l < kLanes; ++l) x[l] = in(d.in_addr, oy, ox, l);
        vb.tap(kModeAdd, true, false, x, std::vector<bool>(kLanes, true), d);
        for (int l = 0; l < kLanes; ++l) want[l] = rq(x[l], d.m, d.s);
        for (int l = 0; l < kLanes; ++l) x[l] = in(d.in2_addr, oy, ox, l);
        vb.tap(kModeAdd, false, true, x, std::vector<bool>(kLanes, true), d);
        for (int l = 0; l < kLanes; ++l) want[l] += rq(x[l], d.mb, d.sb);
      } else if (op == Op::Gap) {
        for (int32_t p = 0; p < H * W; ++p) {
          for (int l = 0; l < kLanes; ++l) {
            x[l] = in(d.in_addr, p / W, p % W, l);
            want[l] += x[l];
          }
          vb.tap(kModeSum, p == 0, p == H * W - 1, x, std::vector<bool>(kLanes, true), d);
        }
      } else {
        const bool is_max = op == Op::MaxPool;
        for (int l = 0; l < kLanes; ++l) want[l] = is_max ? -128 : 0;
        for (int t = 0; t < 9; ++t) {
          const int32_t iy = oy * st - 1 + t / 3, ix = ox * st - 1 + t % 3;
          const bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
          for (int l = 0; l < kLanes; ++l) {
            x[l] = inside ? in(d.in_addr, iy, ix, l) : int8_t{0};
            valid[l] = inside;
            if (is_max && inside) want[l] = std::max<int64_t>(want[l], x[l]);
            if (!is_max) want[l] += x[l];
          }
          vb.tap(is_max ? kModeMax : kModeSum, t == 0, t == 8, x, valid, d);
        }
      }
      const std::vector<int32_t> got = vb.result();
      for (int l = 0; l < kLanes; ++l) {
        // the lane's 32-bit result, then the drain's rule, then the reference layer's byte
        if (got[l] != static_cast<int32_t>(want[l]) && bad++ < 8) {
          ADD_FAILURE() << fmt::format("pixel ({},{}) lane {}: RTL {} expected {}", oy, ox, l,
                                       got[l], want[l]);
        }
        const int8_t y = (op == Op::AvgPool || op == Op::Gap)
                             ? nasa::ref::activate(nasa::ref::requant(got[l], d.m, d.s), d.act, d.q6)
                             : nasa::ref::activate(got[l], d.act, d.q6);
        const auto ref = static_cast<int8_t>(
            want_mem[d.out_addr + (uint32_t(oy) * Wo + uint32_t(ox)) * kLanes + l]);
        if (y != ref && bad++ < 8) {
          ADD_FAILURE() << fmt::format("pixel ({},{}) lane {}: output {} reference {}", oy, ox, l,
                                       y, ref);
        }
      }
      if (bad >= 8) return;
    }
  }
}

void run_op(Op op, uint32_t default_seed, uint64_t layers) {
  const uint32_t seed =
      nasa::sim::test_seed(fmt::format("rtlunit_vec_unit {}", nasa::op_name(static_cast<uint8_t>(op))),
                           default_seed);
  VecBench vb(seed);
  nasa::sim::Random r(seed ^ 0x5EED);
  for (uint64_t i = 0, n = nasa::sim::iterations(layers); i < n; ++i) {
    Layer L = make_layer(r, op);
    run_layer(vb, L);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(VecUnitRtl, MaxPoolMatchesReference) { run_op(Op::MaxPool, 101, 60); }
TEST(VecUnitRtl, AvgPoolMatchesReference) { run_op(Op::AvgPool, 202, 60); }
TEST(VecUnitRtl, GapMatchesReference) { run_op(Op::Gap, 303, 60); }
TEST(VecUnitRtl, AddMatchesReference) { run_op(Op::Add, 404, 60); }

// Idle cycles between taps keep the accumulators, and the shadow result only changes on a last
// tap: a pixel's result stays while the next pixel accumulates.
TEST(VecUnitRtl, ResultHeldWhileNextPixelAccumulates) {
  VecBench vb(7);
  Desc d;
  d.m = 1;
  d.s = 1;
  const std::vector<bool> all(kLanes, true);
  std::vector<int8_t> x(kLanes);
  for (int l = 0; l < kLanes; ++l) x[l] = static_cast<int8_t>(l - 8);
  vb.tap(kModeSum, true, false, x, all, d);
  vb.tap(kModeSum, false, true, x, all, d);
  const auto first = vb.result();
  for (int l = 0; l < kLanes; ++l) ASSERT_EQ(first[l], 2 * (l - 8));
  vb.tap(kModeMax, true, false, x, all, d);
  EXPECT_EQ(vb.result(), first) << "the shadow result changed before the next last tap";
  vb.tap(kModeMax, false, true, x, all, d);
  for (int l = 0; l < kLanes; ++l) EXPECT_EQ(vb.result()[l], l - 8);
}

}  // namespace
