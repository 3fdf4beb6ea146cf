// Cycle model of the engine: cycles, busy, MAC, DRAM byte and stall counters of a program for a
// hardware configuration and DRAM timing. It replays the engine's schedule (descriptor fetch,
// decode, input/weight loaders, job arbitration, DMA bursts and realignment, tile issue, drain,
// output writes) at the level of jobs, beats and tile steps, with no data, so it is exact for
// the RTL's control and orders of magnitude faster than RTL simulation. docs/engine.md.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "nasa/desc.h"
#include "nasa/hw_spec.h"

namespace nasa::cycles {

// Timing of the memory behind the engine's port (the sim/ DRAM model uses the same numbers).
struct DramTiming {
  uint32_t latency = 32;          // cycles from an accepted read request to its first beat
  uint32_t bytes_per_cycle = 32;  // sustained bandwidth (<= the port width)
  uint32_t max_outstanding = 16;  // requests the memory accepts before it stalls the port
  // CSR ScratchBase: a layer's loads and stores inside the window of the on-chip scratch bypass
  // this memory (docs/engine.md "On-chip scratch"); 0: no window
  uint32_t scratch_base = 0;
};
DramTiming default_dram(const hw::Config& cfg);

using Counters = std::array<uint64_t, hw::kNumCounters>;

// K-split (docs/engine.md "K-split tiles"): the column groups f (1, 2 or 4) the channel tile of
// cg channels of layer `d` runs its reduction in.
uint32_t ksplit_groups(const Desc& d, const hw::Config& cfg, uint32_t cg);

// Counters of a program of valid descriptors placed at desc_addr (64 bytes each), run from idle;
// with layer_ends, also the cycle (from 0, the run's first) in which each layer completed: its
// last result was written (the RTL's layer_end_o).
Counters program(std::span<const Desc> descs, uint32_t desc_addr, const hw::Config& cfg,
                 const DramTiming& dram, std::vector<uint64_t>* layer_ends = nullptr);

// Counters of a one-layer program with its descriptor at desc_addr, added to `c`.
void add_layer(const Desc& d, const hw::Config& cfg, const DramTiming& dram, Counters& c,
               uint32_t desc_addr = 0);
// cycles::program with a memo. In a program layers overlap (docs/engine.md "Layer streaming"),
// so programs are memoized whole, keyed by their descriptors and where the block sits modulo the
// port width: the search runs the same candidate programs over and over. Exact
// (tb/unit_cycle_memo.cpp).
class LayerMemo {
 public:
  LayerMemo(const hw::Config& cfg, const DramTiming& dram) : cfg_(cfg), dram_(dram) {}
  // What the program `descs` at `desc_addr` adds: cycles::program exactly.
  void add_program(std::span<const Desc> descs, uint32_t desc_addr, Counters& c);
  size_t hits() const { return hits_; }
  size_t misses() const { return programs_.size(); }

 private:
  struct KeyHash {
    template <class K>
    size_t operator()(const K& k) const {
      return hash_words(k);
    }
  };
  static size_t hash_words(std::span<const uint32_t> k);
  hw::Config cfg_;
  DramTiming dram_;
  std::unordered_map<std::vector<uint32_t>, Counters, KeyHash> programs_;
  size_t hits_ = 0;
};

// The engine of a batch run (ext mode, docs/fusion.md "Streaming"): the scheduler offers one
// descriptor at a time and the engine streams them like a program's (fetch, decode and loads of
// the next layers while one computes). Cycle by cycle, for the batch model's co-simulation of
// the scheduler (sw/model/batch_model.cpp); its counters are the engine's over the steps taken.
class ExtEngine {
 public:
  ExtEngine(const hw::Config& cfg, const DramTiming& dram);
  ~ExtEngine();
  ExtEngine(const ExtEngine&) = delete;
  ExtEngine& operator=(const ExtEngine&) = delete;
  struct Step {
    bool ready = false;  // xd_ready: the offered descriptor was taken (its fetch issued)
    bool done = false;   // xd_done: a layer completed (its last result written)
    bool covered = false;  // with ready: covered by the packed layer before (xd_cov), no fetch
  };
  // One clock cycle; `offer`: the (patched) descriptor the scheduler presents this cycle, null
  // when none, fetched from the template at `tpl_addr`.
  Step step(const Desc* offer, uint32_t tpl_addr);
  // Nothing in flight: every taken descriptor complete, the DMA idle, the front end waiting.
  bool quiet() const;
  // `n` cycles of a quiet engine with nothing offered (what n step(nullptr) would do, fast).
  void idle(uint64_t n);
  const Counters& counters() const;
  uint64_t cycle() const;  // cycles stepped or idled

  // Replaying a stretch the engine ran before from an equivalent state (the batch model's memo):
  // at rest (quiet()), state_key() appends what decides the timing of what comes next, relative
  // to now; same_weights(d): whether `d` reads the weights and records of the last layer
  // started. snapshot() keeps the engine as it is; replay(end, at, add, wgt, prm) continues as
  // `end` was, at cycle `at`, with these counters plus `add`, the last layer started having
  // read weights `wgt` and records `prm`.
  struct Snapshot;
  void state_key(std::vector<uint64_t>& k) const;
  bool same_weights(const Desc& d) const;
  std::shared_ptr<const Snapshot> snapshot() const;
  void replay(const Snapshot& end, uint64_t at, const Counters& add, uint32_t wgt, uint32_t prm);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The engine's hazard check: whether `d` reads (input, second input, weights, records) what
// `prev` writes.
bool reads_output_of(const Desc& d, const Desc& prev);

// Ideal cycles of a layer on the PE array / vector unit: MACs / (Rows*Cols).
double ideal_cycles(const Desc& d, const hw::Config& cfg);

}  // namespace nasa::cycles
