// One way to compare a simulated memory with the expected one (the reference model's, or the image
// with known writes applied) and to report it: how many bytes differ, the first few of them with
// both values, exempt ranges; and, when NASA_FST_ON_FAIL=1, a waveform of the failing case (the
// caller supplies how to rerun it). Used by Cosim::run and the cosim benches (tb/cosim_*.cpp).
//
//   EXPECT_TRUE(nasa::sim::same_memory(rtl_mem, ref_mem, MemoryCheck("after two runs"))) << where;
//   nasa::sim::expect_same_memory(rtl_mem, ref_mem, MemoryCheck("memory").fst(
//       "case_17", [&](const std::string& f) { cs.run(p, f); }));
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#if !defined(NASA_MEMCHECK_NO_GTEST) && __has_include(<gtest/gtest.h>)
#include <gtest/gtest.h>
#define NASA_MEMCHECK_HAVE_GTEST 1
#endif

namespace nasa::sim {

struct MemoryDiff {
  struct Byte {
    uint64_t addr;
    uint8_t got, want;
  };
  uint64_t count = 0;       // bytes that differ outside the exempt ranges
  uint64_t first = 0;       // the lowest of them (valid when count > 0)
  std::vector<Byte> bytes;  // the first few, in address order
  bool size_differs = false;
  uint64_t got_size = 0, want_size = 0;

  bool same() const { return count == 0 && !size_differs; }
  // "<what>: 3 bytes differ, first at 0x10 (got 0x01, expected 0x02), 0x11 (...) ..." or
  // "<what>: size 10 bytes, expected 12"; empty when same().
  std::string describe(const std::string& what = "memory") const;
};

// Compares `got` with `want` byte for byte, skipping the [lo, hi) ranges of `exempt`; keeps the
// first `samples` differing bytes.
MemoryDiff compare_memory(std::span<const uint8_t> got, std::span<const uint8_t> want,
                          std::span<const std::pair<uint64_t, uint64_t>> exempt = {},
                          size_t samples = 8);

// When NASA_FST_ON_FAIL=1: calls rerun(path) with path = fst_dump_path(tag) so the failing case is
// simulated again writing that waveform, and returns "\n  waveform: <path>" (or why it is
// incomplete) for the failure message; "" otherwise.
std::string dump_failure_fst(const std::string& tag,
                             const std::function<void(const std::string&)>& rerun);

// What to compare and how to report it:
//   MemoryCheck("memory after two runs").except(ranges).fst(tag, rerun)
struct MemoryCheck {
  std::string what = "memory";  // names the comparison in the message
  std::vector<std::pair<uint64_t, uint64_t>> exempt;  // [lo, hi) ranges left out
  std::string fst_tag;  // waveform name for dump_failure_fst (with rerun_with_fst)
  std::function<void(const std::string&)> rerun_with_fst;

  MemoryCheck() = default;
  explicit MemoryCheck(std::string w) : what(std::move(w)) {}
  MemoryCheck& except(std::vector<std::pair<uint64_t, uint64_t>> ranges) {
    exempt = std::move(ranges);
    return *this;
  }
  MemoryCheck& fst(std::string tag, std::function<void(const std::string&)> rerun) {
    fst_tag = std::move(tag);
    rerun_with_fst = std::move(rerun);
    return *this;
  }
};

#ifdef NASA_MEMCHECK_HAVE_GTEST
// The comparison as a GoogleTest assertion result: the message names the differing bytes and,
// with NASA_FST_ON_FAIL=1 and a rerun function, the waveform of the failing case.
inline ::testing::AssertionResult same_memory(std::span<const uint8_t> got,
                                              std::span<const uint8_t> want,
                                              const MemoryCheck& c = {}) {
  const MemoryDiff d = compare_memory(got, want, c.exempt);
  if (d.same()) return ::testing::AssertionSuccess();
  std::string msg = d.describe(c.what);
  if (c.rerun_with_fst) msg += dump_failure_fst(c.fst_tag.empty() ? c.what : c.fst_tag, c.rerun_with_fst);
  return ::testing::AssertionFailure() << msg;
}

// EXPECT_TRUE(same_memory(...)) with `context` (e.g. the case's descriptors) after the message.
inline void expect_same_memory(std::span<const uint8_t> got, std::span<const uint8_t> want,
                               const MemoryCheck& c = {}, const std::string& context = "") {
  EXPECT_TRUE(same_memory(got, want, c)) << context;
}
#endif

}  // namespace nasa::sim
