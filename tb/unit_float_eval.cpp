// Float evaluator: a hand-computable network, and shape/observer checks on fmnist-mb.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "nasa/compiler.h"
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

// Per-channel normalization (docs/data.md "Normalization"): statistics of pixel / 255 per
// channel, recorded in the weights' metadata and read back exactly; malformed records are named.
TEST(Normalization, ChannelStatisticsRecordAndApply) {
  nasa::data::Dataset d;
  d.rows = 1;
  d.cols = 2;
  d.channels = 2;
  // two images, HWC: channel 0 takes 0 and 255 (mean 127.5, sd 127.5), channel 1 is always 51
  d.images = {0, 51, 255, 51, 255, 51, 0, 51};
  d.labels = {0, 1};
  const auto n = nasa::floatnet::channel_normalization(d, 0, 2);
  ASSERT_EQ(n.mean.size(), 2u);
  EXPECT_FLOAT_EQ(n.mean[0], 0.5f);
  EXPECT_FLOAT_EQ(n.std[0], 0.5f);
  EXPECT_FLOAT_EQ(n.mean[1], 0.2f);
  EXPECT_FLOAT_EQ(n.std[1], 1.0f);  // no variation: std 1, not a division by zero
  EXPECT_FLOAT_EQ(n.apply(255, 0), 1.0f);
  EXPECT_FLOAT_EQ(n.apply(0, 0), -1.0f);
  EXPECT_FLOAT_EQ(n.max_abs(), 1.0f);
  EXPECT_FLOAT_EQ(nasa::floatnet::Normalization{}.apply(51, 0), 0.2f);
  EXPECT_THROW(nasa::floatnet::channel_normalization(d, 1, 1), std::out_of_range);

  nasa::weights::TensorFile wf;
  EXPECT_TRUE(nasa::floatnet::read_normalization(wf, 2, "w").empty());  // none recorded
  nasa::floatnet::write_normalization(wf, n);
  EXPECT_EQ(nasa::floatnet::read_normalization(wf, 2, "w"), n);
  const auto t = nasa::floatnet::image_from_u8(d.images.data(), 1, 2, 2, n);
  EXPECT_FLOAT_EQ(t.at(0, 0, 0), -1.0f);
  EXPECT_FLOAT_EQ(t.at(0, 0, 1), 1.0f);
  EXPECT_FLOAT_EQ(t.at(1, 0, 1), 0.0f);
  EXPECT_THROW(nasa::floatnet::read_normalization(wf, 3, "w"), std::runtime_error);
  for (const char* bad : {"[1]", "{\"mean\": [0, 0], \"std\": [1, 0]}",
                          "{\"mean\": [0, \"x\"], \"std\": [1, 1]}", "{\"mean\": [0, 0]}", "{"}) {
    wf.metadata[nasa::floatnet::kNormalizationKey] = bad;
    try {
      nasa::floatnet::read_normalization(wf, 2, "net/weights.safetensors");
      ADD_FAILURE() << bad << " accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(
          std::string(e.what()).find("net/weights.safetensors: metadata 'input_normalization'"),
          std::string::npos)
          << e.what();
    }
  }
}

// The compiler takes the normalization from the weights: the input scale is the largest
// |normalized pixel| / 127, and without a record everything is as before (pixel / 255, 1/127).
TEST(Normalization, CompilerInputScale) {
  const auto net = tiny();
  auto wf = nasa::weights::random_weights(net, 1);
  const std::vector<Tensor> calib = {
      nasa::floatnet::image_from_u8(std::vector<uint8_t>(16, 200).data(), 4, 4, 1)};
  EXPECT_FLOAT_EQ(nasa::compile::quantize(net, wf, calib).in_scale, 1.0f / 127);
  nasa::floatnet::write_normalization(wf, {{0.25f}, {0.5f}});
  const auto q = nasa::compile::quantize(net, wf, calib);
  EXPECT_FLOAT_EQ(q.in_scale, 1.5f / 127);  // (1 - 0.25) / 0.5
  EXPECT_EQ(q.norm.mean, std::vector<float>{0.25f});
}
