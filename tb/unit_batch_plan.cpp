// Batch runs of a target (docs/fusion.md "Batch runs of a target"): compile::plan_batch splits a
// batch into as many runs as the target's memory and tables need, each of which compiles within
// the address space, and the runtime's merged result of the runs equals one run's; a candidate
// program's images split the same way (compile::images_per_program).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <random>
#include <vector>

#include "nasa/compiler.h"
#include "nasa/device.h"
#include "nasa/fusion.h"
#include "nasa/runtime.h"
#include "nasa/spec.h"
#include "nasa/supernet_weights.h"
#include "thrown_message.h"
#include "tiny_net.h"

namespace {

using namespace nasa;

struct Data {
  std::vector<std::vector<uint8_t>> images;
  std::vector<uint8_t> labels;
};

Data random_data(const spec::Supernet& net, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Data d{std::vector<std::vector<uint8_t>>(
             n, std::vector<uint8_t>(static_cast<size_t>(net.in_h) * net.in_w * net.in_c)),
         std::vector<uint8_t>(n)};
  for (auto& im : d.images) {
    for (auto& p : im) p = static_cast<uint8_t>(rng());
  }
  for (auto& l : d.labels) l = static_cast<uint8_t>(rng() % static_cast<uint32_t>(net.classes));
  return d;
}

compile::QSupernet quantized(const spec::Supernet& net, uint64_t seed) {
  const Data d = random_data(net, 2, static_cast<uint32_t>(seed));
  std::vector<floatnet::Tensor> calib;
  for (const auto& im : d.images) {
    calib.push_back(floatnet::image_from_u8(im.data(), net.in_h, net.in_w, net.in_c));
  }
  return compile::quantize(net, weights::random_weights(net, seed), calib);
}

runtime::Runtime ref_runtime(const compile::QSupernet& q, const hw::Config& cfg) {
  return runtime::Runtime(
      q, cfg, [](const hw::Config& c, uint64_t m) { return device::make_ref_device(c, m); }, "ref");
}

// Every candidate in exactly one group, in order; each group's images in runs covering them in
// order; every run compiles within the address space.
void check_plan(const compile::QSupernet& q, std::span<const spec::Candidate> cands,
                const std::vector<compile::BatchRun>& plan, const Data& d, const hw::Config& cfg,
                const compile::BatchOptions& opt) {
  ASSERT_FALSE(plan.empty());
  size_t next_cand = 0, next_img = 0;
  for (const auto& r : plan) {
    if (r.img_begin == 0) {
      EXPECT_EQ(next_img, next_cand == 0 ? 0u : d.images.size()) << "a group left images out";
      EXPECT_EQ(r.cand_begin, next_cand);
      EXPECT_GT(r.cand_end, r.cand_begin);
      next_cand = r.cand_end;
      next_img = 0;
    }
    EXPECT_EQ(r.img_begin, next_img);
    EXPECT_GT(r.img_end, r.img_begin);
    EXPECT_LE(r.mini_batch, opt.mini_batch);
    EXPECT_LE(r.mini_batch, r.img_end - r.img_begin);
    next_img = r.img_end;
    compile::BatchOptions o = opt;
    o.mini_batch = r.mini_batch;
    const auto imgs = std::span(d.images).subspan(r.img_begin, r.img_end - r.img_begin);
    const auto lbls = std::span(d.labels).subspan(r.img_begin, r.img_end - r.img_begin);
    const auto bp = compile::compile_batch(
        q, cands.subspan(r.cand_begin, r.cand_end - r.cand_begin), 0, imgs, lbls, cfg, o);
    EXPECT_LE(bp.program.image.size(), cfg.addr_space());
    // an image run stops only where the next image would not fit beside it
    if (r.img_end < d.images.size()) {
      const auto more = std::span(d.images).subspan(r.img_begin, r.img_end - r.img_begin + 1);
      const auto more_l = std::span(d.labels).subspan(r.img_begin, r.img_end - r.img_begin + 1);
      EXPECT_THROW(compile::compile_batch(q, cands.subspan(r.cand_begin, r.cand_end - r.cand_begin),
                                          0, more, more_l, cfg, o),
                   std::runtime_error);
    }
  }
  EXPECT_EQ(next_cand, cands.size());
  EXPECT_EQ(next_img, d.images.size());
}

// The merged node table: each leaf is a node of the last layer whose path up is its candidate.
void check_leaves(const runtime::FusedResult& r, std::span<const spec::Candidate> cands) {
  ASSERT_EQ(r.leaf.size(), cands.size());
  for (size_t c = 0; c < cands.size(); ++c) {
    uint32_t n = r.leaf[c];
    for (size_t i = cands[c].size(); i-- > 0;) {
      ASSERT_LT(n, r.nodes.size());
      EXPECT_EQ((r.nodes[n] >> 16) & 0xFFu, i) << "candidate " << c;
      EXPECT_EQ((r.nodes[n] >> 24) & 0xFFu, static_cast<uint32_t>(cands[c][i]));
      n = r.nodes[n] & 0xFFFFu;
    }
    ASSERT_LT(n, r.nodes.size());
    EXPECT_EQ(r.nodes[n] & 0xFFFFu, hw::kNoNode) << "candidate " << c << ": not at a root";
  }
}

TEST(BatchPlan, OneRunWhenTheBatchFits) {
  const auto net = spec::builtin_space("fmnist-mb14");
  const auto q = compile::quantize_shapes(net);
  const auto cands = fusion::random_candidates(net, 8, 3);
  compile::BatchOptions opt;
  opt.mini_batch = 32;
  const auto plan = compile::plan_batch(q, cands, 0, 20, config_by_name("sim"), opt);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].cand_begin, 0u);
  EXPECT_EQ(plan[0].cand_end, 8u);
  EXPECT_EQ(plan[0].img_begin, 0u);
  EXPECT_EQ(plan[0].img_end, 20u);
  EXPECT_EQ(plan[0].mini_batch, 20u);
}

