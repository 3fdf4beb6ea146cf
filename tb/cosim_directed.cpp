// Directed cosimulation cases on every configuration: spatial and kernel edge cases, saturation,
// buffer-filling shapes, every activation, chained programs, runs back to back, tight windows and
// other DRAM timings; plus unit tests of the DRAM model itself.
// NASA_FST_ON_FAIL=1 writes a waveform of each failing case (see NASA_FST_DIR).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nasa/desc.h"
#include "nasa/memory_image.h"
#include "nasa/refmodel.h"
#include "nasa/sim/cosim.h"
#include "nasa/sim/dram.h"
#include "nasa/sim/random_layer.h"
#include "nasa/sim/memcheck.h"

#include "cosim_cases.h"

namespace nasa::sim {
namespace {

using hw::Act;
using hw::Op;

constexpr double kMaxCycleErrorPct = 3.0;

Desc shape(Op op, uint16_t h, uint16_t w, uint16_t cin, uint16_t cout, uint8_t k = 1,
           uint8_t stride = 1, Act act = Act::None, uint8_t q6 = 0) {
  return layer_shape(op, h, w, cin, cout, k, stride, act, q6);
}

Desc pool(Op op, uint16_t h, uint16_t w, uint16_t c, uint8_t stride = 1, Act act = Act::None) {
  return shape(op, h, w, c, c, op == Op::MaxPool || op == Op::AvgPool ? 3 : 1, stride, act);
}

Program one_layer(const hw::Config& cfg, uint64_t seed, const Desc& d, Quant q = Quant::Normal,
                  std::optional<uint32_t> slack = std::nullopt) {
  ProgramBuilder b(cfg, seed);
  const Desc full = b.add_layer(d, q);
  return b.finish(describe(full), slack);
}

class CosimDirected : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    cfg_ = config_by_name(GetParam());
    cs_ = std::make_unique<Cosim>(cfg_, cycles::default_dram(cfg_));
  }

  // Runs `p`, expects a bit-exact match (and the cycle model within 3% when `cycles`).
  CosimResult check(const Program& p, bool cycles = true) {
    const CosimResult r = run_case(*cs_, p);
    const std::string where = case_report(
        *cs_, p, r,
        fmt::format("cosim_directed_{}_{}",
                    ::testing::UnitTest::GetInstance()->current_test_info()->name(), p.seed));
    EXPECT_TRUE(r.ok) << where;
    if (cycles && r.ok) {
      EXPECT_LE(r.cycle_error_pct, kMaxCycleErrorPct)
          << "cycle model: RTL " << r.rtl_cycles << ", model " << r.model_cycles << "\n"
          << where;
    }
    return r;
  }

  void check_layer(const Desc& d, Quant q = Quant::Normal) {
    check(one_layer(cfg_, seed_++, d, q));
  }

  hw::Config cfg_{};
  std::unique_ptr<Cosim> cs_;
  uint64_t seed_ = 1000;
};

TEST_P(CosimDirected, Spatial1x1) {
  check_layer(shape(Op::Conv, 1, 1, 16, 8, 3));
  check_layer(shape(Op::Conv, 1, 1, 5, 3, 7, 2));
  check_layer(shape(Op::Conv, 1, 1, 24, 16, 1));
  check_layer(shape(Op::DwConv, 1, 1, 16, 16, 3));
  check_layer(shape(Op::DwConv, 1, 1, 7, 7, 7, 2));
  check_layer(pool(Op::MaxPool, 1, 1, 9));
  check_layer(pool(Op::AvgPool, 1, 1, 9, 2));
  check_layer(pool(Op::Add, 1, 1, 13));
  check_layer(pool(Op::Gap, 1, 1, 32));
  check_layer(shape(Op::Fc, 1, 1, 32, 10));
}

TEST_P(CosimDirected, KernelLargerThanInput) {
  check_layer(shape(Op::Conv, 3, 3, 5, 8, 7));
  check_layer(shape(Op::Conv, 1, 2, 3, 5, 5));
  check_layer(shape(Op::Conv, 2, 3, 4, 4, 7, 2));
  check_layer(shape(Op::DwConv, 2, 2, 12, 12, 7));
  check_layer(shape(Op::DwConv, 3, 3, 5, 5, 7, 2));
  check_layer(pool(Op::MaxPool, 2, 1, 4));
  check_layer(pool(Op::AvgPool, 1, 2, 4, 2));
}

