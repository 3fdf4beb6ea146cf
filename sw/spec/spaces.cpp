// Built-in search spaces, so examples and tests need no JSON file (docs/spaces/ holds their JSON).
#include <fmt/format.h>

#include <functional>
#include <string>
#include <utility>

#include "nasa/spec.h"

namespace nasa::spec {
namespace {

std::vector<OpSpec> ops(const std::vector<std::string_view>& names) {
  std::vector<OpSpec> out;
  for (auto n : names) out.push_back(parse_op(n));
  return out;
}

// Fashion-MNIST sized: 28x28x1, three resolutions (28, 14, 7), 4-6 ops per layer, 18000
// candidates of 2.1-11.2 M MACs each: small enough to train the supernet on a CPU in minutes.
Supernet fmnist_mb() {
  Supernet n;
  n.name = "fmnist-mb";
  n.in_h = 28;
  n.in_w = 28;
  n.in_c = 1;
  n.classes = 10;
  n.stem = {16, 3, 1};
  // At 28x28 only small kernels and expansions; the larger ones where the maps are smaller.
  const std::vector<std::string_view> hi_res = {"mb_k3_e1", "mb_k5_e1", "mb_k3_e3", "mb_k5_e3"};
  const std::vector<std::string_view> lo_res = {"mb_k3_e3", "mb_k5_e3", "mb_k7_e3", "mb_k3_e6",
                                                "mb_k5_e6"};
  auto with_skip = [](std::vector<std::string_view> v) {
    v.push_back("skip");
    return v;
  };
  n.layers = {
      {16, 1, ops(hi_res)},             // 28x28
      {16, 1, ops(with_skip(hi_res))},  // 28x28
      {24, 2, ops(lo_res)},             // 28 -> 14
      {24, 1, ops(with_skip(lo_res))},  // 14x14
      {40, 2, ops(lo_res)},             // 14 -> 7
      {40, 1, ops(with_skip(lo_res))},  // 7x7
  };
  n.head = {128};
  n.act = "relu6";
  return n;
}

// The default of the NAS job (`nasa train`, `nasa run`): fmnist-mb's choices after a stride-2
// stem, so the maps are 14x14 and 7x7. About 3x cheaper per image than fmnist-mb (measured: a
// candidate trains at ~800 images/s on 2 cores against ~250) at equal accuracy after one epoch
// (87.9% vs 88.2% validation for mb_k3_e3-mb_k3_e3-mb_k5_e3-mb_k5_e3-mb_k5_e6-mb_k5_e6), which is
// what lets supernet training, search and the final training fit the 15-minute job. Same choice
// counts per layer as fmnist-mb, so candidate strings are valid in both.
Supernet fmnist_mb14() {
  Supernet n = fmnist_mb();
  n.name = "fmnist-mb14";
  n.stem.stride = 2;     // 28 -> 14
  n.layers[4].stride = 1;  // stays at 7x7: the last stage keeps 49 pixels for the head
  return n;
}

// ImageNet-sized spaces for the fusion benchmarks (bench/): shapes only, never trained here.
// `stages`: (out_channels, first stride, layers); a stage's first layer changes shape, the others
// keep it and may also be skipped.
struct Stage {
  int channels, stride, layers;
};
Supernet imagenet_space(std::string name, Stem stem, const std::vector<Stage>& stages,
                        const std::vector<std::string_view>& first_ops,
                        const std::vector<std::string_view>& other_ops, int head) {
  Supernet n;
  n.name = std::move(name);
  n.in_h = n.in_w = 224;
  n.in_c = 3;
  n.classes = 1000;
  n.stem = stem;
  int c = stem.out_channels;
  for (const Stage& st : stages) {
    for (int i = 0; i < st.layers; ++i) {
      const bool first = i == 0 && (st.stride != 1 || st.channels != c);
      n.layers.push_back({st.channels, i == 0 ? st.stride : 1, ops(first ? first_ops : other_ops)});
      c = st.channels;
    }
  }
  n.head = {head};
  n.act = "relu6";
  return n;
}

// FBNet (Wu et al. 2019) macro-architecture: 22 choice layers, 9 ops each. FBNet's ops are
// MBConv k3/k5 x e1/e3/e6, two grouped variants (k3_e1_g2, k5_e1_g2) and skip; the engine has no
// grouped pointwise convolution, so mb_k7_e3 and mb_k7_e6 stand in for the grouped ones, and the
// first layer of a stage (which cannot be an identity) offers mb_k7_e1 instead of skip.
Supernet fbnet_imagenet() {
  return imagenet_space(
      "fbnet-imagenet", {16, 3, 2},
      {{16, 1, 1}, {24, 2, 4}, {32, 2, 4}, {64, 2, 4}, {112, 1, 4}, {184, 2, 4}, {352, 1, 1}},
      {"mb_k3_e1", "mb_k3_e3", "mb_k3_e6", "mb_k5_e1", "mb_k5_e3", "mb_k5_e6", "mb_k7_e3",
       "mb_k7_e6", "mb_k7_e1"},
      {"mb_k3_e1", "mb_k3_e3", "mb_k3_e6", "mb_k5_e1", "mb_k5_e3", "mb_k5_e6", "mb_k7_e3",
       "mb_k7_e6", "skip"},
      1984);
}

// ProxylessNAS (Cai et al. 2019) mobile space: 21 choice layers of MBConv k3/k5/k7 x e3/e6 plus
// zero (skip) where the layer keeps its shape (first layer of a stage: the six MBConvs).
Supernet proxyless_imagenet() {
  return imagenet_space(
      "proxyless-imagenet", {32, 3, 2},
      {{24, 2, 4}, {40, 2, 4}, {80, 2, 4}, {96, 1, 4}, {192, 2, 4}, {320, 1, 1}},
      {"mb_k3_e3", "mb_k3_e6", "mb_k5_e3", "mb_k5_e6", "mb_k7_e3", "mb_k7_e6"},
      {"mb_k3_e3", "mb_k3_e6", "mb_k5_e3", "mb_k5_e6", "mb_k7_e3", "mb_k7_e6", "skip"}, 1280);
}

const std::vector<std::pair<std::string, std::function<Supernet()>>>& registry() {
  static const std::vector<std::pair<std::string, std::function<Supernet()>>> r = {
      {"fmnist-mb14", fmnist_mb14},
      {"fmnist-mb", fmnist_mb},
      {"fbnet-imagenet", fbnet_imagenet},
      {"proxyless-imagenet", proxyless_imagenet},
  };
  return r;
}

}  // namespace

Supernet builtin_space(std::string_view name) {
  for (const auto& [n, make] : registry()) {
    if (n == name) {
      Supernet net = make();
      validate(net);
      return net;
    }
  }
  throw SpecError(fmt::format("unknown built-in search space '{}' (available: {})", name,
                              fmt::join(builtin_space_names(), ", ")));
}

std::vector<std::string> builtin_space_names() {
  std::vector<std::string> out;
  for (const auto& entry : registry()) out.push_back(entry.first);
  return out;
}

}  // namespace nasa::spec