// The default supernet on the board: 225,186 weights in 128 KB. The batch runs in several runs,
// each compiling within the address space, none of which could take one more image.
TEST(BatchPlan, TheBoardSplitsTheDefaultSupernet) {
  const auto net = spec::builtin_space("fmnist-mb14");
  const auto q = compile::quantize_shapes(net);
  const auto& cfg = config_by_name("up5k");
  const auto cands = fusion::random_candidates(net, 6, 4);
  const Data d = random_data(net, 40, 1);
  compile::BatchOptions opt;
  opt.mini_batch = 32;
  EXPECT_THROW(compile::compile_batch(q, cands, 0, d.images, d.labels, cfg, opt),
               std::runtime_error);
  const auto plan = compile::plan_batch(q, cands, 0, d.images.size(), cfg, opt);
  EXPECT_GT(plan.size(), 1u);
  check_plan(q, cands, plan, d, cfg, opt);
}

// Runs on an address space made small enough to split a batch of the tiny supernet (candidate
// groups and image runs) give the one run's classifications and logits.
TEST(BatchPlan, SplitRunsGiveTheResultsOfOneRun) {
  const std::vector<spec::OpSpec> ops = {spec::parse_op("mb_k3_e3"), spec::parse_op("conv_k3"),
                                         spec::parse_op("mb_k5_e3"), spec::parse_op("skip")};
  const auto net = nasa::testing::tiny_net(3, ops);
  const auto q = quantized(net, 9);
  const auto cands = fusion::random_candidates(net, 7, 2);
  const Data d = random_data(net, 24, 2);
  compile::BatchOptions opt;
  opt.mini_batch = 8;
  opt.dump_logits = true;
  const hw::Config& base = config_by_name("fpga");
  const auto whole = compile::compile_batch(q, cands, 0, d.images, d.labels, base, opt);
  compile::BatchOptions one = opt;
  one.mini_batch = 1;
  const auto single =
      compile::compile_batch(q, std::span(cands).first(1), 0, std::span(d.images).first(1),
                             std::span(d.labels).first(1), base, one);
  hw::Config small = base;
  small.addr_bits = static_cast<uint32_t>(std::bit_width(single.program.image.size() * 2 - 1));
  ASSERT_LT(small.addr_space(), whole.program.image.size()) << "the batch would not split";
  const auto plan = compile::plan_batch(q, cands, 0, d.images.size(), small, opt);
  EXPECT_GT(plan.size(), 2u);
  check_plan(q, cands, plan, d, small, opt);

  auto a = ref_runtime(q, base).evaluate_fused(cands, 0, d.images, d.labels, opt);
  auto b = ref_runtime(q, small).evaluate_fused(cands, 0, d.images, d.labels, opt);
  EXPECT_EQ(a.runs, 1u);
  EXPECT_EQ(b.runs, plan.size());
  EXPECT_EQ(a.candidates, b.candidates);
  EXPECT_EQ(a.correct, b.correct);
  EXPECT_EQ(a.logits, b.logits);
  check_leaves(b, cands);
  // the runs' costs add up: at least the one run's MACs (groups repeat shared prefixes)
  EXPECT_GE(b.macs, a.macs);
  ASSERT_TRUE(b.profile.has_value());
  uint64_t by_op = 0;
  for (const auto& u : b.profile->by_op) by_op += u.cycles;
  EXPECT_EQ(by_op + b.profile->control_cycles, b.cycles);

  // a candidate program's images split likewise
  hw::Config tight = base;
  const auto prog1 = compile::compile(q, cands[0], std::span(d.images).first(1), base);
  tight.addr_bits = static_cast<uint32_t>(std::bit_width(prog1.image.size() * 2 - 1));
  const size_t per = compile::images_per_program(q, cands[0], d.images.size(), tight);
  EXPECT_GE(per, 1u);
  EXPECT_LT(per, d.images.size());
  const auto pa = ref_runtime(q, base).evaluate(cands[0], d.images, d.labels);
  const auto pb = ref_runtime(q, tight).evaluate(cands[0], d.images, d.labels);
  EXPECT_EQ(pa.programs, 1u);
  EXPECT_EQ(pb.programs, (d.images.size() + per - 1) / per);
  EXPECT_EQ(pa.logits, pb.logits);
  EXPECT_EQ(pa.correct, pb.correct);
}

