// What the cosim benches share: the engine configurations they are instantiated on, and one case
// run so that a harness exception is a failed case (with the program printed), not a lost test.
#pragma once

#include <fmt/format.h>

#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "nasa/hw_spec.h"
#include "nasa/sim/cosim.h"

namespace nasa::sim {

// The engine's configurations (a controller's, Mcu = 1, runs firmware: tb/cosim_firmware.cpp);
// `small_addr_space_only` keeps those whose addresses are narrower than 32 bits.
inline std::vector<std::string> engine_config_names(bool small_addr_space_only = false) {
  std::vector<std::string> v;
  for (const auto& c : hw::kConfigs) {
    if (!c.mcu && (!small_addr_space_only || c.addr_bits < 32)) v.emplace_back(c.name);
  }
  return v;
}

// `p` on `cs`; an exception from the harness becomes a failed result saying so.
inline CosimResult run_case(Cosim& cs, const Program& p) {
  try {
    return cs.run(p);
  } catch (const std::exception& e) {
    CosimResult r;
    r.ok = false;
    r.failure = fmt::format("harness error: {}", e.what());
    return r;
  }
}

// The failure text of a case: the program and both outcomes, and when the case failed a rerun
// with a waveform named `fst_tag` (NASA_FST_ON_FAIL=1).
inline std::string case_report(Cosim& cs, const Program& p, const CosimResult& r,
                               const std::string& fst_tag) {
  std::string where = format_failure(p, r);
  if (!r.ok) {
    where += dump_failure_fst(fst_tag, [&](const std::string& path) { cs.run(p, path); });
  }
  return where;
}

}  // namespace nasa::sim
