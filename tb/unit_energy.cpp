// The energy model (nasa/energy.h, docs/energy.md): its SRAM figures meet Horowitz's published
// points, its buffer-write events count at least the bytes each run must move on chip, and on
// a fused batch of the default space it gives less energy per candidate than the candidates run
// alone (fewer MACs, fewer DRAM bytes), with every event accounted for.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "nasa/compiler.h"
#include "nasa/device.h"
#include "nasa/energy.h"
#include "nasa/fusion.h"
#include "nasa/runtime.h"
#include "nasa/spec.h"
#include "nasa/supernet_weights.h"

namespace {

using nasa::hw::Counter;

TEST(Energy, SramFiguresMeetHorowitz) {
  // 64-bit accesses: 8 KB 10 pJ, 32 KB 20 pJ, 1 MB 100 pJ (the square-root law: 113)
  EXPECT_DOUBLE_EQ(nasa::energy::sram_pj(8192, 8), 10.0);
  EXPECT_DOUBLE_EQ(nasa::energy::sram_pj(32768, 8), 20.0);
  EXPECT_NEAR(nasa::energy::sram_pj(1 << 20, 8), 100.0, 15.0);
  // an access of b bytes: b/8 of the 64-bit one
  EXPECT_DOUBLE_EQ(nasa::energy::sram_pj(8192, 1), 1.25);
}

struct Bench {
  nasa::spec::Supernet net = nasa::spec::builtin_space("fmnist-mb14");
  nasa::compile::QSupernet q;
  std::vector<std::vector<uint8_t>> imgs;
  std::vector<uint8_t> labels;
  Bench() {
    const auto w = nasa::weights::random_weights(net, 3);
    const size_t px = static_cast<size_t>(net.in_c) * net.in_h * net.in_w;
    const std::vector<nasa::floatnet::Tensor> calib(
        1, nasa::floatnet::Tensor{net.in_c, net.in_h, net.in_w, std::vector<float>(px, 0.5f)});
    q = nasa::compile::quantize(net, w, calib);
    std::mt19937 rng(3);
    imgs.assign(8, std::vector<uint8_t>(px));
    for (auto& im : imgs) {
      for (auto& p : im) p = static_cast<uint8_t>(rng());
    }
    labels.assign(imgs.size(), 0);
  }
};

nasa::runtime::Runtime ref_runtime(const Bench& s, const nasa::hw::Config& cfg) {
  return nasa::runtime::Runtime(
      s.q, cfg,
      [](const nasa::hw::Config& c, uint64_t m) { return nasa::device::make_ref_device(c, m); },
      "ref");
}

TEST(Energy, FusedBatchCostsLessPerCandidateThanAlone) {
  const Bench s;
  for (const char* name : {"sim", "large"}) {
    SCOPED_TRACE(name);
    const auto& cfg = nasa::config_by_name(name);
    auto rt = ref_runtime(s, cfg);
    const auto cands = nasa::fusion::random_candidates(s.net, 6, 9);
    std::array<uint64_t, nasa::hw::kNumCounters> alone{};
    for (const auto& c : cands) {
      const auto r = rt.evaluate(c, s.imgs, s.labels);
      // every input byte of the candidate's first layer passed through the input buffer, and
      // every weight byte of the stem through the weight ring
      const auto ci = [&](Counter k) { return r.counters[static_cast<size_t>(k)]; };
      EXPECT_GE(ci(Counter::InBufWrites) * cfg.mem_bytes,
                s.imgs.size() * s.imgs[0].size());
      EXPECT_GT(ci(Counter::WBufWrites), 0u);
      EXPECT_GT(ci(Counter::PrmWrites), 0u);
      for (size_t i = 0; i < alone.size(); ++i) alone[i] += r.counters[i];
    }
    const auto f = rt.evaluate_fused(cands, 0, s.imgs, s.labels);
    const auto ea = nasa::energy::estimate(cfg, alone);
    const auto ef = nasa::energy::estimate(cfg, f.counters);
    for (const auto* b : {&ea, &ef}) {
      double sum = 0;
      for (const auto& e : b->events) {
        EXPECT_GE(e.count, 0.0) << e.name;
        EXPECT_GT(e.pj_each, 0.0) << e.name;
        sum += e.pj();
      }
      EXPECT_DOUBLE_EQ(sum, b->total_pj());
      EXPECT_GT(b->dram_share(), 0.0);
      EXPECT_LT(b->dram_share(), 1.0);
      EXPECT_GT(b->pj("mac"), 0.0);
      EXPECT_GT(b->pj("in_buf_write"), 0.0);
    }
    // fusion runs fewer MACs and moves fewer DRAM bytes: less energy for the same candidates
    EXPECT_LT(ef.pj("mac"), ea.pj("mac"));
    EXPECT_LT(ef.pj("dram"), ea.pj("dram"));
    EXPECT_LT(ef.total_pj(), ea.total_pj());
  }
}

}  // namespace
