// A deterministic training batch of random inputs and labels for gradient tests
// (tb/train_run.cpp, tb/mpi_train_grads.cpp).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "nasa/spec.h"

namespace nasa::testing {

struct RandomBatch {
  std::vector<float> images;    // n CHW inputs, uniform in [-1, 2)
  std::vector<int64_t> labels;  // n classes
};

// The images first, then the labels, from one generator seeded `seed`.
inline RandomBatch random_batch(const spec::Supernet& net, size_t n, uint64_t seed) {
  const size_t per = static_cast<size_t>(net.in_c) * net.in_h * net.in_w;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> px(-1.0f, 2.0f);
  RandomBatch b{std::vector<float>(n * per), std::vector<int64_t>(n)};
  for (auto& v : b.images) v = px(rng);
  for (auto& l : b.labels) l = static_cast<int64_t>(rng() % static_cast<uint64_t>(net.classes));
  return b;
}

}  // namespace nasa::testing
