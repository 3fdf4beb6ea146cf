// Energy model (docs/energy.md): the energy of a run from its performance counters, event by
// event (multiply-accumulates, each on-chip buffer's reads and writes by its size, requantization,
// the vector unit's lane operations, DRAM bytes, control). The counters are the RTL's and the
// cycle model's (cosim checks they agree), so the estimate is the same for every backend that
// reports them. Per-event energies: Horowitz, ISSCC 2014, 45 nm, not scaled (docs/energy.md).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "nasa/hw_spec.h"

namespace nasa::energy {

// Per-event energies in pJ (45 nm).
struct Costs {
  double mul8 = 0.2;          // 8-bit integer multiply
  double add32 = 0.1;         // 32-bit integer add
  double mul32 = 3.1;         // 32-bit integer multiply
  double dram_word32 = 640;   // 32-bit DRAM access
  double sram8k_word64 = 10;  // 64-bit access of an 8 KB SRAM (32 KB: 20, 1 MB: 100)
  double control_cycle = 10;  // the sequencers' and scheduler's registers and clock, a cycle
};

// One kind of event: how many, at what energy each.
struct Event {
  std::string name;   // "mac", "in_buf_read", ...
  std::string what;   // the event, in words
  double count = 0;   // events
  double pj_each = 0; // energy of one
  double pj() const { return count * pj_each; }
};

struct Breakdown {
  std::vector<Event> events;  // in a fixed order (docs/energy.md)
  double total_pj() const;
  double pj(const std::string& name) const;  // 0 when absent
  double dram_share() const { return total_pj() > 0 ? pj("dram") / total_pj() : 0.0; }
};

// Energy of one access of `bytes` bytes to an SRAM of `size` bytes: Horowitz's 64-bit figures
// grow about as the square root of the array size (8 KB 10 pJ, 32 KB 20, 1 MB ~113 vs 100); per
// byte, an eighth of that.
double sram_pj(uint64_t size, double bytes, const Costs& c = {});

// The run's energy from its counters (hw::Counter order) on configuration `cfg`.
Breakdown estimate(const hw::Config& cfg, const std::array<uint64_t, hw::kNumCounters>& counters,
                   const Costs& c = {});

}  // namespace nasa::energy
