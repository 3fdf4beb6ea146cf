// EngineSim over one Verilated model (Vnasa_top_<cfg>, its own translation unit: the models are
// big). Compiled once per configuration: into nasa_sim_core for the built-in one (`sim`), into
// the plugin nasa-rtl-<cfg>.so for every other (NASA_RTL_PLUGIN; engine_sim.cpp loads it on
// demand, docs/cosim.md "Models on demand").
#include NASA_RTL_MODEL_HEADER

#include "nasa_rtl_abi.h"
#include "verilated_engine.h"

#if defined(NASA_RTL_PLUGIN)
#include "rtl_plugin.h"

// The plugin's one exported symbol (everything else is hidden: sim/CMakeLists.txt).
extern "C" __attribute__((visibility("default"))) const nasa::sim::detail::RtlPlugin*
nasa_rtl_plugin() {
  static const nasa::sim::detail::RtlPlugin plugin{
      NASA_RTL_ABI, NASA_RTL_CONFIG,
      [](const nasa::hw::Config& cfg, size_t memory_bytes,
         const nasa::cycles::DramTiming& dram) -> nasa::sim::EngineSim* {
        return new nasa::sim::detail::VerilatedEngine<NASA_RTL_MODEL>(cfg, memory_bytes, dram);
      }};
  return &plugin;
}
#else
namespace nasa::sim::detail {

std::unique_ptr<EngineSim> make_builtin_engine(const hw::Config& cfg, size_t memory_bytes,
                                               const cycles::DramTiming& dram) {
  return std::make_unique<VerilatedEngine<NASA_RTL_MODEL> >(cfg, memory_bytes, dram);
}

}  // namespace nasa::sim::detail
#endif