TEST_P(CosimDirected, StrideTwoOddSizes) {
  check_layer(shape(Op::Conv, 13, 7, 8, 16, 3, 2, Act::Relu));
  check_layer(shape(Op::Conv, 7, 7, 16, 8, 1, 2));
  check_layer(shape(Op::Conv, 5, 3, 3, 8, 7, 2));
  check_layer(shape(Op::DwConv, 13, 13, 8, 8, 5, 2));
  check_layer(shape(Op::DwConv, 7, 5, 3, 3, 3, 2));
  check_layer(pool(Op::MaxPool, 7, 7, 8, 2));
  check_layer(pool(Op::AvgPool, 5, 13, 8, 2));
}

TEST_P(CosimDirected, SingleInputChannel) {
  check_layer(shape(Op::Conv, 28, 28, 1, 8, 3, 2, Act::Relu));
  check_layer(shape(Op::Conv, 5, 5, 1, 1, 1));
  check_layer(shape(Op::DwConv, 8, 8, 1, 1, 5));
  check_layer(shape(Op::Fc, 1, 1, 1, 10));
  check_layer(pool(Op::Gap, 7, 7, 1));
  check_layer(pool(Op::Add, 4, 4, 1));
}

// Global average pools with more taps (pixels) than KredMax: the vector unit's first-tap flag
// must not come from the weight-buffer index, which wraps at KredMax (found by nasa-cosim
// --config fpga --seed 5 --only-layer 827: a 14x28x3 GAP, 392 taps on a KredMax of 256).
TEST_P(CosimDirected, GapWithMoreTapsThanKredMax) {
  const uint32_t taps = cfg_.kred_max + cfg_.kred_max / 2 + 1;
  const uint32_t c = std::max<uint32_t>(1, std::min<uint32_t>(3, cfg_.in_buf_bytes / taps));
  check_layer(pool(Op::Gap, 1, static_cast<uint16_t>(taps), static_cast<uint16_t>(c)));
  check_layer(pool(Op::Gap, 14, 28, 3));
}

// 1x1 stride-2 Conv/DwConv layers whose input the loader gathers (only the pixels they use, each
// Cin bytes into a slot rounded up to the port), next to ones it reads whole: odd sizes, Cin not
// a multiple of the port, pixels longer than one DMA job, 1x1 inputs. Besides the byte and cycle
// checks, a gathered layer's DRAM reads must stay within what the used pixels, the weights, the
// records and the descriptor can take (an unaligned job reads less than two bus words extra), a
// bound below what reading the whole input takes for most cases.
TEST_P(CosimDirected, StrideTwoPointwiseGather) {
  const uint64_t mb = cfg_.mem_bytes, chunk = uint64_t{cfg_.burst_max} * mb, wchunk = chunk / 2;
  const std::vector<Desc> cases = {
      shape(Op::Conv, 7, 7, 40, 16, 1, 2),
      shape(Op::Conv, 3, 5, static_cast<uint16_t>(chunk + 12), 8, 1, 2, Act::Relu),
      shape(Op::DwConv, 9, 4, 24, 24, 1, 2, Act::Relu6, 60),
      shape(Op::Conv, 1, 1, 40, 8, 1, 2),
      shape(Op::Conv, 6, 6, 3, 8, 1, 2),
      shape(Op::Conv, 8, 4, 64, 32, 1, 2),
      shape(Op::Conv, 8, 8, 128, 16, 1, 2),
      shape(Op::Conv, 16, 16, 64, 16, 1, 2),
      shape(Op::DwConv, 12, 12, 256, 256, 1, 2, Act::Relu),
      shape(Op::DwConv, 2, 9, 33, 33, 1, 2),
  };
  int gathered = 0, below_whole = 0;
  for (const Desc& c : cases) {
    if (input_buffer_need(c, cfg_) > cfg_.in_buf_bytes || uint64_t{c.cin} > cfg_.kred_max) continue;
    ProgramBuilder b(cfg_, seed_++);
    const Desc d = b.add_layer(c, Quant::Normal);
    const CosimResult r = check(b.finish(describe(d)));
    if (!gathers_input(d, cfg_.mem_bytes) || !r.ok) continue;
    ++gathered;
    const Shape s = shape_of(d);
    const uint64_t nct = (d.cout + cfg_.cols - 1) / cfg_.cols;
    const uint64_t wjobs = static_cast<hw::Op>(d.op) == Op::Conv
                               ? uint64_t{d.cout} * ((s.kred + wchunk - 1) / wchunk)
                               : nct;  // DwConv: one tap (k = 1) per channel tile
    const uint64_t slack = 2 * mb;  // an unaligned job of L bytes reads < L + 2 words
    const uint64_t bound =
        uint64_t{s.ho} * s.wo * (d.cin + (d.cin + chunk - 1) / chunk * slack) + s.wgt_bytes +
        wjobs * slack + s.prm_bytes + nct * slack + hw::kDescBytes + slack;
    const uint64_t whole = s.in_bytes + s.wgt_bytes + s.prm_bytes + hw::kDescBytes;
    EXPECT_LE(r.rtl_counters[static_cast<int>(hw::Counter::DramRdBytes)], bound) << describe(d);
    if (bound < whole) ++below_whole;
  }
  EXPECT_GE(gathered, 4) << "too few cases took the gather path on " << cfg_.name;
  EXPECT_GE(below_whole, 3) << "too few cases tell a gathered input from a whole one on "
                            << cfg_.name;
}

