#include "nasa/cand_gen.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace nasa::cand_gen {

uint32_t sample(Xorshift32& rng, uint32_t k) {
  return static_cast<uint32_t>((static_cast<uint64_t>(rng.next()) * k) >> 32);
}

std::vector<spec::Candidate> generate(Mode mode, uint32_t seed, uint32_t prob,
                                      std::span<const int> layer_k, size_t count,
                                      std::span<const spec::Candidate> parents,
                                      std::vector<Source>* sources) {
  const int m = static_cast<int>(mode);
  if (mode == Mode::Memory || m > static_cast<int>(hw::kGenModeLast)) {
    throw std::invalid_argument(
        fmt::format("cand_gen: mode {} is not one of 1 (sample), 2 (mutate), 3 (crossover)", m));
  }
  if (prob > kProbOne) {
    throw std::invalid_argument(
        fmt::format("cand_gen: mutation probability {} is above {} (= 1.0)", prob, kProbOne));
  }
  for (size_t i = 0; i < layer_k.size(); ++i) {
    if (layer_k[i] < 1 || layer_k[i] > 255) {
      throw std::invalid_argument(
          fmt::format("cand_gen: layer {} has K = {}, expected 1..255 choices", i, layer_k[i]));
    }
  }
  const bool uses_parents = hw::gen_mode_needs_parents(static_cast<uint32_t>(mode));
  if (uses_parents) {
    if (parents.empty()) {
      throw std::invalid_argument(
          fmt::format("cand_gen: mode {} ({}) needs at least one parent, got none", m,
                      mode == Mode::Mutate ? "mutate" : "crossover"));
    }
    for (size_t p = 0; p < parents.size(); ++p) {
      if (parents[p].size() != layer_k.size()) {
        throw std::invalid_argument(
            fmt::format("cand_gen: parent {} has {} layers, expected {} (one byte per layer)", p,
                        parents[p].size(), layer_k.size()));
      }
      for (size_t i = 0; i < parents[p].size(); ++i) {
        if (parents[p][i] < 0 || parents[p][i] > 255) {
          throw std::invalid_argument(fmt::format(
              "cand_gen: parent {} layer {} is {}, expected a byte 0..255", p, i, parents[p][i]));
        }
      }
    }
  }

  Xorshift32 rng(seed);
  const size_t num_parents = parents.size();
  std::vector<spec::Candidate> out;
  out.reserve(count);
  for (size_t j = 0; j < count; ++j) {
    spec::Candidate c(layer_k.size());
    for (size_t i = 0; i < layer_k.size(); ++i) {
      const auto k = static_cast<uint32_t>(layer_k[i]);
      Source src;
      switch (mode) {
        case Mode::Memory:  // (refused above)
        case Mode::Sample:
          c[i] = static_cast<int>(sample(rng, k));
          break;
        case Mode::Mutate: {
          const uint32_t r = rng.next();
          if ((r >> 16) < prob) {
            c[i] = static_cast<int>(sample(rng, k));
            src.second_draw = true;
          } else {
            src.parent = static_cast<int>(j % num_parents);
            c[i] = parents[j % num_parents][i];
          }
          break;
        }
        case Mode::Crossover: {
          const uint32_t r = rng.next();
          const size_t a = (2 * j) % num_parents;
          const size_t b = (2 * j + 1) % num_parents;
          src.parent = static_cast<int>((r >> 31) != 0 ? b : a);
          c[i] = parents[static_cast<size_t>(src.parent)][i];
          break;
        }
      }
      if (sources != nullptr) sources->push_back(src);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace nasa::cand_gen
