// rtl/nasa_requant.sv alone (one combinational lane) against the reference model's requant and
// activation (nasa::ref::requant, nasa::ref::activate; docs/engine.md "Numerics"):
//   requant mode: y = act(sat8(((val + bias) * M + 2^(S-1)) >> S)), val + bias wrapping in int32
//   bypass mode:  y = act(sat8(val))
// for every edge value of the accumulator, bias, M, S, the activations and q6, exhaustively
// crossed, then 200,000 random inputs (times NASA_RTLUNIT_ITERS).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "Vnasa_requant.h"
#include "nasa/hw_spec.h"
#include "nasa/refmodel.h"
#include "nasa/sim/vbench.h"

namespace {

using nasa::sim::Bench;

struct In {
  bool bypass = false;
  int32_t val = 0, bias = 0;
  uint32_t m = 1, s = 1;
  uint8_t act = 0, q6 = 127;
};

int8_t expected(const In& in) {
  if (in.bypass) return nasa::ref::activate(in.val, in.act, in.q6);
  // the int32 accumulator wraps when the bias is added (two's complement)
  const auto acc = static_cast<int32_t>(static_cast<uint32_t>(in.val) +
                                        static_cast<uint32_t>(in.bias));
  const int8_t r = nasa::ref::requant(acc, in.m, in.s);
  return nasa::ref::activate(r, in.act, in.q6);
}

int8_t rtl(Bench<Vnasa_requant>& b, const In& in) {
  b->bypass_i = in.bypass;
  b->val_i = static_cast<uint32_t>(in.val);
  b->bias_i = static_cast<uint32_t>(in.bias);
  b->m_i = static_cast<uint16_t>(in.m);
  b->s_i = static_cast<uint8_t>(in.s);
  b->act_i = in.act;
  b->q6_i = in.q6;
  b.settle();
  return static_cast<int8_t>(b->y_o);
}

std::string describe(const In& in) {
  return fmt::format("bypass {} val {} bias {} M {} S {} act {} q6 {}", in.bypass, in.val, in.bias,
                     in.m, in.s, in.act, in.q6);
}

constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();

TEST(RequantRtl, EdgeValuesCrossed) {
  Bench<Vnasa_requant> b("nasa_requant");
  const std::vector<int32_t> vals = {0,     1,      -1,     127,     128,  -128,      -129,
                                     255,   32767,  -32768, 1 << 20, -(1 << 20), kMax, kMin,
                                     kMax - 1, kMin + 1};
  const std::vector<int32_t> biases = {0, 1, -1, kMax, kMin, 1000, -1000};
  const std::vector<uint32_t> ms = {0, 1, 2, 255, 32768, 65534, 65535};
  const std::vector<uint32_t> ss = {1, 2, 7, 8, 15, 16, 17, 23, 24, 31, 32, 33, 46, 47};
  uint64_t n = 0;
  int bad = 0;
  for (uint8_t act = 0; act <= 2; ++act) {
    for (uint8_t q6 : {uint8_t{0}, uint8_t{6}, uint8_t{96}, uint8_t{127}}) {
      if (act != 2 && q6 != 127) continue;  // q6 only matters for Relu6
      for (int32_t v : vals) {
        for (int32_t bias : biases) {
          for (uint32_t m : ms) {
            for (uint32_t s : ss) {
              const In in{false, v, bias, m, s, act, q6};
              const int8_t got = rtl(b, in), want = expected(in);
              ++n;
              if (got != want && bad++ < 10) {
                ADD_FAILURE() << describe(in) << ": RTL " << int{got} << " reference "
                              << int{want};
              }
            }
          }
        }
        const In by{true, v, 0, 0, 1, act, q6};
        const int8_t got = rtl(b, by), want = expected(by);
        ++n;
        if (got != want && bad++ < 10) {
          ADD_FAILURE() << describe(by) << ": RTL " << int{got} << " reference " << int{want};
        }
      }
    }
  }
  EXPECT_EQ(bad, 0) << "of " << n << " cases";
  std::printf("rtlunit_requant: %llu edge cases\n", static_cast<unsigned long long>(n));
}

TEST(RequantRtl, RandomInputs) {
  const uint32_t seed = nasa::sim::test_seed("rtlunit_requant random", 4242);
  Bench<Vnasa_requant> b("nasa_requant", seed);
  auto& r = b.rng();
  int bad = 0;
  const uint64_t n = nasa::sim::iterations(200000);
  for (uint64_t i = 0; i < n; ++i) {
    In in;
    in.bypass = r.chance(15);
    // accumulators of every magnitude: a random bit length, then a random value of that length
    const uint64_t bits = r.uniform(0, 32);
    const uint64_t raw = bits == 0 ? 0 : r() >> (64 - bits);
    in.val = static_cast<int32_t>(static_cast<uint32_t>(r.chance(50) ? raw : ~raw + 1));
    in.bias = r.chance(30) ? 0 : static_cast<int32_t>(static_cast<uint32_t>(r() >> r.uniform(0, 63)));
    in.m = static_cast<uint32_t>(r.chance(10) ? r.uniform(0, 3) : r.uniform(0, 65535));
    in.s = static_cast<uint32_t>(r.uniform(1, nasa::hw::kMaxShift));
    in.act = static_cast<uint8_t>(r.uniform(0, 2));
    in.q6 = static_cast<uint8_t>(r.uniform(0, 127));
    const int8_t got = rtl(b, in), want = expected(in);
    if (got != want && bad++ < 10) {
      ADD_FAILURE() << describe(in) << ": RTL " << int{got} << " reference " << int{want};
    }
  }
  EXPECT_EQ(bad, 0) << "of " << n << " random cases";
}

}  // namespace
