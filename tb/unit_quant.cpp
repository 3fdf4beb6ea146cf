// Unit tests of the float -> int8 quantization blocks (nasa/quant.h), checked against the engine's
// integer arithmetic through the reference model's requant (nasa/refmodel.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "nasa/quant.h"
#include "nasa/refmodel.h"

#include "thrown_message.h"

namespace nasa::quant {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr uint32_t kSeed = 20261129;

using nasa::testing::expect_invalid;

double value(Requant r) { return std::ldexp(static_cast<double>(r.m), -static_cast<int>(r.s)); }

TEST(ChooseRequant, PrecisionOverLogSweep) {
  int n = 0;
  // 2^-33 .. 2^15 in 1/64-octave steps, plus the exact ends.
  for (int step = -33 * 64; step < 15 * 64; ++step) {
    const double r = std::exp2(step / 64.0);
    const Requant q = choose_requant(r);
    ASSERT_GE(q.m, 1);
    ASSERT_GE(q.s, 1);
    ASSERT_LE(q.s, 47);
    ASSERT_LE(std::fabs(value(q) - r) / r, kRequantRelError) << "ratio " << r;
    // Most precision: either the shift is maxed or M uses its top bit.
    if (q.s < 47) {
      ASSERT_GE(q.m, 32768) << "ratio " << r;
    }
    ++n;
  }
  EXPECT_EQ(n, 48 * 64);
  EXPECT_EQ(choose_requant(kMinRatio), (Requant{16384, 47}));
  EXPECT_EQ(choose_requant(std::nextafter(kMaxRatio, 0.0)), (Requant{65535, 1}));
  EXPECT_EQ(choose_requant(1.0), (Requant{32768, 15}));
  EXPECT_EQ(choose_requant(0.5), (Requant{32768, 16}));
}

TEST(ChooseRequant, RandomRatiosMatchRoundedProductInEngineArithmetic) {
  std::mt19937_64 rng(kSeed);
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  std::uniform_real_distribution<double> expo(-33.0, 14.9);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int i = 0; i < 2000; ++i) {
    const double r = std::exp2(expo(rng));
    const Requant q = choose_requant(r);
    ASSERT_LE(std::fabs(value(q) - r) / r, kRequantRelError);
    // Accumulators whose exact result stays in int8 (ref::requant saturates) and in int32.
    const double amax = std::min(127.0 / r, 2147483647.0);
    for (int j = 0; j < 20; ++j) {
      const auto acc = static_cast<int64_t>(std::trunc(unit(rng) * amax));
      const double want = std::round(static_cast<double>(acc) * r);
      const int got = ref::requant(acc, q.m, q.s);
      ASSERT_LE(std::fabs(got - want), 1.0) << "ratio " << r << " acc " << acc;
    }
  }
}

TEST(ChooseRequant, RejectsBadRatios) {
  expect_invalid([] { choose_requant(0.0); }, {"positive"});
  expect_invalid([] { choose_requant(-1.0); }, {"positive"});
  expect_invalid([] { choose_requant(std::nan("")); }, {"positive"});
  expect_invalid([] { choose_requant(kMinRatio / 2); }, {"too small", "represents"});
  expect_invalid([] { choose_requant(kMaxRatio); }, {"too large", "represents"});
  expect_invalid([] { choose_requant(std::numeric_limits<double>::infinity()); }, {"too large"});
}

TEST(ActivationScale, MaxPercentileAndZeroRange) {
  const std::vector<float> v = {0.5f, -2.54f, 1.0f, 0.0f};
  EXPECT_FLOAT_EQ(activation_scale(v), 2.54f / 127);
  std::vector<float> many(1000);
  for (size_t i = 0; i < many.size(); ++i) many[i] = (i % 2 ? -1.0f : 1.0f) * static_cast<float>(i);
  many[500] = 1e6f;  // one outlier, ignored by the 99th percentile
  EXPECT_FLOAT_EQ(activation_scale(many), 1e6f / 127);
  // Nearest rank 990 of {0..999 without 500, 1e6} is 990.
  EXPECT_FLOAT_EQ(activation_scale(many, 0.99), 990.0f / 127);
  const std::vector<float> zeros(10, 0.0f);
  EXPECT_EQ(activation_scale(zeros), kMinActivationScale);
  EXPECT_GT(kMinActivationScale, 0.0f);
}

