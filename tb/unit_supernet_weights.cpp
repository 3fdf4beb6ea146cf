// Supernet weight schema: names and shapes from the spec, checks of a safetensors file.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>

#include "nasa/float_eval.h"
#include "nasa/supernet_weights.h"

namespace {

namespace fs = std::filesystem;
using nasa::weights::check_weights;
using nasa::weights::random_weights;
using nasa::weights::supernet_tensors;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(SupernetWeights, NamesFollowTheSpec) {
  const auto net = nasa::spec::builtin_space("fmnist-mb");
  const auto specs = supernet_tensors(net);
  bool stem = false, fc = false, bn_var = false;
  for (const auto& t : specs) {
    stem |= t.name == "stem.conv.weight";
    fc |= t.name == "head.fc.weight" &&
          t.shape == std::vector<int64_t>{net.classes, net.head.channels};
    bn_var |= t.name == "layers.0.choices.0.dw.bn.running_var";
  }
  EXPECT_TRUE(stem);
  EXPECT_TRUE(fc);
  EXPECT_TRUE(bn_var);
  // stem conv: [out, in_c, k, k]
  EXPECT_EQ(specs[0].shape,
            (std::vector<int64_t>{net.stem.out_channels, net.in_c, net.stem.k, net.stem.k}));
}

TEST(SupernetWeights, RandomWeightsRoundTripThroughSafetensors) {
  const auto net = nasa::spec::builtin_space("fmnist-mb");
  const auto w = random_weights(net, 7);
  EXPECT_NO_THROW(check_weights(net, w, "random"));
  const fs::path p = fs::temp_directory_path() / "nasa_unit_supernet_weights.safetensors";
  nasa::weights::write_safetensors(p, w);
  const auto back = nasa::weights::read_safetensors(p);
  EXPECT_NO_THROW(check_weights(net, back, p.string()));
  EXPECT_EQ(back.tensors.size(), w.tensors.size());
  EXPECT_EQ(back.at("head.fc.weight").data, w.at("head.fc.weight").data);
  fs::remove(p);
  // deterministic
  EXPECT_EQ(random_weights(net, 7).at("stem.conv.weight").data, w.at("stem.conv.weight").data);
  EXPECT_NE(random_weights(net, 8).at("stem.conv.weight").data, w.at("stem.conv.weight").data);
}

TEST(SupernetWeights, MismatchesAreNamed) {
  const auto net = nasa::spec::builtin_space("fmnist-mb");
  auto w = random_weights(net, 1);
  w.tensors.erase("layers.2.choices.1.dw.conv.weight");
  EXPECT_NE(message_of([&] {
              check_weights(net, w, "w.safetensors");
            }).find("w.safetensors: tensor 'layers.2.choices.1.dw.conv.weight'"),
            std::string::npos);

  auto w2 = random_weights(net, 1);
  auto& t = w2.tensors.at("head.fc.bias");
  t.shape = {static_cast<int64_t>(net.classes) + 1};
  t.data.resize(t.data.size() + 4);
  const std::string m = message_of([&] { check_weights(net, w2, "w.safetensors"); });
  EXPECT_NE(m.find("head.fc.bias"), std::string::npos) << m;
  EXPECT_NE(m.find("expected"), std::string::npos) << m;

  auto w3 = random_weights(net, 1);
  const float one = 1.0f;
  w3.add_f32("layers.9.choices.0.conv.weight", {1}, std::span<const float>(&one, 1));
  EXPECT_NE(
      message_of([&] { check_weights(net, w3, "w.safetensors"); }).find("is not part of supernet"),
      std::string::npos);
}

// A candidate extracted as its own network computes exactly what it computes in the supernet.
TEST(SupernetWeights, ExtractedSubnetIsTheCandidate) {
  const auto net = nasa::spec::builtin_space("fmnist-mb14");
  const auto w = random_weights(net, 3);
  const nasa::spec::Candidate cand = {3, 4, 2, 5, 1, 0};
  const auto sub = nasa::weights::extract_subnet(net, w, cand);
  ASSERT_EQ(sub.net.layers.size(), net.layers.size());
  for (size_t i = 0; i < net.layers.size(); ++i) {
    ASSERT_EQ(sub.net.layers[i].choices.size(), 1u);
    EXPECT_EQ(sub.net.layers[i].choices[0], net.layers[i].choices[static_cast<size_t>(cand[i])]);
  }
  EXPECT_EQ(sub.net.name, "fmnist-mb14/3-4-2-5-1-0");
  EXPECT_NO_THROW(check_weights(sub.net, sub.weights, "subnet"));
  EXPECT_EQ(sub.weights.metadata.at("arch"), "3-4-2-5-1-0");
  nasa::floatnet::Tensor img{1, 28, 28, std::vector<float>(28 * 28)};
  for (size_t i = 0; i < img.v.size(); ++i) img.v[i] = static_cast<float>((i * 37) % 255) / 255.0f;
  const auto a = nasa::floatnet::forward(net, w, cand, img);
  const auto b = nasa::floatnet::forward(sub.net, sub.weights, nasa::spec::Candidate(6, 0), img);
  EXPECT_EQ(a, b);
  // a bad candidate or mismatched weights are named
  EXPECT_NE(message_of([&] {
              nasa::weights::extract_subnet(net, w, {0, 0, 0});
            }).find("layers"),
            std::string::npos);
  auto w2 = w;
  w2.tensors.erase("head.fc.bias");
  EXPECT_NE(message_of([&] { nasa::weights::extract_subnet(net, w2, cand); }).find("head.fc.bias"),
            std::string::npos);
}

}  // namespace