TEST_P(CosimDirected, Saturation) {
  struct Case {
    Desc d;
    Quant q;
  };
  const std::vector<Case> cases = {
      {shape(Op::Conv, 4, 4, 16, 16, 3), Quant::SaturateHigh},
      {shape(Op::Conv, 4, 4, 16, 16, 3), Quant::SaturateLow},
      {shape(Op::Conv, 4, 4, 16, 16, 1, 1, Act::Relu6, 100), Quant::SaturateHigh},
      {shape(Op::DwConv, 5, 5, 16, 16, 3), Quant::SaturateHigh},
      {shape(Op::DwConv, 5, 5, 16, 16, 3), Quant::SaturateLow},
      {shape(Op::Fc, 1, 1, 64, 16), Quant::SaturateLow},
      {shape(Op::Fc, 1, 1, 64, 16), Quant::SaturateHigh},
      {pool(Op::AvgPool, 4, 4, 16), Quant::SaturateHigh},
      {pool(Op::Gap, 4, 4, 16), Quant::SaturateHigh},
      {pool(Op::Add, 4, 4, 16), Quant::SaturateHigh},
  };
  for (const Case& c : cases) {
    const Program p = one_layer(cfg_, seed_++, c.d, c.q);
    check(p);
    // The case must really saturate: a third or more of the outputs at a rail of the
    // activation's range (a normal layer has a few percent there).
    const Desc& d = p.descs[0];
    const uint64_t n = shape_of(d).out_bytes;
    const int lo = d.act == static_cast<uint8_t>(Act::None) ? -128 : 0;
    const int hi = d.act == static_cast<uint8_t>(Act::Relu6) ? d.q6 : 127;
    uint64_t at_rail = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const int v = static_cast<int8_t>(cs_->ref_memory()[d.out_addr + i]);
      at_rail += v == lo || v == hi;
    }
    EXPECT_GE(at_rail * 3, n) << "only " << at_rail << " of " << n << " outputs at " << lo << " or "
                              << hi << ": " << describe(d);
  }
}

// Residual add with every kind of requant shift on both terms: the vector unit computes
// (a*M + 2^(S-1)) >>> S in 27 bits and returns 0 from S = 27 on, which must equal the
// reference's wide arithmetic at the edges (S around 23..27, M at its extremes, S = MaxShift).
TEST_P(CosimDirected, AddRequantShiftsAcrossTheirRange) {
  const std::vector<uint8_t> shifts = {1, 2, 7, 8, 15, 16, 17, 22, 23, 24, 25, 26, 27, 28, 31,
                                       40, 46, 47};
  const std::vector<uint16_t> mults = {1, 255, 32768, 65535};
  for (size_t i = 0; i < shifts.size(); ++i) {
    Program p = one_layer(cfg_, seed_++, pool(Op::Add, 3, 5, 7), Quant::Normal);
    Desc d = p.descs[0];
    d.s = shifts[i];
    d.sb = shifts[shifts.size() - 1 - i];
    d.m = mults[i % mults.size()];
    d.mb = mults[(i + 1) % mults.size()];
    rewrite_desc(p, 0, d);
    SCOPED_TRACE(describe(d));
    check(p);
  }
}