TEST(ActivationScale, Errors) {
  expect_invalid([] { activation_scale({}); }, {"no calibration values"});
  const std::vector<float> v = {1.0f, std::nanf("")};
  expect_invalid([&] { activation_scale(v); }, {"value 1"});
  const std::vector<float> ok = {1.0f};
  expect_invalid([&] { activation_scale(ok, 0.0); }, {"percentile"});
  expect_invalid([&] { activation_scale(ok, 1.5); }, {"percentile"});
}

TEST(FoldBn, HandComputedExample) {
  // Two output channels of two weights. Channel 0: g = 2/sqrt(3+1) = 1; channel 1: g = 3/sqrt(8+1)
  // = 1 (eps = 1 keeps the numbers exact).
  std::vector<float> w = {1.0f, -2.0f, 0.5f, 4.0f};
  std::vector<float> b = {1.0f, 2.0f};
  BatchNorm bn{{2.0f, 3.0f}, {0.5f, -1.0f}, {3.0f, -1.0f}, {3.0f, 8.0f}, 1.0f};
  fold_bn(w, b, 2, bn);
  EXPECT_EQ(w, (std::vector<float>{1.0f, -2.0f, 0.5f, 4.0f}));
  EXPECT_FLOAT_EQ(b[0], (1.0f - 3.0f) * 1.0f + 0.5f);
  EXPECT_FLOAT_EQ(b[1], (2.0f + 1.0f) * 1.0f - 1.0f);

  // Empty bias means zeros; a non-unit factor.
  std::vector<float> w2 = {2.0f, 6.0f};
  std::vector<float> b2;
  BatchNorm bn2{{1.0f}, {0.25f}, {4.0f}, {0.0f}, 0.25f};  // g = 1/0.5 = 2
  fold_bn(w2, b2, 1, bn2);
  EXPECT_EQ(w2, (std::vector<float>{4.0f, 12.0f}));
  ASSERT_EQ(b2.size(), 1u);
  EXPECT_FLOAT_EQ(b2[0], -4.0f * 2.0f + 0.25f);
}

TEST(FoldBn, SizeErrors) {
  const BatchNorm bn{{1, 1}, {0, 0}, {0, 0}, {1, 1}};
  std::vector<float> w(6, 1.0f), b;
  expect_invalid([&] { fold_bn(w, b, 0, bn); }, {"cout"});
  std::vector<float> w5(5, 1.0f);
  expect_invalid([&] { fold_bn(w5, b, 2, bn); }, {"5 weights", "2"});
  std::vector<float> b3(3, 0.0f);
  expect_invalid([&] { fold_bn(w, b3, 2, bn); }, {"bias has 3", "cout = 2"});
  BatchNorm short_var = bn;
  short_var.var = {1};
  expect_invalid([&] { fold_bn(w, b, 2, short_var); }, {"var has 1", "cout = 2"});
  BatchNorm neg = bn;
  neg.var = {1, -1};
  expect_invalid([&] { fold_bn(w, b, 2, neg); }, {"channel 1", "positive"});
}

