// A fused batch run on the reference device and on a device under test (a faulty link, the
// board model) with the same inputs: what the end-to-end tests of a transport must agree on.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "nasa/compiler.h"
#include "nasa/device.h"
#include "nasa/runtime.h"

namespace nasa::testing {

// Both results, after checking that they agree on the classifications, logits and nodes (the
// caller checks what its device must also match: cycles, counters, MACs).
inline std::pair<runtime::FusedResult, runtime::FusedResult> expect_fused_like_ref(
    const compile::QSupernet& q, const hw::Config& cfg, runtime::DeviceFactory dut,
    const std::string& dut_name, std::span<const spec::Candidate> cands,
    std::span<const std::vector<uint8_t>> imgs, std::span<const uint8_t> labels,
    uint32_t mini_batch) {
  runtime::Runtime ref(
      q, cfg, [](const hw::Config& c, uint64_t m) { return device::make_ref_device(c, m); },
      "ref");
  runtime::Runtime other(q, cfg, std::move(dut), dut_name);
  compile::BatchOptions bo;
  bo.dump_logits = true;
  bo.mini_batch = mini_batch;
  auto a = ref.evaluate_fused(cands, 0, imgs, labels, bo);
  auto b = other.evaluate_fused(cands, 0, imgs, labels, bo);
  EXPECT_EQ(a.correct, b.correct);
  EXPECT_EQ(a.logits, b.logits);
  EXPECT_EQ(a.nodes, b.nodes);
  return {std::move(a), std::move(b)};
}

}  // namespace nasa::testing