TEST_P(CosimDirected, BufferFillingShapes) {
  const uint32_t in = cfg_.in_buf_bytes, kred = cfg_.kred_max;
  // H*W*Cin == InBufBytes.
  check_layer(shape(Op::Conv, 8, 8, static_cast<uint16_t>(in / 64), cfg_.cols, 1));
  check_layer(shape(Op::DwConv, 16, 16, static_cast<uint16_t>(in / 256),
                    static_cast<uint16_t>(in / 256), 3));
  check_layer(pool(Op::MaxPool, 16, 16, static_cast<uint16_t>(in / 256), 2));
  check_layer(pool(Op::Gap, 8, 8, static_cast<uint16_t>(in / 64)));
  // Add: align_up(H*W*C, MemBytes) + H*W*C == InBufBytes.
  check_layer(pool(Op::Add, 8, 8, static_cast<uint16_t>(in / 128)));
  // k*k*Cin == KredMax (and the input as large as the buffer allows).
  const uint16_t px = static_cast<uint16_t>(std::min<uint32_t>(in / kred, 16));
  check_layer(shape(Op::Conv, 2, static_cast<uint16_t>(px / 2), static_cast<uint16_t>(kred),
                    static_cast<uint16_t>(cfg_.cols + 3), 1));
  check_layer(shape(Op::Conv, 4, 4, static_cast<uint16_t>(kred / 9), 5, 3));
  check_layer(shape(Op::Conv, 3, 3, static_cast<uint16_t>(kred / 49), 7, 7, 2));
  check_layer(shape(Op::Fc, 1, 1, static_cast<uint16_t>(kred), 12));
  check_layer(shape(Op::Fc, 2, 2, static_cast<uint16_t>(kred / 4), 3));
}

TEST_P(CosimDirected, EveryActivation) {
  struct A {
    Act act;
    uint8_t q6;
  };
  const std::vector<A> acts = {
      {Act::None, 0}, {Act::Relu, 0}, {Act::Relu6, 0}, {Act::Relu6, 6}, {Act::Relu6, 127}};
  for (const A& a : acts) {
    check_layer(shape(Op::Conv, 5, 5, 8, 16, 3, 1, a.act, a.q6));
    check_layer(shape(Op::DwConv, 5, 5, 8, 8, 3, 1, a.act, a.q6));
    check_layer(shape(Op::Fc, 1, 1, 40, 10, 1, 1, a.act, a.q6));
    // (pool() takes no q6: set it on the descriptor; the order keeps each case's seed)
    const std::pair<Op, uint16_t> pools[] = {
        {Op::MaxPool, 5}, {Op::AvgPool, 5}, {Op::Add, 3}, {Op::Gap, 3}};
    for (const auto& [op, side] : pools) {
      Desc d = pool(op, side, side, 8, 1, a.act);
      d.q6 = a.q6;
      check_layer(d);
    }
  }
}

// An MBConv-like block and a head, each layer reading the previous layer's output.
TEST_P(CosimDirected, ChainedProgram) {
  ProgramBuilder b(cfg_, 77);
  b.reserve_descs(8);
  const Desc stem = b.add_layer(shape(Op::Conv, 16, 16, 3, 16, 3, 2, Act::Relu6, 64));
  Desc dw = shape(Op::DwConv, 8, 8, 16, 16, 3, 1, Act::Relu);
  dw.in_addr = stem.out_addr;
  dw = b.add_layer(dw);
  Desc proj = shape(Op::Conv, 8, 8, 16, 16, 1);
  proj.in_addr = dw.out_addr;
  proj = b.add_layer(proj);
  Desc res = pool(Op::Add, 8, 8, 16);
  res.in_addr = stem.out_addr;
  res.in2_addr = proj.out_addr;
  res = b.add_layer(res);
  Desc mp = pool(Op::MaxPool, 8, 8, 16, 2);
  mp.in_addr = res.out_addr;
  mp = b.add_layer(mp);
  Desc expand = shape(Op::Conv, 4, 4, 16, 32, 1, 1, Act::Relu);
  expand.in_addr = mp.out_addr;
  expand = b.add_layer(expand);
  Desc gap = pool(Op::Gap, 4, 4, 32);
  gap.in_addr = expand.out_addr;
  gap = b.add_layer(gap);
  Desc fc = shape(Op::Fc, 1, 1, 32, 10);
  fc.in_addr = gap.out_addr;
  b.add_layer(fc);
  const Program p = b.finish("chained MBConv block and head");
  const CosimResult r = check(p);
  EXPECT_EQ(r.rtl.layers_done, 8u);
}

