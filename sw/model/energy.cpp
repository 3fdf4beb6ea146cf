#include "nasa/energy.h"

#include <algorithm>
#include <cmath>

namespace nasa::energy {

double Breakdown::total_pj() const {
  double t = 0;
  for (const Event& e : events) t += e.pj();
  return t;
}

double Breakdown::pj(const std::string& name) const {
  for (const Event& e : events) {
    if (e.name == name) return e.pj();
  }
  return 0.0;
}

double sram_pj(uint64_t size, double bytes, const Costs& c) {
  const double scale = std::sqrt(static_cast<double>(std::max<uint64_t>(size, 1)) / 8192.0);
  return c.sram8k_word64 * scale * bytes / 8.0;
}

Breakdown estimate(const hw::Config& cfg, const std::array<uint64_t, hw::kNumCounters>& k,
                   const Costs& c) {
  auto n = [&](hw::Counter id) { return static_cast<double>(k[static_cast<size_t>(id)]); };
  const double rows = cfg.rows, cols = cfg.cols, mb = cfg.mem_bytes;
  // the engine's buffers as rtl/nasa_engine_compute.sv builds them: the input buffer is one
  // replica per read port (max(Rows, Cols) ports, every write goes to all), the weight ring one
  // bank of 2 * KredMax bytes per column, the record memory WTiles slots of Cols 8-byte records
  // in whole port words. Reads are charged as an ASIC would make them (docs/energy.md): enabled
  // in busy steps only, as wide as the step uses (Cols bytes a port, one weight byte a column).
  const double in_ports = std::max(rows, cols);  // the lanes' read ports (and the drain's)
  const uint64_t wbank = 2ull * cfg.kred_max;
  const uint64_t prm_words = (uint64_t{cfg.cols} * hw::kParamBytes + cfg.mem_bytes - 1) /
                             cfg.mem_bytes;
  const uint64_t prm_mem = uint64_t{cfg.wtiles} * prm_words * cfg.mem_bytes;
  const double steps = n(hw::Counter::PeBusy) + n(hw::Counter::VecBusy);
  Breakdown b;
  b.events = {
      {"mac", "multiply-accumulates (8-bit multiply, 32-bit add)", n(hw::Counter::Macs),
       c.mul8 + c.add32},
      {"in_buf_read", "input-buffer port reads of Cols bytes (every port, every MAC or vector step)",
       steps * in_ports, sram_pj(cfg.in_buf_bytes, cols, c)},
      {"in_buf_write", "input-buffer port words written (into every replica)",
       n(hw::Counter::InBufWrites) * (in_ports + 1), sram_pj(cfg.in_buf_bytes, mb, c)},
      {"wbuf_read", "weight-ring bank reads of one byte (every column, every MAC step)",
       n(hw::Counter::PeBusy) * cols, sram_pj(wbank, 1, c)},
      {"wbuf_write", "weight-ring port words written", n(hw::Counter::WBufWrites),
       sram_pj(wbank, mb, c)},
      {"prm_write", "record-memory port words written", n(hw::Counter::PrmWrites),
       sram_pj(prm_mem, mb, c)},
      {"vec", "vector-unit lane operations (Cols lanes a step, a 32-bit add each)",
       n(hw::Counter::VecBusy) * cols, c.add32},
      {"requant", "requantized outputs (a 32-bit multiply and add each; every byte written)",
       n(hw::Counter::DramWrBytes), c.mul32 + c.add32},
      {"dram", "DRAM bytes read and written", n(hw::Counter::DramRdBytes) +
                                                  n(hw::Counter::DramWrBytes),
       c.dram_word32 / 4},
      {"control", "cycles of the run (sequencers, scheduler, clock)", n(hw::Counter::Cycles),
       c.control_cycle},
  };
  return b;
}

}  // namespace nasa::energy
