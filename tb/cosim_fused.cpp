// Batch mode (docs/fusion.md) on the ref model and the RTL: the hardware node table equals the
// software fused graph entry by entry, fused evaluation gives every candidate exactly the logits
// and correct count it gets alone, MACs executed equal the fused MACs, cand_gen equals its C++
// model, and bad batches stop with their specific error codes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "nasa/cand_gen.h"
#include "nasa/compiler.h"
#include "nasa/desc.h"
#include "nasa/device.h"
#include "nasa/fusion.h"
#include "nasa/runtime.h"
#include "nasa/sim/rtl_device.h"
#include "nasa/supernet_weights.h"
#include "tiny_net.h"

namespace {

using nasa::spec::Candidate;
using nasa::spec::OpKind;
using nasa::spec::OpSpec;

// The first `k` ops of a pool of MBConv / conv / skip variants on every layer.
nasa::spec::Supernet tiny_net(int layers, int k) {
  const std::vector<OpSpec> pool = {
      {OpKind::MBConv, 3, 1}, {OpKind::MBConv, 5, 1}, {OpKind::MBConv, 3, 3},
      {OpKind::Conv, 3, 1},   {OpKind::Skip, 3, 1},   {OpKind::MBConv, 7, 1},
      {OpKind::Conv, 5, 1},   {OpKind::MBConv, 5, 3}, {OpKind::MBConv, 3, 6},
      {OpKind::Conv, 7, 1},   {OpKind::MBConv, 7, 3}, {OpKind::MBConv, 5, 6},
      {OpKind::MBConv, 7, 6}};
  return nasa::testing::tiny_net(layers, std::span(pool).first(static_cast<size_t>(k)));
}

struct Net {
  nasa::spec::Supernet net;
  nasa::compile::QSupernet q;
  std::vector<std::vector<uint8_t>> images;
  std::vector<uint8_t> labels;
  Net(nasa::spec::Supernet n, size_t n_images, uint64_t seed) : net(std::move(n)) {
    std::mt19937 rng(static_cast<uint32_t>(seed));
    const size_t px = static_cast<size_t>(net.in_h) * net.in_w * net.in_c;
    for (size_t i = 0; i < n_images + 4; ++i) {
      std::vector<uint8_t> im(px);
      for (auto& v : im) v = static_cast<uint8_t>(rng() % 256);
      images.push_back(im);
      labels.push_back(static_cast<uint8_t>(rng() % static_cast<uint32_t>(net.classes)));
    }
    std::vector<nasa::floatnet::Tensor> calib;
    for (size_t i = n_images; i < n_images + 4; ++i) {
      calib.push_back(
          nasa::floatnet::image_from_u8(images[i].data(), net.in_h, net.in_w, net.in_c));
    }
    images.resize(n_images);
    labels.resize(n_images);
    q = nasa::compile::quantize(net, nasa::weights::random_weights(net, seed), calib);
  }
};

// A batch of `n` candidates drawn from a small pool of prefixes, so duplicates and shared
// prefixes are common.
std::vector<Candidate> batch_with_duplicates(const nasa::spec::Supernet& net, size_t n,
                                             std::mt19937& rng) {
  std::vector<Candidate> pool;
  const size_t pool_size = 1 + rng() % 6;
  for (size_t p = 0; p < pool_size; ++p) {
    Candidate c;
    for (const auto& l : net.layers) c.push_back(static_cast<int>(rng() % l.choices.size()));
    pool.push_back(c);
  }
  std::vector<Candidate> out;
  for (size_t j = 0; j < n; ++j) {
    Candidate c = pool[rng() % pool.size()];
    const size_t from = rng() % (c.size() + 1);  // keep a prefix, re-draw the rest
    for (size_t i = from; i < c.size(); ++i) {
      if (rng() % 2) c[i] = static_cast<int>(rng() % net.layers[i].choices.size());
    }
    out.push_back(c);
  }
  return out;
}

nasa::runtime::DeviceFactory ref_factory() {
  return [](const nasa::hw::Config& cfg, uint64_t bytes) {
    return nasa::device::make_ref_device(cfg, bytes);
  };
}
nasa::runtime::DeviceFactory rtl_factory() {
  return [](const nasa::hw::Config& cfg, uint64_t bytes) {
    return nasa::sim::make_rtl_device(cfg, bytes);
  };
}

uint32_t packed(const nasa::fusion::Node& n) {
  const uint32_t parent = n.parent == nasa::fusion::kNoParent ? 0xFFFFu : n.parent;
  return parent | (static_cast<uint32_t>(n.layer) & 0xFF) << 16 |
         (static_cast<uint32_t>(n.choice) & 0xFF) << 24;
}

void expect_tables_match(const nasa::fusion::FusedGraph& g, const nasa::runtime::FusedResult& r) {
  ASSERT_EQ(r.nodes.size(), g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    EXPECT_EQ(r.nodes[i], packed(g.nodes[i])) << "node " << i;
  }
  ASSERT_EQ(r.leaf.size(), g.leaf_of.size());
  for (size_t j = 0; j < g.leaf_of.size(); ++j) EXPECT_EQ(r.leaf[j], g.leaf_of[j]) << "cand " << j;
}

// MACs the engine executes per image for each node of the fused graph: its templates (the stem
// for the root), plus the head at every unique leaf (from the compiled templates, so it is the
// counter's definition).
std::vector<uint64_t> node_macs_per_image(const nasa::compile::BatchProgram& bp,
                                          const nasa::fusion::FusedGraph& g,
                                          const nasa::hw::Config& cfg) {
  const auto& t = bp.program.descs;
  auto run_macs = [&](uint32_t e) {
    uint64_t m = 0;
    for (uint32_t i = e & 0xFFFFFF; i < (e & 0xFFFFFF) + (e >> 24); ++i) {
      m += nasa::shape_of(t[i]).macs;
    }
    return m;
  };
  std::vector<uint64_t> m(g.nodes.size());
  m[0] = run_macs(bp.regs.stem_tpl);
  for (size_t i = 1; i < g.nodes.size(); ++i) {
    m[i] = run_macs(bp.regs.optab[static_cast<size_t>(g.nodes[i].layer) * cfg.max_choices +
                                  static_cast<size_t>(g.nodes[i].choice)]);
  }
  for (uint32_t leaf : g.unique_leaves) m[leaf] += run_macs(bp.regs.head_tpl);
  return m;
}

// A batch run's profile (the reference device's) accounts for every cycle and MAC of the run,
// and each node's MACs are its own templates' (and the head's at a leaf) for every image.
void expect_profile_accounts_for_the_run(const nasa::runtime::FusedResult& r,
                                         std::span<const uint64_t> node_macs, size_t images) {
  ASSERT_TRUE(r.profile.has_value());
  const nasa::batch::Profile& p = *r.profile;
  uint64_t op_cycles = 0, op_macs = 0, node_cycles = 0, node_total_macs = 0;
  for (const auto& u : p.by_op) {
    op_cycles += u.cycles;
    op_macs += u.macs;
  }
  for (const auto& u : p.by_node) {
    node_cycles += u.cycles;
    node_total_macs += u.macs;
  }
  EXPECT_EQ(op_cycles + p.control_cycles, r.cycles);
  EXPECT_EQ(node_cycles, op_cycles);
  EXPECT_EQ(op_macs, r.macs);
  EXPECT_EQ(node_total_macs, r.macs);
  EXPECT_GT(p.control_cycles, 0u);
  ASSERT_EQ(p.by_node.size(), node_macs.size());
  for (size_t n = 0; n < node_macs.size(); ++n) {
    EXPECT_EQ(p.by_node[n].macs, node_macs[n] * images) << "node " << n;
  }
}

TEST(FusedTables, HardwareNodeTableEqualsSoftwareGraph) {
  const Net t(tiny_net(6, 6), 1, 21);
  const auto& cfg = nasa::config_by_name("sim");
  nasa::runtime::Runtime ref(t.q, cfg, ref_factory(), "ref");
  nasa::runtime::Runtime rtl(t.q, cfg, rtl_factory(), "rtl");
  const uint32_t seed = 1234;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  for (size_t n : {1, 2, 3, 5, 8, 13, 21, 34, 55, 64}) {
    SCOPED_TRACE("batch size " + std::to_string(n));
    const auto batch = batch_with_duplicates(t.net, n, rng);
    const auto g = nasa::fusion::fuse(t.net, batch);
    const auto a = ref.evaluate_fused(batch, 0, t.images, t.labels);
    const auto b = rtl.evaluate_fused(batch, 0, t.images, t.labels);
    expect_tables_match(g, a);
    expect_tables_match(g, b);
    EXPECT_EQ(a.correct, b.correct);
    EXPECT_EQ(a.macs, b.macs);
  }
}

// Every counter of a batch run (cycles, busy, MACs, DRAM bytes, stalls) on two targets.
void expect_same_counters(const nasa::runtime::FusedResult& a,
                          const nasa::runtime::FusedResult& b) {
  for (size_t c = 0; c < a.counters.size(); ++c) {
    EXPECT_EQ(a.counters[c], b.counters[c]) << "counter " << c;
  }
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_GT(b.cycles, 0u);
}

// Every candidate's logits and correct count in the fused run equal its own run, on `rt`.
void check_fused_equals_alone(nasa::runtime::Runtime& rt, const Net& t,
                              const std::vector<Candidate>& batch, size_t alone_limit) {
  const auto& cfg = nasa::config_by_name("sim");
  nasa::compile::BatchOptions opt;
  opt.dump_logits = true;
  opt.mini_batch = 2;  // several mini-batches
  const auto r = rt.evaluate_fused(batch, 0, t.images, t.labels, opt);
  const auto g = nasa::fusion::fuse(t.net, batch);
  expect_tables_match(g, r);
  const auto bp = nasa::compile::compile_batch(t.q, batch, 0, t.images, t.labels, cfg, opt);
  const auto node_macs = node_macs_per_image(bp, g, cfg);
  uint64_t macs_per_image = 0;
  for (uint64_t m : node_macs) macs_per_image += m;
  EXPECT_EQ(r.macs, macs_per_image * t.images.size());
  if (rt.backend() == "ref") expect_profile_accounts_for_the_run(r, node_macs, t.images.size());
  for (size_t j = 0; j < batch.size() && j < alone_limit; ++j) {
    SCOPED_TRACE(nasa::spec::format_candidate(batch[j]));
    const auto alone = rt.evaluate(batch[j], t.images, t.labels);
    ASSERT_EQ(r.logits[j].size(), alone.logits.size());
    EXPECT_TRUE(std::equal(alone.logits.begin(), alone.logits.end(), r.logits[j].begin()));
    EXPECT_EQ(r.correct[j], alone.correct);
  }
}

TEST(Fused, RefEqualsAloneOnFmnistMb) {
  const Net t(nasa::spec::builtin_space("fmnist-mb"), 5, 7);
  nasa::runtime::Runtime ref(t.q, nasa::config_by_name("sim"), ref_factory(), "ref");
  std::mt19937 rng(99);
  check_fused_equals_alone(ref, t, batch_with_duplicates(t.net, 12, rng), 12);
}

TEST(Fused, RtlEqualsAloneAndRef) {
  const Net t(tiny_net(5, 5), 3, 5);
  const auto& cfg = nasa::config_by_name("sim");
  nasa::runtime::Runtime rtl(t.q, cfg, rtl_factory(), "rtl");
  nasa::runtime::Runtime ref(t.q, cfg, ref_factory(), "ref");
  std::mt19937 rng(77);
  const auto batch = batch_with_duplicates(t.net, 10, rng);
  check_fused_equals_alone(rtl, t, batch, 10);
  nasa::compile::BatchOptions opt;
  opt.dump_logits = true;
  const auto a = ref.evaluate_fused(batch, 0, t.images, t.labels, opt);
  const auto b = rtl.evaluate_fused(batch, 0, t.images, t.labels, opt);
  EXPECT_EQ(a.logits, b.logits);
  EXPECT_EQ(a.correct, b.correct);
  EXPECT_EQ(a.macs, b.macs);
  EXPECT_EQ(a.layers, b.layers);
  expect_same_counters(a, b);
}

// `batch` fused on the reference model and on the RTL: the same logits, correct answers and
// counters; returns the reference's result.
nasa::runtime::FusedResult fused_on_both(nasa::runtime::Runtime& ref, nasa::runtime::Runtime& rtl,
                                         const Net& t, std::span<const nasa::spec::Candidate> batch,
                                         const nasa::compile::BatchOptions& opt) {
  auto a = ref.evaluate_fused(batch, 0, t.images, t.labels, opt);
  const auto b = rtl.evaluate_fused(batch, 0, t.images, t.labels, opt);
  EXPECT_EQ(a.logits, b.logits);
  EXPECT_EQ(a.correct, b.correct);
  expect_same_counters(a, b);
  return a;
}

// Every candidate of a fused batch's result `a` (with dumped logits) equals its own candidate
// program on `rt`: logits of every image, correct answers.
void expect_each_equals_its_program(nasa::runtime::Runtime& rt, const Net& t,
                                    std::span<const nasa::spec::Candidate> batch,
                                    const nasa::runtime::FusedResult& a) {
  for (size_t j = 0; j < batch.size(); ++j) {
    SCOPED_TRACE(nasa::spec::format_candidate(batch[j]));
    const auto alone = rt.evaluate(batch[j], t.images, t.labels);
    ASSERT_EQ(a.logits[j].size(), alone.logits.size());
    EXPECT_TRUE(std::equal(alone.logits.begin(), alone.logits.end(), a.logits[j].begin()));
    EXPECT_EQ(a.correct[j], alone.correct);
  }
}

// The on-chip scratch (docs/engine.md "On-chip scratch"): a batch whose arena and node insides
// sit in the scratch's window (BatchOptions::on_chip, the default) gives every candidate the
// logits it has with every activation in memory, on the RTL as on the reference model (every
// counter equal), over mini-batches whose last one is shorter than the others; its activations
// never touch the memory port, so it moves fewer bytes there.
TEST(Fused, OnChipScratchEqualsMemoryAndRtl) {
  const Net t(tiny_net(4, 5), 5, 13);
  const auto& cfg = nasa::config_by_name("sim");
  ASSERT_GT(cfg.scratch_bytes, 0u);
  nasa::runtime::Runtime ref(t.q, cfg, ref_factory(), "ref");
  nasa::runtime::Runtime rtl(t.q, cfg, rtl_factory(), "rtl");
  std::mt19937 rng(2024);
  const auto batch = batch_with_duplicates(t.net, 9, rng);
  auto at = [](const nasa::runtime::FusedResult& r, nasa::hw::Counter c) {
    return r.counters[static_cast<size_t>(c)];
  };
  for (const uint32_t mb : {2u, 3u, 5u}) {
    SCOPED_TRACE(::testing::Message() << "mini-batch " << mb);
    nasa::compile::BatchOptions opt;
    opt.dump_logits = true;
    opt.mini_batch = mb;
    const auto on = fused_on_both(ref, rtl, t, batch, opt);
    opt.on_chip = false;
    const auto off = fused_on_both(ref, rtl, t, batch, opt);
    EXPECT_EQ(on.logits, off.logits);
    EXPECT_EQ(on.correct, off.correct);
    EXPECT_EQ(on.macs, off.macs);
    EXPECT_GT(at(on, nasa::hw::Counter::ScratchReads), 0u);
    EXPECT_GT(at(on, nasa::hw::Counter::ScratchWrites), 0u);
    EXPECT_EQ(at(off, nasa::hw::Counter::ScratchReads), 0u);
    EXPECT_EQ(at(off, nasa::hw::Counter::ScratchWrites), 0u);
    EXPECT_LT(at(on, nasa::hw::Counter::DramRdBytes) + at(on, nasa::hw::Counter::DramWrBytes),
              at(off, nasa::hw::Counter::DramRdBytes) + at(off, nasa::hw::Counter::DramWrBytes));
  }
}

// Row-banded templates (docs/fusion.md "Op table and templates"): a supernet whose 20x20 maps do
// not fit the `fpga` configuration's 2 KB input buffer runs those layers as bands in a batch run
// (the scheduler adds X, Y, S to each band's offsets); the RTL equals the reference model (logits,
// counters), and every candidate equals its own banded program.
TEST(Fused, RowBandedTemplatesOnFpga) {
  nasa::spec::Supernet n = nasa::testing::square_net("banded", 20, 4, {8, 3, 1});
  for (const auto& [c, s] : {std::pair{8, 1}, std::pair{8, 1}, std::pair{16, 2}}) {
    nasa::spec::ChoiceLayer l;
    l.out_channels = c;
    l.stride = s;
    for (const char* op : {"mb_k3_e3", "mb_k5_e1"}) l.choices.push_back(nasa::spec::parse_op(op));
    if (c == 8 && s == 1) l.choices.push_back(nasa::spec::parse_op("skip"));
    n.layers.push_back(l);
  }
  n.head = {16};  // 10x10x16 into the global pool: 1.6 KB, no band needed
  nasa::spec::validate(n);
  const Net t(n, 2, 9);  // (a candidate program of more images exceeds fpga's 128 KB)
  const auto& cfg = nasa::config_by_name("fpga");
  nasa::runtime::Runtime ref(t.q, cfg, ref_factory(), "ref");
  nasa::runtime::Runtime rtl(t.q, cfg, rtl_factory(), "rtl");
  std::mt19937 rng(31);
  const auto batch = batch_with_duplicates(t.net, 6, rng);
  nasa::compile::BatchOptions opt;
  opt.dump_logits = true;
  opt.mini_batch = 2;
  const auto bp = nasa::compile::compile_batch(t.q, batch, 0, t.images, t.labels, cfg, opt);
  size_t bands = 0;
  for (const auto& d : bp.program.descs) bands += nasa::is_band(d);
  EXPECT_GT(bands, 20u);  // the stem, the 20x20 convolutions and the head
  const auto a = fused_on_both(ref, rtl, t, batch, opt);
  expect_each_equals_its_program(ref, t, batch, a);
}

// Packed templates (docs/engine.md "Packed images"): on `sim` and `large` the convolutions and
// the classifier of a mini-batch of 5 run as groups of 3 and 2 images (the scheduler's offers of
// a group's other images are taken without a fetch), the last mini-batch of 1 unpacked; the RTL
// equals the reference model (logits, every counter) and every candidate equals its own program
// (packed too).
TEST(Fused, PackedTemplatesEqualAloneAndRtl) {
  const Net t(tiny_net(4, 5), 5, 11);
  std::mt19937 rng(99);
  const auto batch = batch_with_duplicates(t.net, 7, rng);
  for (const char* name : {"sim", "large"}) {
    SCOPED_TRACE(name);
    const auto& cfg = nasa::config_by_name(name);
    nasa::compile::BatchOptions opt;
    opt.dump_logits = true;
    opt.mini_batch = 5;
    const auto bp = nasa::compile::compile_batch(t.q, batch, 0, t.images, t.labels, cfg, opt);
    size_t packed = 0, fc = 0;
    for (const auto& d : bp.program.descs) {
      packed += nasa::is_packed(d);
      fc += nasa::is_packed(d) && d.op == static_cast<uint8_t>(nasa::hw::Op::Fc);
    }
    EXPECT_GT(packed, bp.program.descs.size() / 2);
    EXPECT_EQ(fc, 1u);  // the classifier
    const auto prog = nasa::compile::compile(t.q, batch[0], t.images, cfg);
    EXPECT_TRUE(std::any_of(prog.descs.begin(), prog.descs.end(),
                            [](const nasa::Desc& d) { return nasa::is_packed(d); }));
    nasa::runtime::Runtime ref(t.q, cfg, ref_factory(), "ref");
    nasa::runtime::Runtime rtl(t.q, cfg, rtl_factory(), "rtl");
    const auto a = fused_on_both(ref, rtl, t, batch, opt);
    expect_each_equals_its_program(rtl, t, batch, a);
  }
}

// Batch runs stream (docs/fusion.md "Streaming"): the reference model co-simulates the scheduler
// with the engine's cycle model, and every counter equals the RTL's, over batch sizes (1: the
// counter clear outlasts the fusion), mini-batches (1: every image its own walk) and
// configurations (fpga: 4x4 PEs, a 4-byte port, two weight tiles).
TEST(Fused, RtlCountersEqualRefWhileStreaming) {
  const Net t(tiny_net(4, 5), 5, 11);
  const uint32_t seed = 4321;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  for (const char* name : {"sim", "fpga", "large"}) {
    const auto& cfg = nasa::config_by_name(name);
    nasa::runtime::Runtime ref(t.q, cfg, ref_factory(), "ref");
    nasa::runtime::Runtime rtl(t.q, cfg, rtl_factory(), "rtl");
    for (const size_t n : {1, 4, 9, 40}) {
      for (const uint32_t mb : {1u, 2u, 5u}) {
        SCOPED_TRACE(::testing::Message() << name << ", " << n << " candidates, mini-batch " << mb);
        const auto batch = batch_with_duplicates(t.net, n, rng);
        nasa::compile::BatchOptions opt;
        opt.mini_batch = mb;
        const auto a = ref.evaluate_fused(batch, 0, t.images, t.labels, opt);
        const auto b = rtl.evaluate_fused(batch, 0, t.images, t.labels, opt);
        EXPECT_EQ(a.correct, b.correct);
        expect_same_counters(a, b);
      }
    }
    // candidates generated on chip (cand_gen's accesses before the fusion unit's): sampled, and
    // mutated from or crossed over parents it reads
    for (const auto mode : {nasa::hw::GenMode::Sample, nasa::hw::GenMode::Mutate,
                            nasa::hw::GenMode::Crossover}) {
      SCOPED_TRACE(::testing::Message() << name << ", 24 candidates generated in mode "
                                        << static_cast<int>(mode));
      nasa::compile::BatchOptions opt;
      opt.mini_batch = 3;
      opt.gen_mode = static_cast<uint32_t>(mode);
      opt.gen_prob = 20000;
      if (mode != nasa::hw::GenMode::Sample) opt.parents = batch_with_duplicates(t.net, 3, rng);
      const auto a = ref.evaluate_fused({}, 24, t.images, t.labels, opt);
      const auto b = rtl.evaluate_fused({}, 24, t.images, t.labels, opt);
      EXPECT_EQ(a.candidates, b.candidates);
      EXPECT_EQ(a.correct, b.correct);
      expect_same_counters(a, b);
    }
  }
}

TEST(CandGen, RtlAndRefEqualTheModel) {
  const Net t(tiny_net(6, 6), 1, 3);
  const auto& cfg = nasa::config_by_name("sim");
  nasa::runtime::Runtime rtl(t.q, cfg, rtl_factory(), "rtl");
  nasa::runtime::Runtime ref(t.q, cfg, ref_factory(), "ref");
  std::vector<int> ks;
  for (const auto& l : t.net.layers) ks.push_back(static_cast<int>(l.choices.size()));
  std::mt19937 rng(8);
  const auto parents = batch_with_duplicates(t.net, 5, rng);
  for (uint32_t mode : {1u, 2u, 3u}) {
    SCOPED_TRACE("mode " + std::to_string(mode));
    nasa::compile::BatchOptions opt;
    opt.gen_mode = mode;
    opt.gen_seed = 0xC0FFEE + mode;
    opt.gen_prob = 20000;
    if (mode != 1) opt.parents = parents;
    const auto want = nasa::cand_gen::generate(static_cast<nasa::cand_gen::Mode>(mode),
                                               opt.gen_seed, opt.gen_prob, ks, 24, opt.parents);
    const auto a = rtl.evaluate_fused({}, 24, t.images, t.labels, opt);
    const auto b = ref.evaluate_fused({}, 24, t.images, t.labels, opt);
    EXPECT_EQ(a.candidates, want);
    EXPECT_EQ(b.candidates, want);
    expect_tables_match(nasa::fusion::fuse(t.net, want), a);
    EXPECT_EQ(a.correct, b.correct);
  }
}

// Runs a prepared batch program after `tweak` on a device; returns the wait result.
template <class Tweak>
nasa::device::WaitResult run_tweaked(nasa::device::Device& dev,
                                     const nasa::compile::BatchProgram& bp, Tweak tweak) {
  nasa::runtime::program_batch(dev, bp);
  tweak(dev);
  return dev.run_batch(bp.program.win_base, bp.program.win_limit, 50'000'000);
}

// A program whose memory image is larger than the configuration's address space (2^17 bytes on
// fpga) is refused by the compiler, naming the sizes; the same program compiles for sim.
TEST(FusedErrors, ImageLargerThanTheAddressSpaceIsRefused) {
  const Net t(tiny_net(2, 2), 4000, 6);  // 4000 images of 36 bytes: 144 KB
  std::mt19937 rng(8);
  const auto batch = batch_with_duplicates(t.net, 4, rng);
  const auto& fpga = nasa::config_by_name("fpga");
  for (const bool fused : {true, false}) {
    SCOPED_TRACE(fused ? "compile_batch" : "compile");
    try {
      if (fused) {
        nasa::compile::compile_batch(t.q, batch, 0, t.images, t.labels, fpga, {});
      } else {
        nasa::compile::compile(t.q, batch[0], t.images, fpga);
      }
      ADD_FAILURE() << "no error";
    } catch (const std::runtime_error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("more than the 131072-byte address space of config 'fpga' (AddrBits 17)"),
                std::string::npos)
          << m;
    }
  }
  EXPECT_NO_THROW(nasa::compile::compile_batch(t.q, batch, 0, t.images, t.labels,
                                               nasa::config_by_name("sim"), {}));
}

