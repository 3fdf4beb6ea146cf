// The power-up state of the Verilated models. They are Verilated with --x-initial unique
// --x-assign unique (cmake/NasaVerilate.cmake): registers and memories without a reset, and X
// values, take what the context's randReset says when a model is built.
#pragma once

#include <verilated.h>

#include <cstdint>

#include "nasa/sim/env.h"

namespace nasa::sim {

// For a model about to be built in `ctx`: NASA_X_SEED = n > 0 gives every register and memory
// without a reset, and every X, a random value from seed n; unset or 0, all zeros. Results must
// not depend on it (ctest xseed<n>_*: the cosim suites under three seeds).
inline void apply_x_seed(VerilatedContext& ctx) {
  const uint64_t seed = env_number("NASA_X_SEED", 0);
  if (seed != 0) {
    ctx.randReset(2);
    ctx.randSeed(static_cast<int>(seed & 0x7fffffff));
  }
}

}  // namespace nasa::sim
