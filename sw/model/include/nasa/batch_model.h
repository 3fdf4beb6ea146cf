// Reference model of a batch run (docs/fusion.md): cand_gen, fusion_unit, scheduler and eval_unit
// as nasa_top sequences them, over the bit-exact layer executor. The ref Device runs it when CTRL
// bit 2 is written; tables and error codes are those of the RTL. Counters: the control units'
// accesses are costed per access, and the scheduling phase steps a mirror of the scheduler
// together with the engine's cycle model in ext mode (cycles::ExtEngine), cycle by cycle, so
// streaming descriptors overlap as on the RTL (tb/cosim_fused.cpp checks every counter).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "nasa/batch_regs.h"
#include "nasa/cycle_model.h"
#include "nasa/hw_spec.h"

namespace nasa::batch {

// The read-only tables after a run.
struct Tables {
  uint32_t node_count = 0;
  std::vector<uint32_t> node;     // packed: parent | layer << 16 | choice << 24
  std::vector<uint32_t> leaf;     // per fused candidate
  std::vector<uint32_t> correct;  // per node
};

// Where a batch run's cycles went: the cycles and MACs of each descriptor the scheduler issued,
// summed by fused-trie node (the stem counts for the root, the head for each leaf) and by opcode;
// the rest of the run's cycles are the control units' (cand_gen, fusion_unit, scheduler and
// eval_unit steps). Descriptors overlap in the engine: a cycle counts for the oldest descriptor
// taken and not yet complete, and for the control units when there is none.
struct Usage {
  uint64_t cycles = 0, macs = 0, layers = 0;
};
struct Profile {
  std::vector<Usage> by_node;  // by node id (the node table's order)
  std::array<Usage, 8> by_op{};  // by opcode value (hw::Op)
  uint64_t control_cycles = 0;
};

struct RunResult {
  hw::Err err = hw::Err::None;
  uint32_t err_index = 0;
  uint32_t layers_done = 0;  // descriptors completed
  cycles::Counters counters{};
  Profile profile;
  // the timing memo: stretches between evaluations replayed from an equivalent earlier one,
  // and the distinct stretches simulated
  uint64_t memo_hits = 0, memo_stretches = 0;
};

// `use_memo = false` simulates every cycle (the memo is exact; tb/unit_batch_memo.cpp checks it).
// scratch_base: CSR ScratchBase (docs/engine.md "On-chip scratch"; `mem` holds its window's bytes
// too, as for ref::run).
RunResult run(std::span<uint8_t> mem, const hw::Config& cfg, const Regs& regs, uint32_t win_base,
              uint32_t win_limit, uint32_t scratch_base, Tables& tables, bool use_memo = true);

// CSR/table access semantics shared by the ref device (table bounds and HwBatch are `cfg`'s
// capacities): returns true when `addr` is a batch CSR.
bool write_csr(const hw::Config& cfg, Regs& regs, uint32_t& tbl_addr, uint32_t addr,
               uint32_t value);
bool read_csr(const hw::Config& cfg, const Regs& regs, const Tables& tables, uint32_t& tbl_addr,
              uint32_t addr, uint32_t& value);

}  // namespace nasa::batch
