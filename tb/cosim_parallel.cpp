// Verilated models on several threads at once, as `nasa run`'s RTL cross-check runs them (one
// model, with its own context, per thread and piece of the test set): each piece's logits and
// cycles equal the reference model's, and the pieces add up to the whole set. Written to run
// under ThreadSanitizer too (`make sanitize`).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "nasa/compiler.h"
#include "nasa/device.h"
#include "nasa/parallel.h"
#include "nasa/runtime.h"
#include "nasa/sim/rtl_device.h"
#include "nasa/supernet_weights.h"
#include "tiny_net.h"

namespace {

using nasa::spec::OpKind;

TEST(CosimParallel, PiecesOnThreadsEqualTheReference) {
  const std::vector<nasa::spec::OpSpec> pool = {{OpKind::MBConv, 3, 1}, {OpKind::Conv, 3, 1}};
  const auto net = nasa::testing::tiny_net(2, pool);
  std::mt19937 rng(9);
  const size_t px = static_cast<size_t>(net.in_h) * net.in_w * net.in_c;
  std::vector<std::vector<uint8_t>> images(8, std::vector<uint8_t>(px));
  std::vector<uint8_t> labels;
  for (auto& im : images) {
    for (auto& v : im) v = static_cast<uint8_t>(rng() % 256);
    labels.push_back(static_cast<uint8_t>(rng() % static_cast<uint32_t>(net.classes)));
  }
  std::vector<nasa::floatnet::Tensor> calib;
  for (int i = 0; i < 2; ++i) {
    calib.push_back(nasa::floatnet::image_from_u8(images[i].data(), net.in_h, net.in_w, 1));
  }
  const auto& cfg = nasa::config_by_name("sim");
  const auto q = nasa::compile::quantize(net, nasa::weights::random_weights(net, 9), calib);
  using nasa::hw::Config;
  const nasa::runtime::Runtime rtl(
      q, cfg, [](const Config& c, uint64_t m) { return nasa::sim::make_rtl_device(c, m); }, "rtl");
  const nasa::runtime::Runtime ref(
      q, cfg, [](const Config& c, uint64_t m) { return nasa::device::make_ref_device(c, m); },
      "ref");
  const nasa::spec::Candidate cand = {1, 0};
  const size_t pieces = 4, per = images.size() / pieces;
  std::vector<nasa::runtime::EvalResult> got(pieces), want(pieces);
  nasa::parallel_for(pieces, 2, [&](size_t k) {
    const auto imgs = std::span(images).subspan(k * per, per);
    const auto lbl = std::span(labels).subspan(k * per, per);
    nasa::runtime::Runtime a = rtl, b = ref;
    got[k] = a.evaluate(cand, imgs, lbl);
    want[k] = b.evaluate(cand, imgs, lbl);
  });
  std::vector<int8_t> logits;
  for (size_t k = 0; k < pieces; ++k) {
    EXPECT_EQ(got[k].logits, want[k].logits) << "piece " << k;
    EXPECT_EQ(got[k].cycles, want[k].cycles) << "piece " << k;
    logits.insert(logits.end(), got[k].logits.begin(), got[k].logits.end());
  }
  nasa::runtime::Runtime whole = ref;
  EXPECT_EQ(logits, whole.evaluate(cand, images, labels).logits);
}

}  // namespace