TEST(QuantizeWeights, KnownMatrixAndZeroRow) {
  // Row 0: max 1.27 -> scale 0.01; row 1: all zero; row 2: max 2.54 -> scale 0.02, halves round
  // away from zero.
  const std::vector<float> w = {1.27f, -0.635f, 0.005f, 0.0f, 0.0f, 0.0f, -2.54f, 0.03f, -0.01f};
  const QuantWeights q = quantize_weights(w, 3);
  ASSERT_EQ(q.scale.size(), 3u);
  EXPECT_FLOAT_EQ(q.scale[0], 0.01f);
  EXPECT_EQ(q.scale[1], 1.0f);
  EXPECT_FLOAT_EQ(q.scale[2], 0.02f);
  // 0.005/0.01 and 0.03/0.02 and -0.01/0.02 are near halves in float; check the codes directly
  // against round-half-away of the float quotient.
  std::vector<int8_t> want(9);
  for (size_t i = 0; i < 9; ++i) {
    want[i] = static_cast<int8_t>(std::round(static_cast<double>(w[i]) / q.scale[i / 3]));
  }
  EXPECT_EQ(q.w, want);
  EXPECT_EQ(q.w[0], 127);
  EXPECT_EQ(q.w[6], -127);
  EXPECT_EQ(q.w[3], 0);
  EXPECT_EQ(q.w[4], 0);
  EXPECT_EQ(q.w[5], 0);

  // Exactly representable: scale 1 (max 127).
  const std::vector<float> e = {127.0f, -2.5f, 1.5f, -0.5f, 0.49f, -127.0f};
  const QuantWeights qe = quantize_weights(e, 1);
  EXPECT_EQ(qe.scale[0], 1.0f);
  EXPECT_EQ(qe.w, (std::vector<int8_t>{127, -3, 2, -1, 0, -127}));
}

TEST(QuantizeWeights, Errors) {
  const std::vector<float> w(6, 1.0f);
  expect_invalid([&] { quantize_weights(w, 0); }, {"cout"});
  expect_invalid([&] { quantize_weights(w, 4); }, {"6 weights", "4"});
  std::vector<float> bad = w;
  bad[4] = std::numeric_limits<float>::infinity();
  expect_invalid([&] { quantize_weights(bad, 2); }, {"output channel 1"});
}

TEST(ConvParams, ValuesAndErrors) {
  const std::vector<float> bias = {0.5f, -1.0f, 1e9f};
  const std::vector<float> ws = {0.01f, 0.02f, 0.001f};
  const auto p = conv_params(bias, ws, 0.1f, 0.05f);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].bias, 500);  // 0.5 / (0.1*0.01)
  EXPECT_EQ(p[1].bias, -500);
  EXPECT_EQ(p[2].bias, std::numeric_limits<int32_t>::max());  // saturated
  for (size_t c = 0; c < 3; ++c) {
    const double r = 0.1 * static_cast<double>(ws[c]) / 0.05;
    EXPECT_EQ((Requant{p[c].m, p[c].s}), choose_requant(static_cast<double>(0.1f) * ws[c] / 0.05f));
    EXPECT_NEAR(std::ldexp(p[c].m, -p[c].s), r, r * 1e-4);
  }
  // A vanishing channel maps to (1, 47): every int32 accumulator gives 0.
  const std::vector<float> tiny_ws = {1e-12f};
  const std::vector<float> zero_b = {0.0f};
  const auto t = conv_params(zero_b, tiny_ws, 0.01f, 10.0f);
  EXPECT_EQ(t[0], (ChannelParams{0, 1, 47}));
  EXPECT_EQ(ref::requant(std::numeric_limits<int32_t>::max(), t[0].m, t[0].s), 0);
  EXPECT_EQ(ref::requant(std::numeric_limits<int32_t>::min(), t[0].m, t[0].s), 0);

  expect_invalid([&] { conv_params(bias, tiny_ws, 0.1f, 0.1f); }, {"3 biases", "1 weight"});
  expect_invalid([&] { conv_params(bias, ws, 0.0f, 0.1f); }, {"input scale"});
  expect_invalid([&] { conv_params(bias, ws, 0.1f, -1.0f); }, {"output scale"});
  expect_invalid([&] { conv_params(zero_b, tiny_ws, 1e30f, 1e-30f); }, {"channel 0", "too large"});
  const std::vector<float> zero_ws = {0.0f};
  expect_invalid([&] { conv_params(zero_b, zero_ws, 0.1f, 0.1f); }, {"channel 0"});
}

