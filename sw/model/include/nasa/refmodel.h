// Bit-exact reference executor of engine programs: the oracle of every RTL test and the fast
// backend of the runtime. Counters other than Macs come from the cycle model (nasa/cycle_model.h).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "nasa/desc.h"
#include "nasa/hw_spec.h"

namespace nasa::ref {

struct RunResult {
  hw::Err err = hw::Err::None;
  uint32_t err_index = 0;    // descriptor index of the error
  uint32_t layers_done = 0;  // descriptors completed
  std::array<uint64_t, hw::kNumCounters> counters{};
};

// Runs `count` descriptors starting at `desc_addr` on `mem` (the whole byte-addressed memory,
// address 0 = mem[0]) exactly as the engine would, including validation and error codes.
// Counters: Macs exact; Cycles, DRAM bytes and stalls from the cycle model (default DRAM timing).
// scratch_base: CSR ScratchBase (docs/engine.md "On-chip scratch"); `mem` holds the scratch
// window's bytes too (a layer's output there is written into `mem`, as the engine's on-chip
// scratch holds it).
RunResult run(std::span<uint8_t> mem, const hw::Config& cfg, uint32_t desc_addr, uint32_t count,
              uint32_t win_base, uint32_t win_limit, uint32_t scratch_base = 0);

// Executes one already validated layer (no window checks).
void execute(const Desc& d, std::span<uint8_t> mem);

int8_t requant(int64_t acc, uint32_t m, uint32_t s);
int8_t activate(int32_t v, uint8_t act, uint8_t q6);  // saturate to int8 then clamp

}  // namespace nasa::ref
