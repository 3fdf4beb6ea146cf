// rtl/nasa_cand_gen.sv alone against its C++ model (nasa::cand_gen::generate): a byte memory
// with random backpressure and random read latency serves the control port; every byte the RTL
// writes must be the model's, nothing outside the candidate vectors may change (the parents
// included), the handshake rules must hold, and abort must return to idle with no further request.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "Vnasa_cand_gen.h"
#include "nasa/sim/vbench.h"
#include "nasa/cand_gen.h"
#include "nasa/hw_spec.h"

#include "ctrl_port_bench.h"

namespace nasa::cand_gen {
namespace {

constexpr uint32_t kMemBase = 0x4000'0000;  // the byte memory covers [kMemBase, +kMemBytes)
constexpr uint32_t kMemBytes = 1 << 15;
constexpr uint32_t kMaxLatency = 40;

struct Config {
  Mode mode = Mode::Sample;
  uint32_t seed = 0;
  uint32_t prob = 0;
  std::vector<int> k;  // K per layer, L = k.size()
  uint32_t count = 1;
  uint32_t stride = 1;
  uint32_t out_addr = kMemBase;
  uint32_t parent_addr = kMemBase;
  std::vector<spec::Candidate> parents;  // only used by modes 2 and 3

  std::string describe() const {
    return fmt::format(
        "mode {} seed {:#x} prob {} L {} K [{}] count {} stride {} out {:#x} parents {} at {:#x}",
        static_cast<int>(mode), seed, prob, k.size(), fmt::join(k, ","), count, stride, out_addr,
        parents.size(), parent_addr);
  }
};

// A random configuration: L 1..16, K 1..16 per layer, count 1..200, 1..7 parents holding any
// byte (parents are not validated), output and parent areas disjoint inside the memory.
Config random_config(std::mt19937& rng, Mode mode, uint32_t prob, uint32_t min_count = 1) {
  auto uni = [&rng](uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
  };
  Config c;
  c.mode = mode;
  c.seed = uni(0, 3) == 0 ? 0 : static_cast<uint32_t>(rng());
  c.prob = prob;
  const uint32_t layers = uni(0, 3) == 0 ? (uni(0, 1) != 0 ? 1 : hw::kMaxLayers) : uni(1, 16);
  for (uint32_t i = 0; i < layers; ++i) c.k.push_back(static_cast<int>(uni(1, 16)));
  c.count = std::max(min_count, uni(0, 4) == 0 ? uni(1, 3) : uni(1, 200));
  c.stride = layers + uni(0, 9);
  const uint32_t num_parents = uni(1, 7);
  for (uint32_t p = 0; p < num_parents; ++p) {
    spec::Candidate v(layers);
    for (auto& b : v) b = static_cast<int>(uni(0, 255));
    c.parents.push_back(std::move(v));
  }
  // Parents first or outputs first, a random gap between, a random (unaligned) start.
  const uint32_t out_bytes = c.count * c.stride;
  const uint32_t par_bytes = num_parents * c.stride;
  const uint32_t start = kMemBase + uni(0, 255);
  const uint32_t gap = uni(0, 64);
  if (uni(0, 1) != 0) {
    c.parent_addr = start;
    c.out_addr = start + par_bytes + gap;
  } else {
    c.out_addr = start;
    c.parent_addr = start + out_bytes + gap;
  }
  return c;
}

// The Verilated module plus the byte memory serving its control port.
class Bench : public nasa::testing::CtrlPortBench<Vnasa_cand_gen> {
 public:
  explicit Bench(uint32_t seed) : CtrlPortBench("nasa_cand_gen", seed, kMemBase, kMemBytes) {
    reset();
  }

  void load(const Config& c) {
    for (size_t p = 0; p < c.parents.size(); ++p) {
      for (size_t i = 0; i < c.k.size(); ++i) {
        at(c.parent_addr + static_cast<uint32_t>(p) * c.stride + static_cast<uint32_t>(i)) =
            static_cast<uint8_t>(c.parents[p][i]);
      }
    }
    top_->mode_i = static_cast<uint8_t>(c.mode);
    top_->seed_i = c.seed;
    top_->prob_i = c.prob;
    set_layers(c.k);
    top_->out_addr_i = c.out_addr;
    top_->stride_i = c.stride;
    top_->count_i = c.count;
    top_->parent_addr_i = c.parent_addr;
    top_->parent_count_i = static_cast<uint32_t>(c.parents.size());
  }