// Random targets (address space, node table, candidate limit), batches and mini-batches: every
// plan covers the batch within the target, and its merged result is the one run's.
TEST(BatchPlan, RandomTargetsGiveTheResultsOfOneRun) {
  const std::vector<spec::OpSpec> ops = {spec::parse_op("mb_k3_e3"), spec::parse_op("conv_k3"),
                                         spec::parse_op("skip")};
  const auto net = nasa::testing::tiny_net(3, ops);
  const auto q = quantized(net, 12);
  const hw::Config& base = config_by_name("fpga");
  std::mt19937 rng(21);
  // trials of several runs, of several candidate groups, of several image runs in a group
  int split = 0, grouped = 0, imaged = 0;
  for (int trial = 0; trial < 12; ++trial) {
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    const auto cands = fusion::random_candidates(net, 1 + rng() % 9, rng());
    const Data d = random_data(net, 1 + rng() % 40, static_cast<uint32_t>(rng()));
    compile::BatchOptions opt;
    opt.mini_batch = 1 + rng() % 8;
    opt.dump_logits = rng() % 2 == 0;
    compile::BatchOptions one = opt;
    one.mini_batch = 1;
    size_t largest = 0;  // the largest candidate alone with one image
    for (size_t c = 0; c < cands.size(); ++c) {
      largest = std::max(largest, compile::compile_batch(q, std::span(cands).subspan(c, 1), 0,
                                                         std::span(d.images).first(1),
                                                         std::span(d.labels).first(1), base, one)
                                      .program.image.size());
    }
    hw::Config t = base;
    t.addr_bits = static_cast<uint32_t>(std::bit_width(largest - 1)) +
                  static_cast<uint32_t>(rng() % 2);
    t.max_cands = 1 + rng() % 4;
    t.node_cap = static_cast<uint32_t>(net.layers.size()) + 1 + rng() % 8;  // one candidate fits
    const auto plan = compile::plan_batch(q, cands, 0, d.images.size(), t, opt);
    check_plan(q, cands, plan, d, t, opt);
    split += plan.size() > 1;
    grouped += plan.back().cand_begin > 0;
    imaged += std::any_of(plan.begin(), plan.end(), [](const auto& r) { return r.img_begin > 0; });
    const auto a = ref_runtime(q, base).evaluate_fused(cands, 0, d.images, d.labels, opt);
    const auto b = ref_runtime(q, t).evaluate_fused(cands, 0, d.images, d.labels, opt);
    EXPECT_EQ(b.runs, plan.size());
    EXPECT_EQ(a.candidates, b.candidates);
    EXPECT_EQ(a.correct, b.correct);
    EXPECT_EQ(a.logits, b.logits);
    check_leaves(b, cands);
    if (HasFailure()) return;
  }
  EXPECT_GE(split, 6) << "the random targets should mostly split their batches";
  EXPECT_GE(grouped, 3) << "and often into candidate groups";
  EXPECT_GE(imaged, 3) << "and image runs";
  std::printf("%d of 12 batches split: %d into candidate groups, %d into image runs\n", split,
              grouped, imaged);
}

