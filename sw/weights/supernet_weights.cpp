#include "nasa/supernet_weights.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <stdexcept>

namespace nasa::weights {
namespace {

void add_conv_bn(std::vector<TensorSpec>& out, const std::string& prefix, int64_t cout,
                 int64_t cin_per_group, int64_t k) {
  out.push_back({prefix + ".conv.weight", {cout, cin_per_group, k, k}});
  for (const char* p : {"weight", "bias", "running_mean", "running_var"}) {
    out.push_back({fmt::format("{}.bn.{}", prefix, p), {cout}});
  }
}

}  // namespace

std::vector<TensorSpec> supernet_tensors(const spec::Supernet& net) {
  std::vector<TensorSpec> out;
  add_conv_bn(out, "stem", net.stem.out_channels, net.in_c, net.stem.k);
  const auto shapes = spec::layer_shapes(net);
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const spec::LayerShape& s = shapes[i];
    for (size_t j = 0; j < net.layers[i].choices.size(); ++j) {
      const spec::OpSpec& op = net.layers[i].choices[j];
      const std::string prefix = fmt::format("layers.{}.choices.{}", i, j);
      switch (op.kind) {
        case spec::OpKind::MBConv: {
          const int64_t mid = int64_t{s.cin} * op.expand;
          if (op.expand != 1) add_conv_bn(out, prefix + ".expand", mid, s.cin, 1);
          add_conv_bn(out, prefix + ".dw", mid, 1, op.k);
          add_conv_bn(out, prefix + ".project", s.cout, mid, 1);
          break;
        }
        case spec::OpKind::Conv:
          add_conv_bn(out, prefix, s.cout, s.cin, op.k);
          break;
        case spec::OpKind::Skip:
          break;
      }
    }
  }
  const int64_t last = net.layers.empty() ? net.stem.out_channels : shapes.back().cout;
  add_conv_bn(out, "head", net.head.channels, last, 1);
  out.push_back({"head.fc.weight", {net.classes, net.head.channels}});
  out.push_back({"head.fc.bias", {net.classes}});
  return out;
}

void check_weights(const spec::Supernet& net, const TensorFile& file, std::string_view source) {
  std::set<std::string> expected;
  for (const TensorSpec& t : supernet_tensors(net)) {
    expected.insert(t.name);
    const auto it = file.tensors.find(t.name);
    if (it == file.tensors.end()) {
      throw std::runtime_error(
          fmt::format("{}: tensor '{}' (shape [{}]) is missing for supernet '{}'", source, t.name,
                      fmt::join(t.shape, ","), net.name));
    }
    if (it->second.dtype != "F32") {
      throw std::runtime_error(fmt::format("{}: tensor '{}' has dtype {}, expected F32", source,
                                           t.name, it->second.dtype));
    }
    try {
      check_shape(it->second, t.shape, t.name);
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("{}: {}", source, e.what()));
    }
  }
  for (const auto& [name, tensor] : file.tensors) {
    if (!expected.count(name)) {
      throw std::runtime_error(fmt::format(
          "{}: tensor '{}' is not part of supernet '{}' (wrong spec for these weights?)", source,
          name, net.name));
    }
  }
}

TensorFile random_weights(const spec::Supernet& net, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  TensorFile file;
  for (const TensorSpec& t : supernet_tensors(net)) {
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    const std::string_view name = t.name;
    auto ends = [&](std::string_view suffix) {
      return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
    };
    if (ends(".conv.weight") || ends("fc.weight")) {
      // He normal: fan_in = product of all dims but the first
      const double fan_in = static_cast<double>(n / t.shape[0]);
      const float sd = static_cast<float>(std::sqrt(2.0 / fan_in));
      for (float& x : v) x = sd * normal(rng);
    } else if (ends("bn.weight")) {
      for (float& x : v) x = 1.0f + 0.1f * normal(rng);
    } else if (ends("bn.running_var")) {
      for (float& x : v) x = 1.0f + 0.1f * std::fabs(normal(rng));
    } else if (ends("bn.bias") || ends("bn.running_mean")) {
      for (float& x : v) x = 0.05f * normal(rng);
    }  // fc.bias stays 0
    file.add_f32(t.name, t.shape, v);
  }
  file.metadata["supernet"] = net.name;
  file.metadata["generator"] = fmt::format("nasa random_weights seed {}", seed);
  return file;
}

Subnet extract_subnet(const spec::Supernet& net, const TensorFile& weights,
                      const spec::Candidate& candidate) {
  spec::validate_candidate(net, candidate);
  check_weights(net, weights, "extract_subnet weights");
  Subnet out;
  out.net = net;
  out.net.name = fmt::format("{}/{}", net.name, spec::format_candidate(candidate));
  for (size_t i = 0; i < net.layers.size(); ++i) {
    out.net.layers[i].choices = {net.layers[i].choices[static_cast<size_t>(candidate[i])]};
  }
  spec::validate(out.net);
  out.weights.metadata = weights.metadata;
  out.weights.metadata["subnet_of"] = net.name;
  out.weights.metadata["arch"] = spec::format_candidate(candidate);
  for (const auto& [name, t] : weights.tensors) {
    std::string n = name;
    if (name.starts_with("layers.")) {
      // layers.<i>.choices.<j>.<rest>: keep only j == candidate[i], renamed to choice 0
      size_t i = 0, j = 0;
      int used = 0;
      if (std::sscanf(name.c_str(), "layers.%zu.choices.%zu.%n", &i, &j, &used) != 2 || used == 0 ||
          i >= candidate.size()) {
        throw std::runtime_error(fmt::format("extract_subnet: unexpected tensor name '{}'", name));
      }
      if (j != static_cast<size_t>(candidate[i])) continue;
      n = fmt::format("layers.{}.choices.0.{}", i, name.substr(static_cast<size_t>(used)));
    }
    out.weights.tensors.emplace(n, t);
  }
  check_weights(out.net, out.weights, "extract_subnet result");
  return out;
}

}  // namespace nasa::weights