  // One clock cycle at the given start/abort levels: a random ready, the due read response, a
  // read or a byte write done on the memory at the handshake, and the port rules checked.
  void cycle(bool start = false, bool abort = false) {
    begin_cycle(start, abort);
    done_ = top_->done_o != 0;
    busy_ = top_->busy_o != 0;
    const auto m = request();
    if (m.valid) ++requests_;
    const Req req{m.we, m.addr, m.wdata};
    end_cycle(m.valid, req, abort, [this](const Req& r) { accept(r); });
  }

  bool busy() const { return busy_; }
  bool done() const { return done_; }
  uint64_t requests() const { return requests_; }
  // Reads whose response has not been delivered yet (the top drops them on abort).
  void drop_pending_reads() { pending_.clear(); }

  struct Write {
    uint32_t addr;
    uint8_t data;
  };
  const std::vector<Write>& writes() const { return writes_; }
  const std::vector<uint32_t>& reads() const { return reads_; }
  void clear_log() {
    writes_.clear();
    reads_.clear();
  }

 private:
  void accept(const Req& r) {
    if (r.we) {
      writes_.push_back({r.addr, r.data});
      at(r.addr) = r.data;
      return;
    }
    EXPECT_TRUE(pending_.empty()) << "a second read issued while one is outstanding, cycle "
                                  << cycle_;
    reads_.push_back(r.addr);
    const uint64_t lat = std::uniform_int_distribution<uint64_t>(1, kMaxLatency)(rng_);
    pending_.push_back({cycle_ + lat, at(r.addr)});
  }

