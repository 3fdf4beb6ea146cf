// Internal to sim/src: what a plugin nasa-rtl-<cfg>.so gives the program that loads it
// (engine_sim.cpp): the Verilated model of one configuration behind EngineSim.
#pragma once

#include <cstddef>

#include "nasa/sim/engine_sim.h"

namespace nasa::sim::detail {

struct RtlPlugin {
  // NASA_RTL_ABI of the plugin's build: a hash of the RTL and of every header the interface
  // between program and plugin depends on; the loader refuses a plugin whose hash differs from
  // its own (a stale plugin: the program was rebuilt, the plugin not).
  const char* abi;
  const char* config;  // the configuration the model was verilated for
  EngineSim* (*make)(const hw::Config& cfg, size_t memory_bytes, const cycles::DramTiming& dram);
};

}  // namespace nasa::sim::detail

// The one symbol a plugin exports.
extern "C" {
using NasaRtlPluginFn = const nasa::sim::detail::RtlPlugin* (*)();
}
