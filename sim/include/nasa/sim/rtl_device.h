// The Verilator RTL of the engine (with the sim/ DRAM model) behind the one Device interface.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nasa/cycle_model.h"
#include "nasa/device.h"

namespace nasa::sim {

// `host_poll`: CSRs a host reads in turn, every other cycle, while a run goes
// (EngineSim::set_host_poll): tests of what the chip does when the host reads mid-run.
std::unique_ptr<device::Device> make_rtl_device(const hw::Config& cfg, uint64_t memory_bytes,
                                                const cycles::DramTiming& dram,
                                                std::vector<uint32_t> host_poll = {});
inline std::unique_ptr<device::Device> make_rtl_device(const hw::Config& cfg,
                                                       uint64_t memory_bytes) {
  return make_rtl_device(cfg, memory_bytes, cycles::default_dram(cfg));
}

}  // namespace nasa::sim