// The arena, the scratch and the logits of a batch run grow with the mini-batch: when a smaller
// one fits the address space, the error names the largest that does, and that one compiles.
TEST(FusedErrors, MiniBatchTooLargeForTheAddressSpaceNamesOneThatFits) {
  const Net t(tiny_net(2, 2), 1000, 6);  // 1000 images of 36 bytes
  std::mt19937 rng(9);
  const auto batch = batch_with_duplicates(t.net, 4, rng);
  const auto& fpga = nasa::config_by_name("fpga");
  nasa::compile::BatchOptions opt;
  opt.mini_batch = 1000;
  uint32_t fits = 0;
  try {
    nasa::compile::compile_batch(t.q, batch, 0, t.images, t.labels, fpga, opt);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    const std::string key = "a mini-batch of at most ";
    const auto at = m.find(key);
    ASSERT_NE(at, std::string::npos) << m;
    fits = static_cast<uint32_t>(std::stoul(m.substr(at + key.size())));
  }
  ASSERT_GT(fits, 0u);
  ASSERT_LT(fits, opt.mini_batch);
  opt.mini_batch = fits;
  EXPECT_NO_THROW(nasa::compile::compile_batch(t.q, batch, 0, t.images, t.labels, fpga, opt));
  opt.mini_batch = fits + 1;
  EXPECT_THROW(nasa::compile::compile_batch(t.q, batch, 0, t.images, t.labels, fpga, opt),
               std::runtime_error);
}

