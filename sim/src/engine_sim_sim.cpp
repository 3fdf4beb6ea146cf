// EngineSim over the Verilated 'sim' configuration (its own translation unit: the models are big).
#include "Vnasa_top_sim.h"
#include "verilated_engine.h"

namespace nasa::sim::detail {

std::unique_ptr<EngineSim> make_engine_sim(const hw::Config& cfg, size_t memory_bytes,
                                           const cycles::DramTiming& dram) {
  return std::make_unique<VerilatedEngine<Vnasa_top_sim>>(cfg, memory_bytes, dram);
}

}  // namespace nasa::sim::detail
