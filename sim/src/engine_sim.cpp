#include "nasa/sim/engine_sim.h"

#include <fmt/format.h>

#include <stdexcept>

namespace nasa::sim {
namespace detail {
// One per row of NASA_CONFIGS, each in engine_sim_<name>.cpp over Vnasa_top_<name>.
#define NASA_SIM_DECLARE(n, ...)                                                         \
  std::unique_ptr<EngineSim> make_engine_##n(const hw::Config& cfg, size_t memory_bytes, \
                                             const cycles::DramTiming& dram);
NASA_CONFIGS(NASA_SIM_DECLARE)
#undef NASA_SIM_DECLARE
}  // namespace detail

std::unique_ptr<EngineSim> EngineSim::create(const hw::Config& cfg, size_t memory_bytes,
                                             const cycles::DramTiming& dram) {
#define NASA_SIM_DISPATCH(n, ...) \
  if (cfg.name == #n) return detail::make_engine_##n(cfg, memory_bytes, dram);
  NASA_CONFIGS(NASA_SIM_DISPATCH)
#undef NASA_SIM_DISPATCH
  throw std::invalid_argument(
      fmt::format("EngineSim: no Verilated model for config '{}'", cfg.name));
}

}  // namespace nasa::sim
