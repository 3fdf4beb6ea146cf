// Load a supernet, quantize it, and evaluate a candidate on the reference-model backend.
#include <cstdio>
#include <vector>

#include "nasa/compiler.h"
#include "nasa/device.h"
#include "nasa/runtime.h"
#include "nasa/supernet_weights.h"

int main() {
  // A built-in search space with random weights (nasa::spec::load_supernet and
  // nasa::weights::read_safetensors load trained ones).
  const nasa::spec::Supernet net = nasa::spec::builtin_space("fmnist-mb");
  const nasa::weights::TensorFile weights = nasa::weights::random_weights(net, 1);

  // 16 synthetic 28x28 images; nasa::data::load_fashion_mnist("test", n) gives real ones.
  std::vector<std::vector<uint8_t>> images(16, std::vector<uint8_t>(28 * 28));
  std::vector<uint8_t> labels(16);
  for (size_t i = 0; i < images.size(); ++i) {
    for (size_t p = 0; p < images[i].size(); ++p)
      images[i][p] = static_cast<uint8_t>((i * 31 + p * 7) % 256);
    labels[i] = static_cast<uint8_t>(i % 10);
  }
  std::vector<nasa::floatnet::Tensor> calib;
  for (const auto& im : images)
    calib.push_back(nasa::floatnet::image_from_u8(im.data(), 28, 28, 1));

  // Quantize once, then evaluate any candidate on a backend.
  nasa::runtime::Runtime rt(
      nasa::compile::quantize(net, weights, calib), nasa::config_by_name("sim"),
      [](const nasa::hw::Config& cfg, uint64_t bytes) {
        return nasa::device::make_ref_device(cfg, bytes);
      },
      "ref");
  const nasa::spec::Candidate c = nasa::spec::parse_candidate("2-0-1-3-4-0", net);
  const nasa::runtime::EvalResult r = rt.evaluate(c, images, labels);
  std::printf("candidate %s: %zu/%zu correct, %llu cycles, logits %s\n",
              nasa::spec::format_candidate(c).c_str(), r.correct, r.images,
              static_cast<unsigned long long>(r.cycles), r.logits_sha256.c_str());
  return 0;
}
