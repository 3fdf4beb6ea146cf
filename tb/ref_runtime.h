// A runtime on the reference backend for a supernet with random weights, calibrated on three
// random images from `seed`: the search and parallel-path tests' fixture.
#pragma once

#include <random>
#include <vector>

#include "nasa/compiler.h"
#include "nasa/device.h"
#include "nasa/runtime.h"
#include "nasa/supernet_weights.h"

namespace nasa::testing {

inline runtime::Runtime random_ref_runtime(const spec::Supernet& net, uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::vector<floatnet::Tensor> calib;
  std::vector<uint8_t> im(static_cast<size_t>(net.in_h) * net.in_w * net.in_c);
  for (int i = 0; i < 3; ++i) {
    for (auto& v : im) v = static_cast<uint8_t>(rng() % 256);
    calib.push_back(floatnet::image_from_u8(im.data(), net.in_h, net.in_w, net.in_c));
  }
  return runtime::Runtime(
      compile::quantize(net, weights::random_weights(net, seed), calib), config_by_name("sim"),
      [](const hw::Config& c, uint64_t m) { return device::make_ref_device(c, m); }, "ref");
}

}  // namespace nasa::testing
