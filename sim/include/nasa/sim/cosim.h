// Cosimulation of one program on the reference model and the Verilated RTL: whole-memory byte
// comparison, error codes, cycle counts against the analytic model, efficiency. Used by the
// nasa-cosim driver and the cosim test suites.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nasa/cycle_model.h"
#include "nasa/hw_spec.h"
#include "nasa/refmodel.h"
#include "nasa/sim/engine_sim.h"
#include "nasa/sim/program.h"

namespace nasa::sim {

struct CosimResult {
  bool ok = true;       // every check passed
  std::string failure;  // the reasons when !ok, one per line

  // Memory: the entire RTL memory against the reference's (bytes a mid-layer BadQuant may leave
  // in the failing layer's output are exempt; everything else must match).
  uint64_t mismatched_bytes = 0;
  uint64_t first_mismatch = 0;  // address, valid when mismatched_bytes > 0

  // Outcome.
  uint32_t ref_err = 0, ref_err_index = 0, ref_layers_done = 0;
  RunStatus rtl;
  uint64_t max_cycles = 0;  // the timeout bound the run was given

  // Performance (meaningful when the reference reports no error).
  uint64_t rtl_cycles = 0;     // the RTL's Cycles counter
  uint64_t model_cycles = 0;   // the cycle model for the same DRAM timing
  double cycle_error_pct = 0;  // |rtl - model| / rtl * 100
  uint64_t macs = 0;
  // Of a single layer or a stream (Program::stream): (MACs of one image / (Rows*Cols)) / RTL
  // cycles of one image. Single layer: its whole run; stream of n images: the mean interval
  // between the completions of images 1 .. n-2 (stream_interval), the steady state of a layer in
  // a mini-batch. standalone_efficiency: the layer alone (cycle model).
  double efficiency = 0;
  double standalone_efficiency = 0;
  double stream_interval = 0;
  bool conv_qualifies = false;         // counts towards min_conv_efficiency
  std::vector<uint64_t> rtl_counters;  // all counters, indexed by hw::Counter
  std::vector<uint64_t> model_layer_ends;  // the cycle model's RunStatus::layer_ends
};

// A Conv layer whose shape fills the PE array: Ho*Wo a multiple of Rows, Cout a multiple of Cols,
// k*k*Cin >= 64 (so efficiency is not limited by shape).
bool conv_qualifies(const Desc& d, const hw::Config& cfg);

// The memory a run that ended in `ref`'s error may have written beyond the reference: a
// per-channel record's BadQuant, found as the layer runs (its descriptor valid), may leave the
// output of that layer's earlier tiles (the engine) or channel blocks (the board's MAC array)
// written; that output range, [lo, hi), or none.
std::vector<std::pair<uint64_t, uint64_t>> bad_record_output(const Program& p,
                                                             const hw::Config& cfg,
                                                             const ref::RunResult& ref);

// A generous bound on the cycles a program may take before the harness calls it a hang.
uint64_t timeout_cycles(const Program& p, const hw::Config& cfg, const cycles::DramTiming& dram);

// Model cycles (Counter::Cycles) of a program that runs without error.
uint64_t model_cycles(const Program& p, const hw::Config& cfg, const cycles::DramTiming& dram);

class Cosim {
 public:
  Cosim(const hw::Config& cfg, const cycles::DramTiming& dram);
  ~Cosim();
  Cosim(const Cosim&) = delete;
  Cosim& operator=(const Cosim&) = delete;

  const hw::Config& config() const { return cfg_; }
  const cycles::DramTiming& dram() const { return dram_; }
  EngineSim& engine() { return *sim_; }

  // Runs `p` on both sides (the RTL from reset) and checks everything. With `fst_path`, the RTL
  // run is written to that FST waveform.
  CosimResult run(const Program& p, const std::string& fst_path = "");
  // The memory of the last RTL run and of the reference (for tests that look closer).
  const std::vector<uint8_t>& ref_memory() const { return ref_mem_; }

 private:
  hw::Config cfg_;
  cycles::DramTiming dram_;
  std::unique_ptr<EngineSim> sim_;
  std::vector<uint8_t> ref_mem_;
};

// What a failing case was and why, with its descriptors, for test and driver messages.
std::string format_failure(const Program& p, const CosimResult& r);

// Environment knobs shared by the tests and the driver.
bool fst_on_fail();  // NASA_FST_ON_FAIL=1
// Where to write the waveform of a failing case: $NASA_FST_DIR (default: the temp directory)
// / <tag>.fst, with characters unsafe in file names replaced.
std::string fst_dump_path(const std::string& tag);

}  // namespace nasa::sim
