// Candidate generator of batch mode (docs/fusion.md "cand_gen"): the bit-exact C++ model of
// rtl/nasa_cand_gen.sv, drawing candidate vectors by sampling, mutation or crossover.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "nasa/hw_spec.h"
#include "nasa/spec.h"

namespace nasa::cand_gen {

// GEN_MODE values (GenMode::Memory, "candidates from memory", never reaches the generator).
using Mode = hw::GenMode;

// Largest mutation probability: GEN_PROB is 17 bits, 65536 mutates every layer.
inline constexpr uint32_t kProbOne = 65536;
// State a zero seed is replaced with (xorshift32 would stay at 0 forever).
inline constexpr uint32_t kZeroSeedState = 0x9E3779B9u;

// Marsaglia's xorshift32 with shifts (13, 17, 5).
class Xorshift32 {
 public:
  explicit Xorshift32(uint32_t seed) : x_(seed == 0 ? kZeroSeedState : seed) {}
  // Advances the state and returns the new state.
  uint32_t next() {
    x_ ^= x_ << 13;
    x_ ^= x_ >> 17;
    x_ ^= x_ << 5;
    return x_;
  }
  uint32_t state() const { return x_; }

 private:
  uint32_t x_;
};

// (next() * k) >> 32: uniform on [0, k) up to a bias below k / 2^32.
uint32_t sample(Xorshift32& rng, uint32_t k);

// The `count` candidates the hardware writes for (mode, seed, prob, K per layer, parents), in order
// j = 0 .. count-1. Parents are used only in modes Mutate (parent j mod P) and Crossover (parents
// 2j and 2j+1 mod P) and are not checked against K (the fusion unit checks every vector). Throws
// std::invalid_argument for prob > kProbOne, an unknown mode, K outside 1..255, no parents in
// modes Mutate/Crossover, or a parent whose length is not layer_k.size() or with a value that is
// not a byte.
// With `sources`, also where each byte came from, in the order the hardware writes them (j, then
// i): what it reads and how many steps it takes.
struct Source {
  int parent = -1;           // copied from this parent (a memory read), or -1: drawn
  bool second_draw = false;  // drawn after a mutation decision (mode Mutate: one more step)
};
std::vector<spec::Candidate> generate(Mode mode, uint32_t seed, uint32_t prob,
                                      std::span<const int> layer_k, size_t count,
                                      std::span<const spec::Candidate> parents,
                                      std::vector<Source>* sources = nullptr);

}  // namespace nasa::cand_gen