// The runs of a plan share one device: a run after the first writes what changed (another
// mini-batch's images), not the weights and templates the device holds from the run before,
// and after a run everything but the hardware-read regions is written again.
TEST(BatchPlan, ARunRewritesOnlyWhatChanged) {
  const std::vector<spec::OpSpec> ops = {spec::parse_op("mb_k3_e3"), spec::parse_op("conv_k3"),
                                         spec::parse_op("mb_k5_e3")};
  const auto net = nasa::testing::tiny_net(3, ops);
  const auto q = quantized(net, 3);
  const auto cands = fusion::random_candidates(net, 4, 5);
  const Data d1 = random_data(net, 4, 1), d2 = random_data(net, 4, 2);
  const hw::Config& cfg = config_by_name("fpga");
  compile::BatchOptions opt;
  const auto b1 = compile::compile_batch(q, cands, 0, d1.images, d1.labels, cfg, opt);
  const auto b2 = compile::compile_batch(q, cands, 0, d2.images, d2.labels, cfg, opt);
  ASSERT_EQ(b1.program.image.size(), b2.program.image.size());
  auto dev = device::make_ref_device(cfg, cfg.addr_space());
  runtime::MemoryState st;
  EXPECT_EQ(runtime::write_image(*dev, b1.program, st), b1.program.image.size());
  // the batch runs: its arena, scratch and logits change on the device
  runtime::program_batch(*dev, b1, &st);
  const auto w = dev->run_batch(b1.program.win_base, b1.program.win_limit, 1ull << 32);
  ASSERT_TRUE(w.done);
  ASSERT_EQ(w.err, hw::Err::None);
  uint64_t weights = 0, outputs = 0;
  for (const auto& r : b2.program.regions) {
    if (r.input && r.name.find("weights") != std::string::npos) weights += r.size;
    if (!r.input) outputs += r.size;
  }
  ASSERT_GT(weights, 0u);
  const uint64_t second = runtime::write_image(*dev, b2.program, st);
  EXPECT_LE(second + weights, b2.program.image.size()) << "the weights were written again";
  EXPECT_GE(second, outputs) << "what the hardware writes must be written again";
  // the device holds the second image: every byte of it (outputs as written, inputs as held)
  std::vector<uint8_t> mem(b2.program.image.size());
  dev->read_memory(0, mem);
  EXPECT_TRUE(mem == b2.program.image) << "the device does not hold the second run's image";
}

TEST(BatchPlan, WhatDoesNotFitWithOneImageIsNamed) {
  const auto net = spec::builtin_space("fmnist-mb14");
  const auto q = compile::quantize_shapes(net);
  compile::BatchOptions opt;
  // on-chip generation needs every op's weights: 225,186 bytes and more on a 128 KB board
  const std::string gen = nasa::testing::message_of<std::runtime_error>(
      [&] { compile::plan_batch(q, {}, 4, 8, config_by_name("up5k"), opt); }, "runtime_error");
  EXPECT_NE(gen.find("generating 4 candidates on chip"), std::string::npos) << gen;
  EXPECT_NE(gen.find(fmt::format("{}-byte address space of config 'up5k'",
                                 config_by_name("up5k").addr_space())),
            std::string::npos)
      << gen;
  EXPECT_NE(gen.find("--random"), std::string::npos) << gen;
  // a candidate alone too large
  hw::Config tiny = config_by_name("up5k");
  tiny.addr_bits = 15;
  const auto cands = fusion::random_candidates(net, 2, 1);
  const std::string one = nasa::testing::message_of<std::runtime_error>(
      [&] { compile::plan_batch(q, cands, 0, 8, tiny, opt); }, "runtime_error");
  EXPECT_NE(one.find("candidate " + spec::format_candidate(cands[0])), std::string::npos) << one;
  EXPECT_NE(one.find("with one image"), std::string::npos) << one;
}

}  // namespace
