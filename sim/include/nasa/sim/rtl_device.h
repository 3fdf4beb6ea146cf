// The Verilator RTL of the engine (with the sim/ DRAM model) behind the one Device interface.
#pragma once

#include <cstdint>
#include <memory>

#include "nasa/cycle_model.h"
#include "nasa/device.h"

namespace nasa::sim {

std::unique_ptr<device::Device> make_rtl_device(const hw::Config& cfg, uint64_t memory_bytes,
                                                const cycles::DramTiming& dram);
inline std::unique_ptr<device::Device> make_rtl_device(const hw::Config& cfg,
                                                       uint64_t memory_bytes) {
  return make_rtl_device(cfg, memory_bytes, cycles::default_dram(cfg));
}

}  // namespace nasa::sim
