// Float evaluator: a hand-computable network, and shape/observer checks on fmnist-mb.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "nasa/float_eval.h"
#include "nasa/supernet_weights.h"

namespace {

using nasa::floatnet::Tensor;

nasa::spec::Supernet tiny() {
  nasa::spec::Supernet n;
  n.name = "tiny";
  n.in_h = n.in_w = 4;
  n.in_c = 1;
  n.classes = 2;
  n.stem = {2, 1, 1};
  nasa::spec::ChoiceLayer l;
  l.out_channels = 2;
  l.stride = 1;
  l.choices = {nasa::spec::parse_op("conv_k1"), nasa::spec::parse_op("skip")};
  n.layers = {l};
  n.head = {2};
  nasa::spec::validate(n);
  return n;
}

// BatchNorm that is the identity in inference (var + eps == 1).
void identity_bn(nasa::weights::TensorFile& f, const std::string& prefix, int c) {
  std::vector<float> ones(c, 1.0f), zeros(c, 0.0f), var(c, 1.0f - 1e-5f);
  f.add_f32(prefix + ".bn.weight", {c}, ones);
  f.add_f32(prefix + ".bn.bias", {c}, zeros);
  f.add_f32(prefix + ".bn.running_mean", {c}, zeros);
  f.add_f32(prefix + ".bn.running_var", {c}, var);
}

TEST(FloatEval, HandComputedNetwork) {
  const auto net = tiny();
  nasa::weights::TensorFile f;
  const std::vector<float> stem = {1.0f, -1.0f};  // ch0 = x, ch1 = relu6(-x) = 0
  f.add_f32("stem.conv.weight", {2, 1, 1, 1}, stem);
  identity_bn(f, "stem", 2);
  const std::vector<float> swap = {0, 1, 1, 0};  // conv_k1 swaps the channels
  f.add_f32("layers.0.choices.0.conv.weight", {2, 2, 1, 1}, swap);
  identity_bn(f, "layers.0.choices.0", 2);
  const std::vector<float> eye = {1, 0, 0, 1};
  f.add_f32("head.conv.weight", {2, 2, 1, 1}, eye);
  identity_bn(f, "head", 2);
  f.add_f32("head.fc.weight", {2, 2}, eye);
  const std::vector<float> bias = {0.5f, -0.5f};
  f.add_f32("head.fc.bias", {2}, bias);
  EXPECT_NO_THROW(nasa::weights::check_weights(net, f, "hand"));

  std::vector<uint8_t> px(16);
  double mean = 0;
  for (int i = 0; i < 16; ++i) {
    px[i] = static_cast<uint8_t>(i * 16);
    mean += px[i] / 255.0 / 16;
  }
  const Tensor img = nasa::floatnet::image_from_u8(px.data(), 4, 4, 1);
  const auto skip = nasa::floatnet::forward(net, f, {1}, img);
  EXPECT_NEAR(skip[0], mean + 0.5, 1e-5);
  EXPECT_NEAR(skip[1], -0.5, 1e-6);
  const auto conv = nasa::floatnet::forward(net, f, {0}, img);  // channels swapped
  EXPECT_NEAR(conv[0], 0.5, 1e-6);
  EXPECT_NEAR(conv[1], mean - 0.5, 1e-5);
}

TEST(FloatEval, FmnistShapesAndObserver) {
  const auto net = nasa::spec::builtin_space("fmnist-mb");
  const auto w = nasa::weights::random_weights(net, 5);
  std::vector<uint8_t> px(28 * 28);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>((i * 37) % 251);
  const Tensor img = nasa::floatnet::image_from_u8(px.data(), 28, 28, 1);
  nasa::spec::Candidate c(net.layers.size(), 0);
  std::set<std::string> seen;
  const auto logits =
      nasa::floatnet::forward(net, w, c, img, [&](std::string_view n, const Tensor& t) {
        seen.insert(std::string(n));
        for (float v : t.v) ASSERT_TRUE(std::isfinite(v)) << n;
      });
  ASSERT_EQ(logits.size(), 10u);
  EXPECT_TRUE(seen.count("stem") && seen.count("layers.5.out") && seen.count("logits"));
  EXPECT_TRUE(seen.count("layers.2.choices.0.expand"));        // mb_k3_e3 expands
  EXPECT_EQ(nasa::floatnet::forward(net, w, c, img), logits);  // deterministic
  c[1] = 4;                                                    // skip
  EXPECT_NE(nasa::floatnet::forward(net, w, c, img), logits);
}

TEST(FloatEval, RejectsWrongImageAndCandidate) {
  const auto net = nasa::spec::builtin_space("fmnist-mb");
  const auto w = nasa::weights::random_weights(net, 5);
  std::vector<uint8_t> px(16 * 16);
  const Tensor small = nasa::floatnet::image_from_u8(px.data(), 16, 16, 1);
  nasa::spec::Candidate c(net.layers.size(), 0);
  EXPECT_THROW(nasa::floatnet::forward(net, w, c, small), std::invalid_argument);
  std::vector<uint8_t> ok(28 * 28);
  const Tensor img = nasa::floatnet::image_from_u8(ok.data(), 28, 28, 1);
  c[0] = 99;
  EXPECT_THROW(nasa::floatnet::forward(net, w, c, img), std::invalid_argument);
}

}  // namespace
