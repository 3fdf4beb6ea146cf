// Analytic cycle model of the engine: cycles, busy, DRAM bytes and stall counters of a layer
// for a hardware configuration and DRAM timing, mirroring the RTL schedule (docs/engine.md).
#pragma once

#include <array>
#include <cstdint>

#include "nasa/desc.h"
#include "nasa/hw_spec.h"

namespace nasa::cycles {

// Timing of the memory behind the engine's port (the sim/ DRAM model uses the same numbers).
struct DramTiming {
  uint32_t latency = 32;          // cycles from an accepted read request to its first beat
  uint32_t bytes_per_cycle = 32;  // sustained bandwidth (<= the port width)
};
DramTiming default_dram(const hw::Config& cfg);

using Counters = std::array<uint64_t, hw::kNumCounters>;

// Adds the counters of one valid layer (descriptor fetch included) to `c`.
void add_layer(const Desc& d, const hw::Config& cfg, const DramTiming& dram, Counters& c);
// Adds the fixed cost of starting and finishing a program.
void add_program(const hw::Config& cfg, const DramTiming& dram, Counters& c);

}  // namespace nasa::cycles
