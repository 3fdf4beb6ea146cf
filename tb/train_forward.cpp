// The libtorch supernet computes what floatnet::forward computes (same padding, strides,
// residuals, BatchNorm eps, activations, pooling), for several candidates including skips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "nasa/data.h"
#include "nasa/float_eval.h"
#include "nasa/supernet_weights.h"
#include "nasa/train.h"

namespace {

using nasa::spec::Candidate;
using nasa::spec::Supernet;

// Compares torch_forward with floatnet::forward on `n` test images for each candidate.
void expect_same_logits(const Supernet& net, const nasa::weights::TensorFile& wf,
                        const std::vector<Candidate>& cands, int n) {
  const auto ds = nasa::data::load_fashion_mnist("test", static_cast<size_t>(n));
  std::vector<float> batch;
  std::vector<nasa::floatnet::Tensor> imgs;
  for (int i = 0; i < n; ++i) {
    auto t = nasa::floatnet::image_from_u8(ds.image(static_cast<size_t>(i)).data(), net.in_h,
                                           net.in_w, net.in_c);
    batch.insert(batch.end(), t.v.begin(), t.v.end());
    imgs.push_back(std::move(t));
  }
  for (const Candidate& c : cands) {
    SCOPED_TRACE(nasa::spec::format_candidate(c));
    const auto got = nasa::train::torch_forward(net, wf, c, batch, n);
    ASSERT_EQ(got.size(), static_cast<size_t>(n * net.classes));
    for (int i = 0; i < n; ++i) {
      const auto want = nasa::floatnet::forward(net, wf, c, imgs[static_cast<size_t>(i)]);
      float scale = 1.0f;
      for (float v : want) scale = std::max(scale, std::fabs(v));
      for (int k = 0; k < net.classes; ++k) {
        EXPECT_NEAR(got[static_cast<size_t>(i * net.classes + k)], want[static_cast<size_t>(k)],
                    1e-4f * scale)
            << "image " << i << " class " << k;
      }
    }
  }
}

TEST(TrainForward, MatchesFloatEvalOnFmnistMb) {
  const Supernet net = nasa::spec::builtin_space("fmnist-mb");
  const auto wf = nasa::weights::random_weights(net, 11);
  std::vector<Candidate> cands = {
      {3, 4, 2, 5, 1, 5},  // skips, e3/e6, k7
      {0, 0, 0, 0, 0, 0},  // e1 (no expand conv), residuals
      {1, 3, 4, 4, 4, 3},
  };
  const uint64_t seed = 2024;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 3; ++i) {
    Candidate c(net.layers.size());
    for (size_t l = 0; l < c.size(); ++l) {
      c[l] = static_cast<int>(rng() % net.layers[l].choices.size());
    }
    cands.push_back(c);
  }
  std::printf("random candidates: seed %llu\n", static_cast<unsigned long long>(seed));
  expect_same_logits(net, wf, cands, 3);
}

// Plain conv choices, a strided stem, relu (not relu6), odd spatial sizes.
TEST(TrainForward, MatchesFloatEvalConvReluSpace) {
  Supernet net;
  net.name = "conv-relu";
  net.in_h = net.in_w = 28;
  net.in_c = 1;
  net.classes = 10;
  net.act = "relu";
  net.stem = {8, 5, 2};
  auto layer = [](int cout, int stride, std::vector<const char*> ops) {
    nasa::spec::ChoiceLayer l;
    l.out_channels = cout;
    l.stride = stride;
    for (const char* o : ops) l.choices.push_back(nasa::spec::parse_op(o));
    return l;
  };
  net.layers = {layer(8, 1, {"conv_k3", "mb_k3_e3", "skip"}), layer(12, 2, {"conv_k5", "mb_k5_e1"}),
                layer(12, 2, {"conv_k1", "mb_k7_e6"})};
  net.head = {16};
  nasa::spec::validate(net);
  const auto wf = nasa::weights::random_weights(net, 5);
  expect_same_logits(net, wf, {{0, 0, 0}, {1, 1, 1}, {2, 0, 1}, {2, 1, 0}}, 2);
}

TEST(TrainForward, RejectsMismatchedWeights) {
  const Supernet net = nasa::spec::builtin_space("fmnist-mb");
  auto wf = nasa::weights::random_weights(net, 1);
  wf.tensors.erase("head.fc.bias");
  std::vector<float> img(28 * 28, 0.5f);
  try {
    nasa::train::torch_forward(net, wf, {0, 0, 0, 0, 0, 0}, img, 1);
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("head.fc.bias"), std::string::npos) << e.what();
  }
}

}  // namespace