// A folded residual is read by the drain after its layer's last step issued, when the layers
// after it already load (docs/engine.md "Folded residual"): its buffer region must stay reserved
// until its last row left the drain. Layer A (a folded 1x1 conv, one tile) takes the start of
// the input buffer, B the rest of it but one port word, and C (one port word plus `extra` bytes)
// loads as soon as A's last step issues, wrapping over A's residual; with a 1-cycle DRAM its
// beats arrive while A's tile still drains. Byte for byte and cycle for cycle.
TEST_P(CosimDirected, FoldedResidualRegionOutlivesItsLastStep) {
  const uint32_t ib = cfg_.in_buf_bytes, mb = cfg_.mem_bytes;
  const uint16_t rows = static_cast<uint16_t>(cfg_.rows), cols = static_cast<uint16_t>(cfg_.cols);
  const uint16_t cin = static_cast<uint16_t>(std::min<uint32_t>(cfg_.kred_max, ib / 2 / rows));
  cycles::DramTiming fast = cycles::default_dram(cfg_);
  fast.latency = 1;
  Cosim cs(cfg_, fast);
  const uint32_t res = uint32_t{rows} * cols;  // A's residual: the first bytes of its region
  for (const uint32_t extra : {0u, mb, 4 * mb, res / 2, res}) {
    ProgramBuilder b(cfg_, 500 + extra);
    b.reserve_descs(3);
    Desc a = shape(Op::Conv, 1, rows, cin, cols, 1);
    a.res = 1;
    a = b.add_layer(a);
    const auto a_end = static_cast<uint32_t>((input_buffer_need(a, cfg_) + mb - 1) / mb * mb);
    const auto words = [&](uint32_t bytes) { return static_cast<uint16_t>(bytes / mb); };
    b.add_layer(pool(Op::MaxPool, 1, words(ib - a_end - mb), static_cast<uint16_t>(mb)));
    b.add_layer(pool(Op::MaxPool, 1, words(mb + extra), static_cast<uint16_t>(mb)));
    const Program p = b.finish(fmt::format("folded residual, then C wrapping {} bytes", extra));
    const CosimResult r = run_case(cs, p);
    EXPECT_TRUE(r.ok) << case_report(cs, p, r, fmt::format("cosim_directed_residual_{}", extra));
    EXPECT_EQ(r.rtl_cycles, r.model_cycles);
  }
}

// Two programs on one engine without a reset in between: no state may leak from the first run.
TEST_P(CosimDirected, BackToBackRunsWithoutReset) {
  ProgramBuilder b(cfg_, 99);
  b.reserve_descs(2);
  const Desc a = b.add_layer(shape(Op::Conv, 7, 7, 12, 20, 3, 1, Act::Relu));
  Desc c = pool(Op::AvgPool, 7, 7, 20, 2);
  c.in_addr = a.out_addr;
  b.add_layer(c);
  const Program p = b.finish("two runs back to back");

  std::vector<uint8_t> expect = p.image;
  for (uint32_t i = 0; i < 2; ++i) {
    const ref::RunResult rr =
        ref::run(expect, cfg_, p.desc_addr + i * hw::kDescBytes, 1, p.win_base, p.win_limit);
    ASSERT_EQ(rr.err, hw::Err::None);
  }
  EngineSim& e = cs_->engine();
  e.load_memory(p.image);
  e.reset();
  for (uint32_t i = 0; i < 2; ++i) {
    const RunStatus st =
        e.run(p.desc_addr + i * hw::kDescBytes, 1, p.win_base, p.win_limit, 10'000'000);
    ASSERT_TRUE(st.done && !st.timeout) << "run " << i;
    EXPECT_EQ(st.err_code, 0u) << "run " << i;
    EXPECT_EQ(st.layers_done, 1u) << "run " << i;
    EXPECT_TRUE(st.drained) << "run " << i;
  }
  expect_same_memory(e.memory(), expect,
                     MemoryCheck("memory after two runs (expected: reference)"),
                     p.name);
}