  bool busy_ = false, done_ = false;
  uint64_t requests_ = 0;
  std::vector<Write> writes_;
  std::vector<uint32_t> reads_;
};

// Cycles a run may take: per byte at most 2 draws, a read (up to kMaxLatency) and two handshakes
// under backpressure, with a wide margin.
uint64_t cycle_budget(const Config& c) {
  return 1000 + uint64_t{c.count} * c.k.size() * (kMaxLatency + 200);
}

// Starts a run and clocks until done_o; returns the cycles from start to done.
uint64_t run_to_done(Bench& b, const Config& c) {
  EXPECT_FALSE(b.busy());
  b.cycle(/*start=*/true);
  const uint64_t t0 = b.cycles();
  const uint64_t budget = cycle_budget(c);
  int dones = 0;
  while (b.cycles() - t0 < budget) {
    b.cycle();
    if (b.done()) {
      ++dones;
      EXPECT_FALSE(b.busy()) << "done_o while busy";
      break;
    }
  }
  EXPECT_EQ(dones, 1) << "no done_o within " << budget << " cycles (hang)";
  const uint64_t took = b.cycles() - t0;
  // done_o is a one-cycle pulse and the unit stays idle and quiet afterwards.
  const uint64_t reqs = b.requests();
  for (int i = 0; i < 20; ++i) {
    b.cycle();
    EXPECT_FALSE(b.done()) << "done_o longer than one cycle or repeated";
    EXPECT_FALSE(b.busy());
  }
  EXPECT_EQ(b.requests(), reqs) << "requests after done_o";
  return took;
}

// Runs `c` on a fresh bench and compares every byte of memory with the model.
void check_run(const Config& c, uint32_t bench_seed, uint32_t ready_pct = 70) {
  SCOPED_TRACE(c.describe() + fmt::format(" bench seed {} ready {}%", bench_seed, ready_pct));
  Bench b(bench_seed);
  b.set_ready_percent(ready_pct);
  b.load(c);
  const std::vector<uint8_t> before = b.memory();
  const auto want = generate(c.mode, c.seed, c.prob, c.k, c.count, c.parents);
  run_to_done(b, c);

  // Expected memory: the initial image with the candidate vectors laid over it.
  std::vector<uint8_t> expect = before;
  std::vector<int> times(kMemBytes, 0);
  for (uint32_t j = 0; j < c.count; ++j) {
    for (size_t i = 0; i < c.k.size(); ++i) {
      expect[c.out_addr - kMemBase + j * c.stride + i] = static_cast<uint8_t>(want[j][i]);
    }
  }
  int bad = 0;
  for (uint32_t a = 0; a < kMemBytes && bad < 10; ++a) {
    if (b.memory()[a] != expect[a]) {
      ++bad;
      ADD_FAILURE() << fmt::format("byte {:#x}: RTL {} expected {}{}", kMemBase + a, b.memory()[a],
                                   expect[a],
                                   expect[a] == before[a] ? " (outside the output area)" : "");
    }
  }
  // Each output byte written exactly once, in order j, i.
  ASSERT_EQ(b.writes().size(), size_t{c.count} * c.k.size());
  size_t n = 0;
  for (uint32_t j = 0; j < c.count; ++j) {
    for (size_t i = 0; i < c.k.size(); ++i, ++n) {
      ASSERT_EQ(b.writes()[n].addr, c.out_addr + j * c.stride + i) << "write " << n;
    }
  }
  // Reads only inside the parent vectors.
  for (uint32_t a : b.reads()) {
    const uint32_t off = a - c.parent_addr;
    const bool in =
        a >= c.parent_addr && off / c.stride < c.parents.size() && off % c.stride < c.k.size();
    EXPECT_TRUE(in) << fmt::format("read at {:#x} outside the parent vectors", a);
  }
  // Parent reads: none in mode 1 and for mutated layers, one per byte otherwise.
  const size_t bytes = size_t{c.count} * c.k.size();
  if (c.mode == Mode::Sample || (c.mode == Mode::Mutate && c.prob == kProbOne)) {
    EXPECT_TRUE(b.reads().empty()) << "parent reads where every byte is sampled";
  }
  if (c.mode == Mode::Crossover || (c.mode == Mode::Mutate && c.prob == 0)) {
    EXPECT_EQ(b.reads().size(), bytes) << "one parent read per byte";
  }
}

void run_mode(Mode mode, uint32_t seed) {
  std::printf("rtlunit_cand_gen: mode %d seed %u\n", static_cast<int>(mode), seed);
  std::mt19937 rng(seed);
  const uint32_t probs[] = {0, kProbOne, 16384, 1, 65535, 0};
  for (int t = 0; t < 14; ++t) {
    const uint32_t prob = t < 6 ? probs[t] : std::uniform_int_distribution<uint32_t>(0, 65536)(rng);
    const Config c = random_config(rng, mode, prob);
    const uint32_t ready = t % 4 == 0 ? 100 : std::uniform_int_distribution<uint32_t>(20, 95)(rng);
    check_run(c, static_cast<uint32_t>(rng()), ready);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(CandGenRtl, SampleMatchesModel) { run_mode(Mode::Sample, 1001); }
TEST(CandGenRtl, MutateMatchesModel) { run_mode(Mode::Mutate, 2002); }
TEST(CandGenRtl, CrossoverMatchesModel) { run_mode(Mode::Crossover, 3003); }

// Directed corners: one parent (every index wraps at once), two parents in crossover (a, b fixed),
// a full MaxLayers vector with K = 1 and 16, and stride == L (back to back vectors).
TEST(CandGenRtl, DirectedCorners) {
  Config c;
  c.k = {16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1};
  c.count = 9;
  c.stride = 16;
  c.out_addr = kMemBase + 0x800;
  c.parent_addr = kMemBase + 0x100;
  c.seed = 0;
  for (int p = 0; p < 2; ++p) {
    spec::Candidate v(16);
    for (int i = 0; i < 16; ++i) v[i] = p * 100 + i;
    c.parents.push_back(v);
  }
  for (Mode m : {Mode::Sample, Mode::Mutate, Mode::Crossover}) {
    c.mode = m;
    c.prob = 40000;
    check_run(c, 77, 100);
    check_run(c, 78, 30);
    c.parents.resize(1);
    check_run(c, 79, 50);
    c.parents.push_back(c.parents[0]);
    c.parents[1][3] = 200;
  }
}

// The mutation test is strict: (r >> 16) < prob. With prob equal to the first draw's r >> 16 the
// first layer keeps its parent byte; one more and it is resampled (probabilities 2^-16 apart, so
// random configurations would practically never tell `<` from `<=`).
TEST(CandGenRtl, MutateProbBoundary) {
  for (uint32_t seed : {1u, 0u, 0xC0FFEEu}) {
    Xorshift32 rng(seed);
    const uint32_t hi = rng.next() >> 16;
    for (uint32_t prob : {hi, hi + 1}) {
      Config c;
      c.mode = Mode::Mutate;
      c.seed = seed;
      c.prob = prob;
      c.k = {16, 16, 16};
      c.count = 4;
      c.stride = 3;
      c.out_addr = kMemBase + 0x400;
      c.parent_addr = kMemBase + 0x10;
      c.parents = {{250, 251, 252}, {240, 241, 242}};
      const auto want = generate(c.mode, c.seed, c.prob, c.k, c.count, c.parents);
      ASSERT_EQ(want[0][0] == 250, prob == hi) << "model: seed " << seed << " prob " << prob;
      check_run(c, 11, 60);
    }
  }
}

// Abort in every cycle of short runs (every state, handshakes in flight, the last write's own
// cycle): idle at once, no further request, no done_o ever.
TEST(CandGenRtl, AbortInEveryCycle) {
  for (Mode mode : {Mode::Sample, Mode::Mutate, Mode::Crossover}) {
    Config c;
    c.mode = mode;
    c.seed = 99;
    c.prob = 32768;
    c.k = {5, 3};
    c.count = 3;
    c.stride = 2;
    c.out_addr = kMemBase + 0x200;
    c.parent_addr = kMemBase + 0x20;
    c.parents = {{1, 2}, {3, 4}, {5, 6}};
    const uint32_t bench_seed = 21 + static_cast<uint32_t>(mode);
    uint64_t took = 0;
    {
      Bench b(bench_seed);
      b.load(c);
      took = run_to_done(b, c);  // done_o seen `took` cycles after the start cycle
    }
    ASSERT_FALSE(::testing::Test::HasFailure()) << "the run without abort failed";
    ASSERT_GT(took, 2u);
    for (uint64_t at = 1; at < took; ++at) {
      SCOPED_TRACE(fmt::format("mode {} abort {} cycles after start (done at {})",
                               static_cast<int>(mode), at, took));
      Bench b(bench_seed);  // same seed: the same ready/latency draws up to the abort
      b.load(c);
      b.cycle(/*start=*/true);
      for (uint64_t i = 1; i < at; ++i) {
        b.cycle();
        ASSERT_FALSE(b.done());
      }
      b.cycle(/*start=*/false, /*abort=*/true);
      const uint64_t reqs = b.requests();
      for (int i = 0; i < 60; ++i) {
        b.cycle();
        ASSERT_FALSE(b.busy()) << i << " cycles after abort";
        ASSERT_FALSE(b.done()) << "done_o after abort";
      }
      ASSERT_EQ(b.requests(), reqs) << "requests after abort";
    }
  }
}

// GEN_MODE 0: done_o at once, no request.
TEST(CandGenRtl, ModeZeroDoneAtOnce) {
  Bench b(5);
  Config c;
  c.mode = static_cast<Mode>(0);
  c.k = {4, 4};
  c.count = 3;
  c.stride = 2;
  b.load(c);
  b.cycle(/*start=*/true);
  b.cycle();
  EXPECT_TRUE(b.done());
  EXPECT_FALSE(b.busy());
  b.cycle();
  EXPECT_FALSE(b.done());
  EXPECT_EQ(b.requests(), 0u);
}

// Abort at many points of a run (requests in flight, reads outstanding, mid-write under
// backpressure): idle the next cycle, no further request and no done_o; a following run (its
// stale read response dropped, as the top's control master does on abort) is still exact.
TEST(CandGenRtl, AbortReturnsToIdle) {
  const uint32_t seed = 4004;
  std::printf("rtlunit_cand_gen: abort seed %u\n", seed);
  std::mt19937 rng(seed);
  for (int t = 0; t < 40; ++t) {
    const Mode mode = static_cast<Mode>(1 + t % 3);
    const Config c = random_config(rng, mode, 30000, /*min_count=*/20);
    // A run takes at least 2 cycles per byte (draw, write), so the abort lands inside it.
    const auto bytes = static_cast<uint32_t>(c.count * c.k.size());
    const uint32_t abort_at =
        std::uniform_int_distribution<uint32_t>(1, std::min(2 * bytes, 400u))(rng);
    SCOPED_TRACE(c.describe() + fmt::format(" abort at cycle {}", abort_at));
    Bench b(static_cast<uint32_t>(rng()));
    b.load(c);
    b.cycle(/*start=*/true);
    for (uint32_t i = 1; i < abort_at; ++i) {
      b.cycle();
      ASSERT_FALSE(b.done()) << "run ended before the abort; shorten abort_at";
    }
    b.cycle(/*start=*/false, /*abort=*/true);
    b.drop_pending_reads();
    const uint64_t reqs = b.requests();
    for (int i = 0; i < 100; ++i) {
      b.cycle();
      ASSERT_FALSE(b.busy()) << "busy " << i << " cycles after abort";
      ASSERT_FALSE(b.done()) << "done_o after abort";
    }
    EXPECT_EQ(b.requests(), reqs) << "requests after abort";

    // Restart on the same bench: the result must match the model from scratch.
    b.clear_log();
    const auto want = generate(c.mode, c.seed, c.prob, c.k, c.count, c.parents);
    run_to_done(b, c);
    for (uint32_t j = 0; j < c.count; ++j) {
      for (size_t i = 0; i < c.k.size(); ++i) {
        ASSERT_EQ(b.at(c.out_addr + j * c.stride + static_cast<uint32_t>(i)), want[j][i])
            << "candidate " << j << " layer " << i;
      }
    }
    ASSERT_EQ(b.writes().size(), size_t{c.count} * c.k.size());
  }
}

}  // namespace
}  // namespace nasa::cand_gen
