// The Verilated engine with its DRAM model: clock, reset, CSR access, run-until-done with a cycle
// timeout, optional FST waveform. One implementation per hardware configuration behind one API.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nasa/cycle_model.h"
#include "nasa/hw_spec.h"
#include "nasa/sim/dram.h"

namespace nasa::sim {

struct RunStatus {
  bool done = false;     // STATUS.done or STATUS.error seen
  bool timeout = false;  // max_cycles elapsed first
  uint32_t status = 0, err_code = 0, err_index = 0, layers_done = 0;
  uint64_t cycles = 0;  // clock cycles from start to done as seen by the harness
  // After done the harness keeps clocking until the memory port is quiet (bounded); false when
  // read data or requests were still in flight at the bound (the next run would see them).
  bool drained = true;
  uint64_t dram_bytes_read = 0, dram_bytes_written = 0;  // as seen by the DRAM model, this run
  // Port accesses outside the programmed window this run (see Dram::set_window).
  uint64_t stray_read_beats = 0, stray_write_bytes = 0, first_stray_addr = 0;
  // Memory-port requests withdrawn or changed while waiting for ready (valid/ready requires
  // them held stable until accepted), and what the first one was.
  uint64_t protocol_errors = 0;
  std::string first_protocol_error;
  // The busy cycle (0: the run's first) in which each completed layer wrote its last result
  // (nasa_top's layer_end_o), in order.
  std::vector<uint64_t> layer_ends;
};

using ProgressFn = std::function<void(uint64_t cycles, uint32_t descriptors)>;

class EngineSim {
 public:
  virtual ~EngineSim() = default;
  // config: one of hw::kConfigs; memory_bytes: size of the simulated memory (address 0..size-1).
  static std::unique_ptr<EngineSim> create(const hw::Config& cfg, size_t memory_bytes,
                                           const cycles::DramTiming& dram);
  virtual const hw::Config& config() const = 0;
  virtual std::span<uint8_t> memory() = 0;
  // Replaces the simulated memory with `image` (its size becomes the memory size).
  virtual void load_memory(std::span<const uint8_t> image) = 0;
  virtual const Dram& dram() const = 0;
  virtual void reset() = 0;
  virtual void tick() = 0;  // one clock cycle
  virtual void csr_write(uint32_t addr, uint32_t value) = 0;
  virtual uint32_t csr_read(uint32_t addr) = 0;
  virtual uint64_t counter(hw::Counter id) = 0;
  // Programs DESC_ADDR/COUNT, the window and SCRATCH_BASE, starts, and ticks until done or
  // max_cycles.
  virtual RunStatus run(uint32_t desc_addr, uint32_t desc_count, uint32_t win_base,
                        uint32_t win_limit, uint64_t max_cycles, uint32_t scratch_base = 0) = 0;
  // The on-chip scratch (docs/engine.md "On-chip scratch") through a backdoor, no cycles: its
  // window at `scratch_base` (CSR ScratchBase) takes memory()'s bytes there (load_scratch), or
  // gives them its own (store_scratch), where the window and the memory overlap. The DRAM model
  // never sees the window's addresses, so after store_scratch memory() reads as the reference
  // model's flat memory does. No-ops without a scratch or window.
  virtual void load_scratch(uint32_t scratch_base) = 0;
  virtual void store_scratch(uint32_t scratch_base) = 0;
  // Starts a batch run (docs/fusion.md) with the batch CSRs and tables as programmed, and the
  // window in WIN_BASE/WIN_LIMIT; ticks until done or max_cycles.
  virtual RunStatus run_batch(uint64_t max_cycles) = 0;
  // Starts writing an FST waveform to `path` (also enabled by env NASA_FST=path); an empty path
  // closes the current waveform.
  virtual void trace(const std::string& path) = 0;
  // Called every few million cycles of a run with the cycles so far and LAYERS_DONE.
  virtual void set_progress(ProgressFn fn) = 0;
  // A host that polls while a run goes (tests of read/write collisions on the chip's RAMs): every
  // other cycle of a run reads the next of `csrs`, in turn (none: no polling, the default).
  virtual void set_host_poll(std::vector<uint32_t> csrs) = 0;
  virtual uint64_t cycle() const = 0;
};

}  // namespace nasa::sim
