// The memoized cycle model (cycles::LayerMemo) against replaying the engine: for compiled programs
// of many images on every configuration, the memo's counters equal cycles::program of the whole
// program, counter by counter, and a program seen before is not replayed again; layers streaming
// through the engine (each loading while the one before computes) make the program faster than
// the sum of its layers run alone (cycles::add_layer), with the same work and fewer DRAM reads
// (the images of a layer share its weights on chip).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "nasa/compiler.h"
#include "nasa/cycle_model.h"
#include "nasa/fusion.h"
#include "nasa/supernet_weights.h"
#include "tiny_net.h"

namespace {

using nasa::cycles::Counters;

void check_programs(const nasa::spec::Supernet& net, const nasa::hw::Config& cfg, size_t images,
                    uint64_t seed) {
  const auto w = nasa::weights::random_weights(net, seed);
  const std::vector<nasa::floatnet::Tensor> calib(
      1, nasa::floatnet::Tensor{net.in_c, net.in_h, net.in_w,
                                std::vector<float>(static_cast<size_t>(net.in_c) * net.in_h *
                                                       net.in_w,
                                                   0.5f)});
  const auto q = nasa::compile::quantize(net, w, calib);
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::vector<std::vector<uint8_t>> imgs(images);
  for (auto& im : imgs) {
    im.resize(static_cast<size_t>(net.in_h) * net.in_w * net.in_c);
    for (auto& p : im) p = static_cast<uint8_t>(rng());
  }
  for (const auto& c : nasa::fusion::random_candidates(net, 6, seed)) {
    const auto p = nasa::compile::compile(q, c, imgs, cfg);
    auto dram = nasa::cycles::default_dram(cfg);
    dram.scratch_base = p.scratch_base;  // (its activations in the on-chip scratch)
    const Counters whole = nasa::cycles::program(p.descs, p.desc_addr, cfg, dram);
    Counters summed{}, memoized{};
    nasa::cycles::LayerMemo memo(cfg, dram);
    for (size_t i = 0; i < p.descs.size(); ++i) {
      const auto at = static_cast<uint32_t>(p.desc_addr + i * nasa::hw::kDescBytes);
      nasa::cycles::add_layer(p.descs[i], cfg, dram, summed, at);
    }
    memo.add_program(p.descs, p.desc_addr, memoized);
    const std::string what = std::string(cfg.name) + " " + nasa::spec::format_candidate(c);
    EXPECT_EQ(whole, memoized) << what;
    // the same program again: from the memo
    const size_t misses = memo.misses(), hits = memo.hits();
    Counters again{};
    memo.add_program(p.descs, p.desc_addr, again);
    EXPECT_EQ(whole, again) << what;
    EXPECT_EQ(memo.misses(), misses) << what;
    EXPECT_EQ(memo.hits(), hits + 1) << what;
    // every layer after the first had its descriptor fetched and decoded while the one before
    // ran: its fetch is no stall, and the program is faster than its layers alone
    const auto cyc = static_cast<size_t>(nasa::hw::Counter::Cycles);
    const auto desc = static_cast<size_t>(nasa::hw::Counter::StallDesc);
    EXPECT_LT(whole[cyc], summed[cyc]) << what;
    EXPECT_LT(whole[desc], summed[desc]) << what;
    // the same work (stalls may shift: loads of one layer share the port with another's writes)
    for (auto id : {nasa::hw::Counter::PeBusy, nasa::hw::Counter::VecBusy, nasa::hw::Counter::Macs,
                    nasa::hw::Counter::DramWrBytes}) {
      const auto k = static_cast<size_t>(id);
      EXPECT_EQ(whole[k], summed[k]) << what << " counter " << k;
    }
    // compiled layer-major, each layer runs for every image in a row: from the second image on it
    // computes from the weights left on chip, and reads only its input
    const auto rd = static_cast<size_t>(nasa::hw::Counter::DramRdBytes);
    EXPECT_LT(whole[rd], summed[rd]) << what;
  }
}

TEST(CycleMemo, EqualsTheEngineReplayOnFmnistPrograms) {
  const auto net = nasa::spec::builtin_space("fmnist-mb14");
  for (const char* name : {"sim", "large"}) check_programs(net, nasa::config_by_name(name), 9, 11);
}

TEST(CycleMemo, EqualsTheEngineReplayOnTinyPrograms) {
  const std::vector<nasa::spec::OpSpec> ops = {nasa::spec::parse_op("mb_k3_e3"),
                                               nasa::spec::parse_op("conv_k3"),
                                               nasa::spec::parse_op("skip")};
  const auto net = nasa::testing::tiny_net(3, ops);
  for (const char* name : {"fpga", "sim", "large"}) {
    check_programs(net, nasa::config_by_name(name), 7, 5);
  }
}

}  // namespace