// End to end: random float conv (as a dot product per output) followed by BatchNorm, quantized
// with fold_bn / quantize_weights / activation_scale / conv_params and run in the engine's integer
// arithmetic; every output is within 2 output LSBs + 1% of the output range of the float result.
TEST(ConvParams, Int8PipelineTracksFloat) {
  std::mt19937 rng(kSeed);
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_real_distribution<float> pos(0.2f, 2.0f);
  const size_t kLayers = 20, kSamples = 64;
  const std::vector<size_t> kreds = {1, 9, 27, 72, 288, 1152};
  int checked = 0;
  double worst_lsb = 0.0;
  for (size_t layer = 0; layer < kLayers; ++layer) {
    const size_t kred = kreds[layer % kreds.size()];
    const size_t cout = 16;
    const float wmag = pos(rng), xmag = pos(rng) * 3;
    std::vector<float> w(cout * kred), b(cout);
    for (auto& v : w) v = u(rng) * wmag;
    for (auto& v : b) v = u(rng);
    BatchNorm bn;
    for (size_t c = 0; c < cout; ++c) {
      bn.gamma.push_back(u(rng) * 2);
      bn.beta.push_back(u(rng));
      bn.mean.push_back(u(rng));
      bn.var.push_back(pos(rng));
    }
    std::vector<std::vector<float>> xs(kSamples, std::vector<float>(kred));
    for (auto& x : xs) {
      for (auto& v : x) v = u(rng) * xmag;
    }
    // Float reference: BN(w.x + b), in double.
    std::vector<float> ref(kSamples * cout);
    for (size_t n = 0; n < kSamples; ++n) {
      for (size_t c = 0; c < cout; ++c) {
        double acc = b[c];
        for (size_t i = 0; i < kred; ++i) acc += double{w[c * kred + i]} * xs[n][i];
        const double g = bn.gamma[c] / std::sqrt(double{bn.var[c]} + bn.eps);
        ref[n * cout + c] = static_cast<float>((acc - bn.mean[c]) * g + bn.beta[c]);
      }
    }
    std::vector<float> all_x;
    for (const auto& x : xs) all_x.insert(all_x.end(), x.begin(), x.end());
    const float in_scale = activation_scale(all_x);
    const float out_scale = activation_scale(ref);

    std::vector<float> fw = w, fb = b;
    fold_bn(fw, fb, cout, bn);
    const QuantWeights qw = quantize_weights(fw, cout);
    const auto params = conv_params(fb, qw.scale, in_scale, out_scale);
    const double range = 127.0 * out_scale;
    for (size_t n = 0; n < kSamples; ++n) {
      std::vector<int8_t> qx(kred);
      for (size_t i = 0; i < kred; ++i) qx[i] = quantize_value(xs[n][i], in_scale);
      for (size_t c = 0; c < cout; ++c) {
        int32_t acc = params[c].bias;
        for (size_t i = 0; i < kred; ++i) acc += int32_t{qw.w[c * kred + i]} * qx[i];
        const int8_t y = ref::requant(acc, params[c].m, params[c].s);
        const double err = std::fabs(dequantize(y, out_scale) - double{ref[n * cout + c]});
        worst_lsb = std::max(worst_lsb, err / out_scale);
        ASSERT_LE(err, 2.0 * out_scale + 0.01 * range)
            << "layer " << layer << " kred " << kred << " sample " << n << " channel " << c;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, static_cast<int>(kLayers * kSamples * 16));
  RecordProperty("worst_error_lsb", std::to_string(worst_lsb));
}

// The draws of the requant-against-float tests: input/output scales and int8 codes, all from
// one engine seeded with kSeed, in the order the test asks for them.
struct RequantDraws {
  std::mt19937 rng{kSeed};
  float scale() { return std::uniform_real_distribution<float>(0.005f, 0.5f)(rng); }
  int code() { return std::uniform_int_distribution<int>(-128, 127)(rng); }
};

TEST(TensorRequant, AvgPoolAndGapMatchFloat) {
  RequantDraws r;
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  for (int t = 0; t < 200; ++t) {
    const float in = r.scale(), out = in * std::uniform_real_distribution<float>(0.5f, 2.0f)(r.rng);
    const int pixels = 1 + t * 7 % 400;
    const Requant a = avgpool_requant(in, out);
    const Requant g = gap_requant(in, out, pixels);
    EXPECT_EQ(a, choose_requant(double{in} / (9.0 * out)));
    for (int j = 0; j < 50; ++j) {
      int64_t sum9 = 0, sump = 0;
      for (int k = 0; k < 9; ++k) sum9 += r.code();
      for (int k = 0; k < pixels; ++k) sump += r.code();
      const double want9 = std::clamp(std::round(sum9 * double{in} / (9.0 * out)), -128.0, 127.0);
      const double wantp =
          std::clamp(std::round(sump * double{in} / (pixels * double{out})), -128.0, 127.0);
      ASSERT_LE(std::fabs(ref::requant(sum9, a.m, a.s) - want9), 1.0) << "t " << t;
      ASSERT_LE(std::fabs(ref::requant(sump, g.m, g.s) - wantp), 1.0) << "t " << t;
    }
  }
  EXPECT_EQ(avgpool_requant(1.0f, 1.0f, 4), (Requant{32768, 17}));
  expect_invalid([] { avgpool_requant(1.0f, 1.0f, 0); }, {"window"});
  expect_invalid([] { gap_requant(1.0f, 1.0f, -3); }, {"pixels"});
  expect_invalid([] { gap_requant(0.0f, 1.0f, 3); }, {"input scale"});
  expect_invalid([] { gap_requant(1.0f, 1e-20f, 1); }, {"gap_requant", "too large"});
}

TEST(TensorRequant, AddMatchesFloat) {
  RequantDraws r;
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  for (int t = 0; t < 200; ++t) {
    const float sa = r.scale(), sb = r.scale(), so = std::max(sa, sb) * 1.5f;
    const auto [ra, rb] = add_requant(sa, sb, so);
    EXPECT_EQ(ra, choose_requant(double{sa} / so));
    EXPECT_EQ(rb, choose_requant(double{sb} / so));
    for (int j = 0; j < 100; ++j) {
      const int a = r.code(), b = r.code();
      const int sum = ref::requant(a, ra.m, ra.s) + ref::requant(b, rb.m, rb.s);
      const int y = std::clamp(sum, -128, 127);
      const double want =
          std::clamp(std::round((a * double{sa} + b * double{sb}) / so), -128.0, 127.0);
      ASSERT_LE(std::fabs(y - want), 1.0) << "t " << t << " a " << a << " b " << b;
    }
  }
  expect_invalid([] { add_requant(1.0f, 0.0f, 1.0f); }, {"second input scale"});
  expect_invalid([] { add_requant(1.0f, 1.0f, 1e-20f); }, {"add_requant: first input"});
}

TEST(QuantizeValue, RoundTripAndSaturation) {
  EXPECT_EQ(quantize_value(0.0f, 0.1f), 0);
  EXPECT_EQ(quantize_value(0.25f, 0.5f), 1);    // half away from zero
  EXPECT_EQ(quantize_value(-0.25f, 0.5f), -1);  // half away from zero
  EXPECT_EQ(quantize_value(1000.0f, 1.0f), 127);
  EXPECT_EQ(quantize_value(-1000.0f, 1.0f), -128);
  EXPECT_EQ(quantize_value(-std::numeric_limits<float>::infinity(), 1.0f), -128);
  for (int q = -128; q <= 127; ++q) {
    EXPECT_EQ(quantize_value(dequantize(static_cast<int8_t>(q), 0.037f), 0.037f), q);
  }
  EXPECT_FLOAT_EQ(dequantize(-3, 0.5f), -1.5f);
  expect_invalid([] { quantize_value(1.0f, 0.0f); }, {"scale"});
  expect_invalid([] { quantize_value(std::nanf(""), 1.0f); }, {"NaN"});
}

}  // namespace
}  // namespace nasa::quant
