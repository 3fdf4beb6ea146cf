// EngineSim over the Verilated 'up5k' configuration: the controller (nasa_mcu) running the firmware.
#include "Vnasa_top_up5k.h"
#include "verilated_engine.h"

namespace nasa::sim::detail {

std::unique_ptr<EngineSim> make_engine_up5k(const hw::Config& cfg, size_t memory_bytes,
                                            const cycles::DramTiming& dram) {
  return std::make_unique<VerilatedEngine<Vnasa_top_up5k>>(cfg, memory_bytes, dram);
}

}  // namespace nasa::sim::detail
