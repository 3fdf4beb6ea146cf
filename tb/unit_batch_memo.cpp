// The batch model's timing memo (sw/model/batch_model.cpp) against simulating every cycle: for
// fused batches of the default space on every configuration that runs it, batch::run with the
// memo gives the same counters, profile, tables and memory as without it, and it replays most
// stretches between evaluations (those of every mini-batch after the first) instead of
// simulating them.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "nasa/batch_model.h"
#include "nasa/compiler.h"
#include "nasa/fusion.h"
#include "nasa/spec.h"
#include "nasa/supernet_weights.h"

namespace {

void check_memo(const nasa::spec::Supernet& net, const nasa::hw::Config& cfg, size_t cands,
                size_t images, uint32_t mini_batch, uint64_t seed) {
  SCOPED_TRACE(::testing::Message() << net.name << " on " << cfg.name << ", " << cands
                                    << " candidates x " << images << " images, mini-batch "
                                    << mini_batch << ", seed " << seed);
  const auto w = nasa::weights::random_weights(net, seed);
  const size_t px = static_cast<size_t>(net.in_c) * net.in_h * net.in_w;
  const std::vector<nasa::floatnet::Tensor> calib(
      1, nasa::floatnet::Tensor{net.in_c, net.in_h, net.in_w, std::vector<float>(px, 0.5f)});
  const auto q = nasa::compile::quantize(net, w, calib);
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::vector<std::vector<uint8_t>> imgs(images, std::vector<uint8_t>(px));
  std::vector<uint8_t> labels(images);
  for (auto& im : imgs) {
    for (auto& p : im) p = static_cast<uint8_t>(rng());
  }
  for (auto& l : labels) l = static_cast<uint8_t>(rng() % static_cast<uint32_t>(net.classes));
  nasa::compile::BatchOptions opt;
  opt.mini_batch = mini_batch;
  const auto cs = nasa::fusion::random_candidates(net, cands, seed);
  const auto bp = nasa::compile::compile_batch(q, cs, 0, imgs, labels, cfg, opt);

  std::vector<uint8_t> mem_a = bp.program.image, mem_b = bp.program.image;
  nasa::batch::Tables ta, tb;
  const auto a = nasa::batch::run(mem_a, cfg, bp.regs, bp.program.win_base,
                                  bp.program.win_limit, bp.program.scratch_base, ta,
                                  /*use_memo=*/true);
  const auto b = nasa::batch::run(mem_b, cfg, bp.regs, bp.program.win_base,
                                  bp.program.win_limit, bp.program.scratch_base, tb,
                                  /*use_memo=*/false);
  ASSERT_EQ(a.err, nasa::hw::Err::None);
  ASSERT_EQ(b.err, nasa::hw::Err::None);
  for (size_t c = 0; c < a.counters.size(); ++c) {
    EXPECT_EQ(a.counters[c], b.counters[c]) << "counter " << c;
  }
  EXPECT_EQ(a.layers_done, b.layers_done);
  EXPECT_EQ(a.profile.control_cycles, b.profile.control_cycles);
  ASSERT_EQ(a.profile.by_node.size(), b.profile.by_node.size());
  for (size_t n = 0; n < a.profile.by_node.size(); ++n) {
    EXPECT_EQ(a.profile.by_node[n].cycles, b.profile.by_node[n].cycles) << "node " << n;
    EXPECT_EQ(a.profile.by_node[n].macs, b.profile.by_node[n].macs) << "node " << n;
    EXPECT_EQ(a.profile.by_node[n].layers, b.profile.by_node[n].layers) << "node " << n;
  }
  for (size_t o = 0; o < a.profile.by_op.size(); ++o) {
    EXPECT_EQ(a.profile.by_op[o].cycles, b.profile.by_op[o].cycles) << "op " << o;
  }
  EXPECT_EQ(ta.correct, tb.correct);
  EXPECT_EQ(ta.leaf, tb.leaf);
  EXPECT_TRUE(mem_a == mem_b) << "memory differs";
  // the memo replays: the mini-batches after the first repeat its stretches
  EXPECT_GT(a.memo_hits, a.memo_stretches);
  EXPECT_EQ(b.memo_hits, 0u);
  std::printf("%s %s: %llu cycles, memo %llu hits, %llu stretches simulated\n", net.name.c_str(),
              cfg.name.data(), static_cast<unsigned long long>(a.counters[0]),
              static_cast<unsigned long long>(a.memo_hits),
              static_cast<unsigned long long>(a.memo_stretches));
}

TEST(BatchMemo, EqualsSimulatingEveryCycle) {
  const auto net = nasa::spec::builtin_space("fmnist-mb14");
  for (const char* name : {"sim", "large"}) {
    const auto& cfg = nasa::config_by_name(name);
    check_memo(net, cfg, 12, 40, 8, 5);
    check_memo(net, cfg, 5, 24, 1, 6);
    check_memo(net, cfg, 30, 48, 16, 7);
  }
}

}  // namespace