TEST(FusedErrors, EachBadBatchHasItsCode) {
  const auto& cfg = nasa::config_by_name("sim");
  const Net small(tiny_net(4, 4), 1, 2);
  const Net deep(tiny_net(16, 13), 1, 2);
  std::mt19937 rng(4);
  const auto batch = batch_with_duplicates(small.net, 6, rng);
  const auto bp =
      nasa::compile::compile_batch(small.q, batch, 0, small.images, small.labels, cfg, {});
  std::vector<Candidate> wide;  // > NodeCap nodes
  for (int j = 0; j < 100; ++j) {
    Candidate c;
    for (int i = 0; i < 16; ++i) c.push_back(static_cast<int>(rng() % 13));
    wide.push_back(c);
  }
  const auto g = nasa::fusion::fuse(deep.net, wide);
  ASSERT_GT(g.nodes.size(), cfg.node_cap);
  // the first candidate whose insertion passes NodeCap
  size_t overflow_at = 0;
  {
    nasa::fusion::Fuser f(deep.net);
    for (size_t j = 0; j < wide.size(); ++j) {
      f.add(wide[j]);
      if (f.graph().nodes.size() > cfg.node_cap) {
        overflow_at = j;
        break;
      }
    }
  }
  const auto bp_wide =
      nasa::compile::compile_batch(deep.q, wide, 0, deep.images, deep.labels, cfg, {});
  for (const auto& factory : {ref_factory(), rtl_factory()}) {
    {
      auto dev = factory(cfg, bp.program.image.size());
      SCOPED_TRACE(dev->name());
      const auto csr = [](nasa::hw::Csr c) { return static_cast<uint32_t>(c); };
      auto w = run_tweaked(*dev, bp, [&](nasa::device::Device& d) {
        d.write_csr(csr(nasa::hw::Csr::CandCount), 0);
      });
      EXPECT_EQ(w.err, nasa::hw::Err::EmptyBatch);
      w = run_tweaked(
          *dev, bp, [&](nasa::device::Device& d) { d.write_csr(csr(nasa::hw::Csr::ImgCount), 0); });
      EXPECT_EQ(w.err, nasa::hw::Err::EmptyBatch);
      w = run_tweaked(*dev, bp, [&](nasa::device::Device& d) {
        d.write_csr(csr(nasa::hw::Csr::MiniBatch), 0);
      });
      EXPECT_EQ(w.err, nasa::hw::Err::BadBatchCfg);
      // candidate 3, layer 2 picks choice K_2 (one past the last)
      w = run_tweaked(*dev, bp, [&](nasa::device::Device& d) {
        const uint8_t bad = static_cast<uint8_t>(small.net.layers[2].choices.size());
        d.write_memory(bp.regs.cand_addr + 3 * bp.regs.cand_stride + 2, {&bad, 1});
      });
      EXPECT_EQ(w.err, nasa::hw::Err::BadChoice);
      EXPECT_EQ(w.err_index, 3u);
      // a candidate table outside the window
      w = run_tweaked(*dev, bp, [&](nasa::device::Device& d) {
        d.write_csr(csr(nasa::hw::Csr::CandAddr), bp.program.win_limit);
      });
      EXPECT_EQ(w.err, nasa::hw::Err::Window);
      // a good run afterwards still works
      w = run_tweaked(*dev, bp, [](nasa::device::Device&) {});
      EXPECT_EQ(w.err, nasa::hw::Err::None);
    }
    auto dev2 = factory(cfg, bp_wide.program.image.size());
    SCOPED_TRACE(dev2->name());
    const auto csr = [](nasa::hw::Csr c) { return static_cast<uint32_t>(c); };
    const auto w = run_tweaked(*dev2, bp_wide, [](nasa::device::Device&) {});
    EXPECT_EQ(w.err, nasa::hw::Err::NodeOverflow);
    EXPECT_EQ(w.err_index, overflow_at);
    EXPECT_EQ(dev2->read_csr(csr(nasa::hw::Csr::NodeCount)), cfg.node_cap);
  }
}

}  // namespace
