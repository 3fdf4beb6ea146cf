// Differential target over engine programs of random 64-byte descriptors: the validator
// (nasa::validate, the engine's checks in order), the reference model (ref::run: validation,
// per-channel record checks, execution) and the cycle model (cycles::program) must agree.
//
// Input: an 8-byte header, then the initial contents of a 16 KB memory (zeros beyond the input):
//   [0] hardware configuration (index into hw::kConfigs)   [1] descriptor count % 4 (0..3)
//   [2..3] DESC_ADDR   [4..5] WIN_BASE   [6..7] WIN_LIMIT   (little-endian; windows mod 16 K + 1)
// The descriptors are read from that memory at DESC_ADDR, as the engine fetches them.
//
// Checked: ref::run reports the error code, ERR_INDEX and layers done that the validator (plus the
// window check of each descriptor's fetch and the records' shifts) predicts, and leaves memory
// exactly as executing the valid layers one by one does; on an error-free run its counters equal
// the cycle model's (ref::run times programs through LayerMemo), which count exactly the layers'
// MACs. The cycle model has no error path: it times valid programs only, so agreeing means it runs
// every program the others accept. No crash, no UB, no access outside the memory (ASan).
// Bounded work: a run whose valid layers would take more than kMaxWork MACs or cycles is checked
// only up to validation (the validator's verdicts, not the models').
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "nasa/cycle_model.h"
#include "nasa/desc.h"
#include "nasa/hw_spec.h"
#include "nasa/memory_image.h"
#include "nasa/refmodel.h"

namespace hw = nasa::hw;
using nasa::fuzz::check;
using nasa::fuzz::finding;

namespace {

constexpr size_t kMemBytes = 16384;
constexpr size_t kHeader = 8;
constexpr uint64_t kMaxWork = 1 << 15;

uint32_t le16(const uint8_t* p) { return uint32_t{p[0]} | uint32_t{p[1]} << 8; }

// A rough bound on what the models spend on a layer: its MACs (reference) and its cycles on the
// PE array / vector unit plus its memory traffic in port beats (cycle model).
uint64_t work_of(const nasa::Desc& d, const hw::Config& cfg) {
  const nasa::Shape s = nasa::shape_of(d);
  const uint64_t taps = s.macs + s.out_bytes * s.kred;
  const uint64_t beats = (s.in_bytes * 2 + s.wgt_bytes + s.prm_bytes + s.out_bytes) / cfg.mem_bytes;
  return std::max(taps, taps / (uint64_t{cfg.rows} * cfg.cols) + beats);
}

std::string where(const hw::Config& cfg, uint32_t i) {
  return std::string(cfg.name) + ", descriptor " + std::to_string(i);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < kHeader) return 0;
  const hw::Config& cfg = hw::kConfigs[data[0] % hw::kConfigs.size()];
  const uint32_t count = data[1] % 4;
  const uint32_t desc_addr = le16(data + 2);
  const uint32_t win_base = cfg.clamp_window(le16(data + 4) % (kMemBytes + 1));
  const uint32_t win_limit = cfg.clamp_window(le16(data + 6) % (kMemBytes + 1));
  std::vector<uint8_t> mem(kMemBytes, 0);
  std::copy_n(data + kHeader, std::min(size - kHeader, kMemBytes), mem.begin());

  // The expected outcome, descriptor by descriptor, on a copy of the memory.
  std::vector<uint8_t> expect_mem = mem;
  hw::Err expect_err = count == 0 ? hw::Err::EmptyProgram : hw::Err::None;
  uint32_t expect_index = 0, expect_done = 0;
  std::vector<nasa::Desc> valid;
  uint64_t work = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t at = uint64_t{desc_addr} + uint64_t{hw::kDescBytes} * i;
    if (at < win_base || at + hw::kDescBytes > win_limit) {
      expect_err = hw::Err::Window;
      expect_index = i;
      break;
    }
    const nasa::Desc d = nasa::read_desc(expect_mem, at);
    const auto words = nasa::encode(d);
    check(nasa::encode(nasa::decode(words)) == words, "decode(encode()) differs");
    if (const hw::Err e = nasa::validate(d, cfg, win_base, win_limit); e != hw::Err::None) {
      check(nasa::err_name(e).find('?') == std::string::npos, "validate returned an unnamed error");
      if (e == hw::Err::Oversize) (void)nasa::oversize_detail(d, cfg);
      expect_err = e;
      expect_index = i;
      break;
    }
    const nasa::Shape s = nasa::shape_of(d);
    bool bad_record = false;
    for (uint64_t r = 0; r < s.prm_bytes; r += hw::kParamBytes) {
      const uint8_t shift = nasa::read_param(expect_mem, d.prm_addr + r).s;
      bad_record |= shift < 1 || shift > hw::kMaxShift;
    }
    if (bad_record) {
      expect_err = hw::Err::BadQuant;
      expect_index = i;
      break;
    }
    work += work_of(d, cfg);
    if (work > kMaxWork) return 0;  // too big to run both models on every input
    nasa::ref::execute(d, expect_mem);
    valid.push_back(d);
    ++expect_done;
  }

  const nasa::ref::RunResult r = nasa::ref::run(mem, cfg, desc_addr, count, win_base, win_limit);
  if (r.err != expect_err) {
    finding(where(cfg, expect_index) + ": ref::run reports " + nasa::err_name(r.err) +
            ", the validator " + nasa::err_name(expect_err));
  }
  if (r.err_index != expect_index || r.layers_done != expect_done) {
    finding(where(cfg, expect_index) + ": ERR_INDEX " + std::to_string(r.err_index) +
            ", layers done " + std::to_string(r.layers_done) + "; expected " +
            std::to_string(expect_index) + ", " + std::to_string(expect_done));
  }
  check(mem == expect_mem, "memory after ref::run differs from executing the layers one by one");
  if (r.err != hw::Err::None) return 0;

  std::vector<uint64_t> ends;
  const nasa::cycles::Counters c =
      nasa::cycles::program(valid, desc_addr, cfg, nasa::cycles::default_dram(cfg), &ends);
  check(c == r.counters, "ref::run counters (LayerMemo) != cycles::program");
  uint64_t macs = 0;
  for (const nasa::Desc& d : valid) macs += nasa::shape_of(d).macs;
  check(c[static_cast<size_t>(hw::Counter::Macs)] == macs, "cycle model MACs != the layers'");
  check(ends.size() == valid.size(), "cycle model: one layer end per layer");
  check(std::is_sorted(ends.begin(), ends.end()), "cycle model: layer ends out of order");
  check(valid.empty() || ends.back() <= c[static_cast<size_t>(hw::Counter::Cycles)],
        "cycle model: a layer ends after the run");
  return 0;
}
