// Random layers (each run for a mini-batch of 3 images: the same weights on fresh inputs, so the
// images overlap in the engine and the later ones compute from the weights left on chip), and
// programs of several random layers, independent or depending on each other, on every hardware
// configuration, RTL against the reference model: every byte of memory must match, every layer
// must complete in the cycle the cycle model says, and the cycle model must be within 3% of the
// RTL's cycle counter on every one.
// Knobs: NASA_COSIM_LAYERS (layers per configuration; default 2000 sim, 200 fpga and large;
// a tenth as many programs and chains),
// NASA_COSIM_SEED (default 1), NASA_FST_ON_FAIL=1 (waveform of each failing layer).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "nasa/cycle_model.h"
#include "nasa/desc.h"
#include "nasa/sim/cosim.h"
#include "nasa/sim/env.h"
#include "nasa/sim/random_layer.h"
#include "nasa/sim/memcheck.h"

#include "cosim_cases.h"

namespace nasa::sim {
namespace {

constexpr double kMaxCycleErrorPct = 3.0;
constexpr uint32_t kImages = 3;  // images per random layer
constexpr int kMaxReported = 10;  // failures printed in full before the rest are only counted

class CosimRandom : public ::testing::TestWithParam<std::string> {};

// Runs programs make(0..count-1) on the RTL and the reference model: every byte of memory must
// match and the cycle model must be within 3%. `rerun(i)` says how to reproduce item i. On a
// configuration with an on-chip scratch about half the programs place activations in its window
// (ProgramBuilder::activation): some items must have read from it and some written into it, by
// the RTL's counters (docs/engine.md "On-chip scratch").
void run_suite(const hw::Config& cfg, uint64_t count, uint64_t seed, const char* what,
               const std::function<Program(uint64_t)>& make,
               const std::function<std::string(uint64_t)>& rerun) {
  Cosim cs(cfg, cycles::default_dram(cfg));
  int failures = 0;
  double max_err = 0, sum_err = 0;
  uint64_t measured = 0, sc_reads = 0, sc_writes = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const Program p = make(i);
    const CosimResult r = run_case(cs, p);
    if (r.ok) {
      sc_reads += r.rtl_counters[static_cast<int>(hw::Counter::ScratchReads)] != 0;
      sc_writes += r.rtl_counters[static_cast<int>(hw::Counter::ScratchWrites)] != 0;
    }
    const bool slow_model = r.ok && r.cycle_error_pct > kMaxCycleErrorPct;
    if (r.ok) {
      max_err = std::max(max_err, r.cycle_error_pct);
      sum_err += r.cycle_error_pct;
      ++measured;
    }
    if (r.ok && !slow_model) continue;
    if (++failures > kMaxReported) continue;
    std::string msg = fmt::format("{} {} of seed {} (reproduce: {})\n{}", what, i, seed, rerun(i),
                                  format_failure(p, r));
    if (slow_model) {
      msg += fmt::format("\n  cycle model error {:.2f}% > {:.1f}%", r.cycle_error_pct,
                         kMaxCycleErrorPct);
    }
    msg += dump_failure_fst(fmt::format("cosim_random_{}_{}", cfg.name, i),
                            [&](const std::string& path) { cs.run(p, path); });
    ADD_FAILURE() << msg;
  }
  EXPECT_EQ(failures, 0) << failures << " of " << count << " " << what << "s failed (seed "
                         << seed << ")";
  fmt::print("[{}] {} {}s, seed {}: {} failing, cycle model error max {:.2f}% mean {:.2f}%\n",
             cfg.name, count, what, seed, failures, max_err,
             measured ? sum_err / static_cast<double>(measured) : 0.0);
  fmt::print("[{}] on-chip scratch: {} {}s read from it, {} wrote into it\n", cfg.name, sc_reads,
             what, sc_writes);
  if (cfg.scratch_bytes != 0 && count >= 20) {
    EXPECT_GT(sc_reads, 0u);
    EXPECT_GT(sc_writes, 0u);
  }
}

// (and the generator covers K-split tiles of 2 and 4 column groups: docs/engine.md "K-split
// tiles"; a layer's last channel tile is the one that may split)
TEST_P(CosimRandom, LayersMatchReference) {
  const hw::Config& cfg = config_by_name(GetParam());
  const uint64_t layers = env_number("NASA_COSIM_LAYERS", cfg.name == "sim" ? 2000 : 200);
  const uint64_t seed = env_number("NASA_COSIM_SEED", 1);
  std::array<uint64_t, 5> split{};  // layers whose last tile runs in f column groups
  run_suite(
      cfg, layers, seed, "layer",
      [&](uint64_t i) {
        Program p = random_stream(derive_seed(seed, i), cfg, kImages);
        const Desc& d = p.descs.front();
        const uint32_t cg = (d.cout - 1) % cfg.cols + 1;
        ++split[cycles::ksplit_groups(d, cfg, cg)];
        return p;
      },
      [&](uint64_t i) {
        return fmt::format("nasa-cosim --config {} --stream {} --seed {} --only-layer {}",
                           cfg.name, kImages, seed, i);
      });
  fmt::print("[{}] K-split: {} layers' last tile in 2 column groups, {} in 4\n", cfg.name,
             split[2], split[4]);
  if (layers >= 100 && cfg.cols >= 4) {
    EXPECT_GT(split[2], 0u);
    EXPECT_GT(split[4], 0u);
  }
}

// Programs of 2-5 independent random layers: what happens between layers (the next descriptor
// fetched and decoded while a layer finishes, a prefetched layer's start and errors).
TEST_P(CosimRandom, ProgramsMatchReference) {
  const hw::Config& cfg = config_by_name(GetParam());
  const uint64_t programs = env_number("NASA_COSIM_LAYERS", cfg.name == "sim" ? 2000 : 200) / 10;
  const uint64_t seed = env_number("NASA_COSIM_SEED", 1);
  run_suite(
      cfg, programs, seed, "program",
      [&](uint64_t i) { return random_program(derive_seed(seed, i), cfg); },
      [&](uint64_t i) {
        return fmt::format("nasa-cosim --config {} --programs --seed {} --only-layer {}", cfg.name,
                           seed, i);
      });
}

// Programs of 2-6 random layers that depend on each other: a layer that reads the previous one's
// output waits for it to be written, one that writes over the previous one's input waits for
// nothing (that input is read), one that repeats the previous layer on a fresh input computes from
// its weights on chip.
TEST_P(CosimRandom, ChainsMatchReference) {
  const hw::Config& cfg = config_by_name(GetParam());
  const uint64_t chains = env_number("NASA_COSIM_LAYERS", cfg.name == "sim" ? 2000 : 200) / 10;
  const uint64_t seed = env_number("NASA_COSIM_SEED", 1);
  run_suite(
      cfg, chains, seed, "chain", [&](uint64_t i) { return random_chain(derive_seed(seed, i), cfg); },
      [&](uint64_t i) {
        return fmt::format("nasa-cosim --config {} --chains --seed {} --only-layer {}", cfg.name,
                           seed, i);
      });
}

INSTANTIATE_TEST_SUITE_P(Configs, CosimRandom, ::testing::ValuesIn(engine_config_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nasa::sim
