// One timing model per target: on the board's configuration (up5k), backend "ref" is the board's
// cycle-exact model, so the runtime's evaluation, the search's cycle constraint (CycleModel) and
// the Verilated board core (nasa_mcu) agree on cycles, and the logits equal the engine's
// bit-exact reference model's. The engine's cycle model would report other cycles for the same
// programs: the test checks that too, so it fails if up5k fell back to the engine's model.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "nasa/backend.h"
#include "nasa/cand_gen.h"
#include "nasa/compiler.h"
#include "nasa/cycle_model.h"
#include "nasa/desc.h"
#include "nasa/device.h"
#include "nasa/float_eval.h"
#include "nasa/refmodel.h"
#include "nasa/runtime.h"
#include "nasa/search.h"
#include "nasa/sim/rtl_device.h"
#include "nasa/supernet_weights.h"
#include "tiny_net.h"

namespace nasa {
namespace {

struct Tiny {
  spec::Supernet net;
  compile::QSupernet q;
  std::vector<std::vector<uint8_t>> imgs;
  std::vector<uint8_t> labels;

  Tiny() {
    // (8 channels: layers the board's MAC array takes, tb/tiny_net.h)
    const std::vector<spec::OpSpec> ops = {spec::parse_op("mb_k3_e3"), spec::parse_op("conv_k1"),
                                           spec::parse_op("skip")};
    net = testing::tiny_net(3, ops, 8);
    const auto w = weights::random_weights(net, 7);
    std::mt19937 rng(11);
    std::vector<floatnet::Tensor> calib;
    imgs.assign(3, std::vector<uint8_t>(36));
    for (size_t i = 0; i < imgs.size(); ++i) {
      for (auto& p : imgs[i]) p = static_cast<uint8_t>(rng());
      labels.push_back(static_cast<uint8_t>(rng() % 4));
      calib.push_back(floatnet::image_from_u8(imgs[i].data(), 6, 6, 1));
    }
    q = compile::quantize(net, w, calib);
  }
};

TEST(BoardTiming, RefSearchAndVerilatedBoardAgreeOnUp5kCycles) {
  const Tiny t;
  const auto& cfg = config_by_name("up5k");
  ASSERT_EQ(cfg.mcu, 1u);
  for (const spec::Candidate& c : {spec::Candidate{0, 1, 2}, spec::Candidate{1, 0, 0}}) {
    SCOPED_TRACE(spec::format_candidate(c));
    runtime::Runtime ref(t.q, cfg, device::backend_factory("ref"), "ref");
    runtime::Runtime rtl(
        t.q, cfg,
        [](const hw::Config& k, uint64_t m) { return sim::make_rtl_device(k, m); }, "rtl");
    const auto a = ref.evaluate(c, t.imgs, t.labels);
    const auto b = rtl.evaluate(c, t.imgs, t.labels);
    EXPECT_EQ(a.logits, b.logits);
    EXPECT_EQ(a.cycles, b.cycles) << "the ref device of up5k is not the board's timing";
    EXPECT_EQ(a.macs, b.macs);
    EXPECT_GT(a.cycles, 0u);

    // the logits are the engine reference model's (bit-exact data)
    const compile::Program p = compile::compile(t.q, c, t.imgs, cfg);
    std::vector<uint8_t> mem = p.image;
    const ref::RunResult r = ref::run(mem, cfg, p.desc_addr, p.desc_count, p.win_base,
                                      p.win_limit);
    ASSERT_EQ(r.err, hw::Err::None);
    std::vector<int8_t> want;
    for (uint32_t a_addr : p.logits_addr) {
      for (int k = 0; k < t.net.classes; ++k) want.push_back(static_cast<int8_t>(mem[a_addr + k]));
    }
    EXPECT_EQ(a.logits, want);

    // the search's cycle constraint uses the same model (one image per candidate)
    search::CycleModel cm(t.q, cfg);
    const std::vector<std::vector<uint8_t>> one(1, std::vector<uint8_t>(36));
    auto dev = sim::make_rtl_device(cfg, compile::compile(t.q, c, one, cfg).image.size());
    const compile::Program p1 = compile::compile(t.q, c, one, cfg);
    dev->write_memory(0, p1.image);
    const auto w = dev->run(p1.desc_addr, p1.desc_count, p1.win_base, p1.win_limit,
                            uint64_t{1} << 36);
    ASSERT_TRUE(w.done);
    EXPECT_EQ(cm.cycles(c), dev->counter(hw::Counter::Cycles));

    // and it is not the engine's cycle model of the same program
    const auto engine = cycles::program(p1.descs, p1.desc_addr, cfg, cycles::default_dram(cfg));
    EXPECT_NE(engine[static_cast<size_t>(hw::Counter::Cycles)], cm.cycles(c));
  }
}

// A host that reads the parameter page (LAYERS_DONE, HwBatch) and the result tables (TBL_DATA)
// every other cycle of fused batch runs changes nothing: the candidates' logits, correct counts
// and node tables equal the board model's. The core's page and table accesses wait while the host
// reads, so no RAM read meets a write (rtl/nasa_mcu.sv asserts it: on the chip such a read's
// word is undefined, the RAMs being built without Yosys's read-during-write logic).
TEST(BoardTiming, HostReadsDuringBatchRunsChangeNothing) {
  const Tiny t;
  const auto& cfg = config_by_name("up5k");
  const std::vector<uint32_t> poll = {
      static_cast<uint32_t>(hw::Csr::LayersDone), static_cast<uint32_t>(hw::Csr::TblData),
      static_cast<uint32_t>(hw::Csr::HwBatch), static_cast<uint32_t>(hw::Csr::TblData)};
  runtime::Runtime ref(t.q, cfg, device::backend_factory("ref"), "ref");
  runtime::Runtime rtl(
      t.q, cfg,
      [&poll](const hw::Config& k, uint64_t m) {
        return sim::make_rtl_device(k, m, cycles::default_dram(k), poll);
      },
      "rtl");
  const std::vector<spec::Candidate> batch = {{0, 1, 2}, {1, 0, 0}, {0, 1, 0}, {2, 2, 1}};
  compile::BatchOptions opt;
  opt.dump_logits = true;
  const auto a = ref.evaluate_fused(batch, 0, t.imgs, t.labels, opt);
  const auto b = rtl.evaluate_fused(batch, 0, t.imgs, t.labels, opt);
  EXPECT_EQ(a.logits, b.logits);
  EXPECT_EQ(a.correct, b.correct);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.leaf, b.leaf);
  EXPECT_EQ(a.macs, b.macs);
  ASSERT_EQ(b.logits.size(), batch.size());
  // the core waited for the host's reads: more cycles than the model's, not fewer
  EXPECT_GE(b.cycles, a.cycles);
}

// Candidates drawn on the board (fpga/fw/fw.c generate(): xorshift32 and the high word of x * K,
// which the bit-serial core forms from two 32-bit products) are nasa_cand_gen's in every mode: the
// board's model and the Verilated board write cand_gen's candidates and agree on the results.
TEST(BoardTiming, CandidatesDrawnOnTheBoardAreCandGens) {
  const Tiny t;
  const auto& cfg = config_by_name("up5k");
  runtime::Runtime ref(t.q, cfg, device::backend_factory("ref"), "ref");
  runtime::Runtime rtl(
      t.q, cfg, [](const hw::Config& k, uint64_t m) { return sim::make_rtl_device(k, m); }, "rtl");
  std::vector<int> ks;
  for (const auto& l : t.net.layers) ks.push_back(static_cast<int>(l.choices.size()));
  const std::vector<spec::Candidate> parents = {{0, 1, 2}, {2, 0, 1}, {1, 1, 0}};
  for (const auto mode : {hw::GenMode::Sample, hw::GenMode::Mutate, hw::GenMode::Crossover}) {
    SCOPED_TRACE(::testing::Message() << "mode " << static_cast<int>(mode));
    compile::BatchOptions opt;
    opt.gen_mode = static_cast<uint32_t>(mode);
    opt.gen_seed = 0xBEEF01u + static_cast<uint32_t>(mode);
    opt.gen_prob = 30000;
    if (mode != hw::GenMode::Sample) opt.parents = parents;
    const auto want = cand_gen::generate(mode, opt.gen_seed, opt.gen_prob, ks, 12, opt.parents);
    const auto a = ref.evaluate_fused({}, 12, t.imgs, t.labels, opt);
    const auto b = rtl.evaluate_fused({}, 12, t.imgs, t.labels, opt);
    EXPECT_EQ(a.candidates, want);
    EXPECT_EQ(b.candidates, want);
    EXPECT_EQ(a.correct, b.correct);
    EXPECT_EQ(a.cycles, b.cycles);
  }
}

}  // namespace
}  // namespace nasa