// The window ends exactly where the last block ends.
TEST_P(CosimDirected, TightWindow) {
  for (uint64_t i = 0; i < 20; ++i) {
    ProgramBuilder b(cfg_, derive_seed(5, i));
    const Desc d = random_shape(b.rng(), cfg_);
    b.add_layer(d);
    check(b.finish(fmt::format("tight window {}", i), 0));
  }
}

// Functional correctness under other DRAM timings (cycle error reported, not asserted: the 3%
// contract is for the default timing).
TEST_P(CosimDirected, OtherDramTimings) {
  const std::vector<cycles::DramTiming> timings = {{1, cfg_.mem_bytes},
                                                   {100, cfg_.mem_bytes},
                                                   {32, 1},
                                                   {7, std::max(1u, cfg_.mem_bytes / 2)},
                                                   {20, std::min(3u, cfg_.mem_bytes)}};
  for (const cycles::DramTiming& t : timings) {
    Cosim cs(cfg_, t);
    double max_err = 0;
    for (uint64_t i = 0; i < 15; ++i) {
      const Program p = random_layer(derive_seed(t.latency * 1000 + t.bytes_per_cycle, i), cfg_);
      CosimResult r;
      try {
        r = cs.run(p);
      } catch (const std::exception& e) {
        r.ok = false;
        r.failure = e.what();
      }
      EXPECT_TRUE(r.ok) << "DRAM latency " << t.latency << ", " << t.bytes_per_cycle
                        << " bytes/cycle: " << format_failure(p, r);
      if (r.ok) max_err = std::max(max_err, r.cycle_error_pct);
    }
    fmt::print("[{}] DRAM latency {} bw {}: max cycle model error {:.2f}%\n", cfg_.name, t.latency,
               t.bytes_per_cycle, max_err);
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, CosimDirected, ::testing::ValuesIn(engine_config_names()),
                         [](const auto& info) { return info.param; });

// ---- The DRAM model on its own. ----

struct DramHarness {
  explicit DramHarness(uint32_t port, cycles::DramTiming t, uint32_t burst_max = 8)
      : dram(port, burst_max, t), wdata(port) {
    dram.memory().resize(4096);
    for (size_t i = 0; i < dram.memory().size(); ++i) dram.memory()[i] = static_cast<uint8_t>(i);
  }
  bool read(uint32_t addr, uint32_t beats, bool rsp_ready = true) {
    MemRequest r;
    r.addr = addr;
    r.beats = beats;
    return dram.clock(&r, rsp_ready);
  }
  bool write(uint32_t addr, uint64_t strobe, uint8_t value) {
    std::fill(wdata.begin(), wdata.end(), value);
    MemRequest r;
    r.write = true;
    r.addr = addr;
    r.wdata = wdata;
    r.wstrb = strobe;
    return dram.clock(&r, true);
  }
  // Clocks idle cycles until a beat is valid; returns the cycle it appeared.
  uint64_t wait_beat(uint64_t limit = 10000) {
    while (!dram.rsp_valid() && dram.cycle() < limit) dram.clock(nullptr, false);
    return dram.cycle();
  }
  Dram dram;
  std::vector<uint8_t> wdata;
};

TEST(DramModel, FirstBeatAfterLatency) {
  DramHarness h(32, {32, 32});
  EXPECT_TRUE(h.read(64, 1));  // accepted in cycle 0
  EXPECT_EQ(h.wait_beat(), 32u);
  EXPECT_EQ(h.dram.rsp_data()[0], 64);
  h.dram.clock(nullptr, true);
  EXPECT_TRUE(h.dram.idle());
  EXPECT_EQ(h.dram.bytes_read(), 32u);
}

TEST(DramModel, BandwidthSpacesBeats) {
  DramHarness h(32, {10, 8});  // a 32-byte beat takes 4 cycles of bus time
  h.read(0, 4);
  std::vector<uint64_t> seen;
  while (seen.size() < 4 && h.dram.cycle() < 1000) {
    if (h.dram.rsp_valid()) {
      EXPECT_EQ(h.dram.rsp_data()[0], static_cast<uint8_t>(32 * seen.size()));
      seen.push_back(h.dram.cycle());
    }
    h.dram.clock(nullptr, true);
  }
  EXPECT_EQ(seen, (std::vector<uint64_t>{10, 14, 18, 22}));
}

TEST(DramModel, FractionalBandwidthAccumulates) {
  DramHarness h(4, {5, 3});  // 4/3 cycles per beat
  h.read(0, 4);
  std::vector<uint64_t> seen;
  while (seen.size() < 4 && h.dram.cycle() < 1000) {
    if (h.dram.rsp_valid()) seen.push_back(h.dram.cycle());
    h.dram.clock(nullptr, true);
  }
  // Bus slots start at 15, 19, 23, 27 thirds of a cycle (presented at the ceiling).
  EXPECT_EQ(seen, (std::vector<uint64_t>{5, 7, 8, 9}));
}

TEST(DramModel, BackpressureKeepsOrder) {
  DramHarness h(32, {4, 32});
  h.read(0, 2);
  h.read(256, 1);
  std::vector<uint8_t> got;
  while (got.size() < 3 && h.dram.cycle() < 1000) {
    const bool ready = h.dram.cycle() % 3 == 0;  // take a beat only every third cycle
    if (ready && h.dram.rsp_valid()) got.push_back(h.dram.rsp_data()[0]);
    h.dram.clock(nullptr, ready);
  }
  EXPECT_EQ(got, (std::vector<uint8_t>{0, 32, 0}));  // 256 wraps to 0 in the byte pattern
  EXPECT_TRUE(h.dram.idle());
}

TEST(DramModel, WritesApplyStrobesInOrder) {
  DramHarness h(8, {3, 8});
  h.read(16, 1);                  // sees the old contents
  h.write(16, 0b10100101, 0xEE);  // bytes 16, 18, 21, 23
  h.read(16, 1);                  // sees the new contents
  EXPECT_EQ(h.dram.memory()[16], 0xEE);
  EXPECT_EQ(h.dram.memory()[17], 17);
  EXPECT_EQ(h.dram.memory()[23], 0xEE);
  EXPECT_EQ(h.dram.bytes_written(), 4u);
  h.wait_beat();
  EXPECT_EQ(h.dram.rsp_data()[0], 16);
  h.dram.clock(nullptr, true);
  h.wait_beat();
  EXPECT_EQ(h.dram.rsp_data()[0], 0xEE);
  EXPECT_EQ(h.dram.rsp_data()[1], 17);
}

TEST(DramModel, QueueLimitsOutstandingRequests) {
  DramHarness h(4, {50, 4, 2});
  EXPECT_TRUE(h.read(0, 1));
  EXPECT_TRUE(h.read(4, 1));
  EXPECT_FALSE(h.dram.req_ready());
  EXPECT_FALSE(h.read(8, 1));  // refused while two are in flight
  h.wait_beat();
  h.dram.clock(nullptr, true);  // one retires
  EXPECT_TRUE(h.dram.req_ready());
}

TEST(DramModel, StrayAccessesAreCounted) {
  DramHarness h(8, {2, 8});
  h.dram.set_window(20, 40);
  h.read(16, 1);         // overlaps the window
  h.read(40, 1);         // wholly after it
  h.write(32, 0xFF, 1);  // bytes 32..39 inside
  h.write(40, 0x01, 1);  // byte 40 outside
  EXPECT_EQ(h.dram.stray_read_beats(), 1u);
  EXPECT_EQ(h.dram.stray_write_bytes(), 1u);
  EXPECT_EQ(h.dram.first_stray_addr(), 40u);
}

TEST(DramModel, BadRequestsThrow) {
  DramHarness h(32, {4, 32});
  EXPECT_THROW(h.read(4096, 1), std::runtime_error);  // outside memory
  EXPECT_THROW(h.read(4064, 2), std::runtime_error);  // runs past the end
  EXPECT_THROW(h.read(16, 1), std::runtime_error);    // misaligned
  EXPECT_THROW(h.read(0, 9), std::runtime_error);     // longer than BurstMax
  EXPECT_THROW(h.write(8192, 1, 0), std::runtime_error);
  EXPECT_THROW(Dram(32, 8, {4, 33}), std::invalid_argument);  // faster than the port
}

}  // namespace
}  // namespace nasa::sim
