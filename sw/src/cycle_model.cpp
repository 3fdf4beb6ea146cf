// First-order cycle model; refined against the RTL schedule (see docs/engine.md).
#include "nasa/cycle_model.h"

#include <algorithm>

namespace nasa::cycles {

DramTiming default_dram(const hw::Config& cfg) { return DramTiming{32, cfg.mem_bytes}; }

void add_layer(const Desc& d, const hw::Config& cfg, const DramTiming& dram, Counters& c) {
  const Shape s = shape_of(d);
  const uint64_t bytes = s.in_bytes + s.out_bytes + s.wgt_bytes + s.prm_bytes;
  const uint64_t compute = s.macs / (uint64_t{cfg.rows} * cfg.cols);
  const uint64_t cyc = std::max<uint64_t>(compute, bytes / dram.bytes_per_cycle) + 2 * dram.latency;
  c[static_cast<int>(hw::Counter::Cycles)] += cyc;
  c[static_cast<int>(hw::Counter::Macs)] += s.macs;
}

void add_program(const hw::Config&, const DramTiming&, Counters& c) {
  c[static_cast<int>(hw::Counter::Cycles)] += 2;
}

}  // namespace nasa::cycles
