// rtl/nasa_fusion_unit.sv alone against an independent reference of the node table algorithm
// (docs/fusion.md "Node table"): a byte memory with random backpressure and random read latency
// serves the control port; after every run the whole node table (through the registered read
// port), the node count and every leaf must equal the reference, the reads must be exactly the
// candidate bytes in order (one at a time, none past an error), errors must name the right
// candidate, and abort must return to idle. Every run has a cycle budget, so a hang fails.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "Vnasa_fusion_unit.h"
#include "nasa/sim/vbench.h"
#include "nasa/hw_spec.h"

#include "ctrl_port_bench.h"

namespace nasa::fusion {
namespace {

constexpr uint32_t kMemBase = 0x2000'0000;  // the byte memory covers [kMemBase, +kMemBytes)
constexpr uint32_t kMemBytes = 1 << 16;
constexpr uint32_t kMaxLatency = 40;
constexpr uint16_t kNoNode = static_cast<uint16_t>(hw::kNoNode);
constexpr auto kBadChoice = static_cast<uint8_t>(hw::Err::BadChoice);
constexpr auto kNodeOverflow = static_cast<uint8_t>(hw::Err::NodeOverflow);

using Vec = std::vector<uint8_t>;  // one candidate: its choice at each layer

struct Batch {
  std::vector<int> k;  // K per layer, L = k.size()
  std::vector<Vec> cands;
  uint32_t addr = kMemBase;
  uint32_t stride = 1;

  size_t layers() const { return k.size(); }
  std::string describe() const {
    return fmt::format("L {} K [{}] count {} stride {} addr {:#x}", k.size(), fmt::join(k, ","),
                       cands.size(), stride, addr);
  }
};

struct Node {
  uint16_t parent = kNoNode;
  uint16_t first = kNoNode;
  uint16_t next = kNoNode;
  uint8_t layer = 0xFF;
  uint8_t choice = 0xFF;
};

struct Outcome {
  bool error = false;
  uint8_t code = 0;
  uint32_t index = 0;  // the failing candidate
  std::vector<Node> nodes;
  std::vector<uint16_t> leaf;  // of the candidates inserted before any error
  size_t bytes_read = 0;       // candidate bytes the algorithm reads, the failing one included
};

// The algorithm written plainly: a map from (parent, choice) to the child, children lists in
// insertion order from which the first/next links are derived at the end.
Outcome reference(const Batch& b, size_t node_cap = hw::kNodeCap) {
  Outcome r;
  std::map<std::pair<int, int>, int> child;
  std::vector<std::vector<int>> children(1);
  r.nodes.push_back(Node{});
  for (size_t j = 0; j < b.cands.size() && !r.error; ++j) {
    int cur = 0;
    for (size_t i = 0; i < b.layers(); ++i) {
      ++r.bytes_read;
      const int ch = b.cands[j][i];
      if (ch >= b.k[i]) {
        r.error = true;
        r.code = kBadChoice;
        r.index = static_cast<uint32_t>(j);
        break;
      }
      const auto it = child.find({cur, ch});
      if (it != child.end()) {
        cur = it->second;
        continue;
      }
      if (r.nodes.size() == node_cap) {
        r.error = true;
        r.code = kNodeOverflow;
        r.index = static_cast<uint32_t>(j);
        break;
      }
      const int id = static_cast<int>(r.nodes.size());
      r.nodes.push_back(Node{static_cast<uint16_t>(cur), kNoNode, kNoNode, static_cast<uint8_t>(i),
                             static_cast<uint8_t>(ch)});
      children.emplace_back();
      children[cur].push_back(id);
      child[{cur, ch}] = id;
      cur = id;
    }
    if (!r.error) r.leaf.push_back(static_cast<uint16_t>(cur));
  }
  for (size_t n = 0; n < children.size(); ++n) {
    const auto& c = children[n];
    if (!c.empty()) r.nodes[n].first = static_cast<uint16_t>(c.front());
    for (size_t s = 0; s + 1 < c.size(); ++s) r.nodes[c[s]].next = static_cast<uint16_t>(c[s + 1]);
  }
  return r;
}

// What the unit reported at the end of a run.
struct RtlResult {
  bool done = false;
  bool error = false;
  uint8_t code = 0;
  uint32_t index = 0;
  uint64_t cycles = 0;  // from the start cycle to the done_o / err_o cycle
};

// The Verilated module plus the byte memory serving its control port.
class Bench : public nasa::testing::CtrlPortBench<Vnasa_fusion_unit> {
 public:
  explicit Bench(uint32_t seed) : CtrlPortBench("nasa_fusion_unit", seed, kMemBase, kMemBytes) {
    top_->node_idx_i = 0;
    top_->leaf_idx_i = 0;
    reset();
  }

  void set_latency(uint32_t lo, uint32_t hi) {
    lat_lo_ = lo;
    lat_hi_ = hi;
  }
  // Like nasa_ctrl_port: accept no read while a response is still to come.
  void set_block_while_pending(bool on) { block_ = on; }

  void load(const Batch& b) {
    for (size_t j = 0; j < b.cands.size(); ++j) {
      for (size_t i = 0; i < b.layers(); ++i) {
        at(b.addr + static_cast<uint32_t>(j) * b.stride + static_cast<uint32_t>(i)) = b.cands[j][i];
      }
    }
    set_layers(b.k);
    top_->cand_addr_i = b.addr;
    top_->cand_stride_i = b.stride;
    top_->cand_count_i = static_cast<uint32_t>(b.cands.size());
  }

  // One clock cycle at the given start/abort levels: a random ready (held low while a read is
  // pending when blocking), the due read response, the read at the handshake, the rules checked
  // (reads only, one outstanding).
  void cycle(bool start = false, bool abort = false) {
    begin_cycle(start, abort, /*allow_ready=*/!(block_ && !pending_.empty()));
    done_ = top_->done_o != 0;
    err_ = top_->err_o != 0;
    busy_ = top_->busy_o != 0;
    const auto m = request();
    const bool valid = m.valid;
    if (valid) ++requests_;
    const Req req{m.we, m.addr};
    EXPECT_FALSE(valid && req.we) << "a write request, cycle " << cycle_;
    if (valid &&
        std::any_of(pending_.begin(), pending_.end(), [](const Rsp& r) { return !r.stale; })) {
      ADD_FAILURE() << "a request while a read is outstanding, cycle " << cycle_;
    }
    end_cycle(valid, req, abort, [this](const Req& r) { accept(r); });
  }

  // After an abort: the reads in flight are either forgotten by the port (the top aborts its
  // control master too) or still answered, before the port accepts another read.
  void abandon_reads(bool keep_responses) {
    if (!keep_responses) {
      pending_.clear();
      return;
    }
    for (auto& r : pending_) r.stale = true;
  }

  bool busy() const { return busy_; }  // sampled in the last cycle, before its edge
  bool busy_now() const { return top_->busy_o != 0; }
  bool done() const { return done_; }
  bool err() const { return err_; }
  uint8_t err_code() const { return top_->err_code_o; }
  uint32_t err_index() const { return top_->err_index_o; }
  uint16_t node_count() const { return top_->node_count_o; }
  uint64_t requests() const { return requests_; }
  const std::vector<uint32_t>& reads() const { return reads_; }
  void clear_reads() { reads_.clear(); }

  // Table read port: the entry for the index of one cycle shows after that cycle's edge.
  Node read_node(uint16_t idx) {
    top_->node_idx_i = idx;
    cycle();
    return Node{top_->node_parent_o, top_->node_first_o, top_->node_next_o, top_->node_layer_o,
                top_->node_choice_o};
  }
  uint16_t read_leaf(uint16_t idx) {
    top_->leaf_idx_i = idx;
    cycle();
    return top_->leaf_o;
  }

 private:
  void accept(const Req& r) {
    reads_.push_back(r.addr);
    uint64_t due = cycle_ + std::uniform_int_distribution<uint64_t>(lat_lo_, lat_hi_)(rng_);
    if (!pending_.empty()) due = std::max(due, pending_.back().due + 1);  // in order
    pending_.push_back({due, at(r.addr), false});
  }

  bool busy_ = false, done_ = false, err_ = false;
  bool block_ = false;
  uint32_t lat_lo_ = 1, lat_hi_ = kMaxLatency;
  uint64_t requests_ = 0;
  std::vector<uint32_t> reads_;
};

// Cycles a run may take: per byte a read (up to kMaxLatency, backpressure) and a child-list search
// of up to MaxChoices steps, with a wide margin.
uint64_t cycle_budget(const Batch& b) { return 1000 + b.cands.size() * b.layers() * 300; }

// Starts a run and clocks until done_o or err_o (start_i is also pulsed now and then during the
// run when `restarts`: it must be ignored while busy). Checks the pulses and the quiet idle after.
RtlResult run(Bench& bench, const Batch& b, std::mt19937* restarts = nullptr) {
  RtlResult r;
  EXPECT_FALSE(bench.busy_now());
  bench.clear_reads();
  bench.cycle(/*start=*/true);
  const uint64_t t0 = bench.cycles();
  const uint64_t budget = cycle_budget(b);
  while (bench.cycles() - t0 < budget) {
    const bool start = restarts != nullptr && bench.busy_now() && (*restarts)() % 16 == 0;
    bench.cycle(start);
    if (bench.done() || bench.err()) break;
    EXPECT_TRUE(bench.busy()) << "idle before done_o/err_o, cycle " << bench.cycles();
    if (::testing::Test::HasFailure()) return r;
  }
  r.done = bench.done();
  r.error = bench.err();
  r.code = bench.err_code();
  r.index = bench.err_index();
  r.cycles = bench.cycles() - t0;
  EXPECT_TRUE(r.done || r.error) << "neither done_o nor err_o within " << budget
                                 << " cycles (hang)";
  EXPECT_FALSE(r.done && r.error) << "done_o and err_o together";
  EXPECT_FALSE(bench.busy()) << "busy with done_o/err_o";
  const uint64_t reqs = bench.requests();
  for (int i = 0; i < 10; ++i) {
    bench.cycle();
    EXPECT_FALSE(bench.done() || bench.err()) << "done_o/err_o longer than one cycle";
    EXPECT_FALSE(bench.busy());
    EXPECT_EQ(bench.err_code(), r.code) << "err_code_o not held";
    EXPECT_EQ(bench.err_index(), r.index) << "err_index_o not held";
  }
  EXPECT_EQ(bench.requests(), reqs) << "requests after the end of the run";
  return r;
}

// Compares a finished run with the reference: outcome, reads, node count, every node, every leaf.
void check(Bench& bench, const Batch& b, const RtlResult& got, const Outcome& want) {
  ASSERT_EQ(got.error, want.error) << (want.error ? "expected error " : "unexpected error ")
                                   << int{want.error ? want.code : got.code};
  if (want.error) {
    EXPECT_EQ(got.code, want.code);
    EXPECT_EQ(got.index, want.index) << "ERR_INDEX (failing candidate)";
  } else {
    EXPECT_EQ(got.code, 0) << "err_code_o after a good run";
  }
  // One read per byte, in the algorithm's order, none after the failing byte.
  ASSERT_EQ(bench.reads().size(), want.bytes_read) << "number of candidate bytes read";
  for (size_t n = 0; n < want.bytes_read; ++n) {
    const uint32_t expect = b.addr + static_cast<uint32_t>(n / b.layers()) * b.stride +
                            static_cast<uint32_t>(n % b.layers());
    ASSERT_EQ(bench.reads()[n], expect) << "read " << n;
  }
  ASSERT_EQ(bench.node_count(), want.nodes.size()) << "node_count_o";
  int bad = 0;
  for (size_t n = 0; n < want.nodes.size() && bad < 10; ++n) {
    const Node g = bench.read_node(static_cast<uint16_t>(n));
    const Node& w = want.nodes[n];
    if (g.parent != w.parent || g.first != w.first || g.next != w.next || g.layer != w.layer ||
        g.choice != w.choice) {
      ++bad;
      ADD_FAILURE() << fmt::format(
          "node {}: RTL parent {} layer {} choice {} first {} next {}, expected {} {} {} {} {}", n,
          g.parent, g.layer, g.choice, g.first, g.next, w.parent, w.layer, w.choice, w.first,
          w.next);
    }
  }
  for (size_t j = 0; j < want.leaf.size() && bad < 10; ++j) {
    const uint16_t g = bench.read_leaf(static_cast<uint16_t>(j));
    if (g != want.leaf[j]) {
      ++bad;
      ADD_FAILURE() << fmt::format("leaf of candidate {}: RTL {} expected {}", j, g, want.leaf[j]);
    }
  }
}

// Runs `b` on `bench` and checks it; returns the cycles the run took.
uint64_t run_and_check(Bench& bench, const Batch& b, std::mt19937* restarts = nullptr) {
  bench.load(b);
  const Outcome want = reference(b);
  const RtlResult got = run(bench, b, restarts);
  if (::testing::Test::HasFailure()) return got.cycles;
  check(bench, b, got, want);
  return got.cycles;
}

// A test's random source, its seed printed first (NASA_RTLUNIT_SEED replays it).
std::mt19937 seeded_rng(const char* what, uint32_t seed) {
  return std::mt19937(nasa::sim::test_seed(std::string("rtlunit_fusion_unit ") + what, seed));
}

uint32_t uni(std::mt19937& rng, uint32_t lo, uint32_t hi) {
  return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
}

Vec random_vec(std::mt19937& rng, const std::vector<int>& k) {
  Vec v(k.size());
  for (size_t i = 0; i < k.size(); ++i) v[i] = static_cast<uint8_t>(uni(rng, 0, k[i] - 1));
  return v;
}

// Candidates with many shared prefixes and exact duplicates: copies of a few pool vectors, each
// kept up to a random layer and partly redrawn after it (or with one layer changed).
std::vector<Vec> pooled(std::mt19937& rng, const std::vector<int>& k, size_t count) {
  std::vector<Vec> pool(uni(rng, 1, 6));
  for (auto& p : pool) p = random_vec(rng, k);
  std::vector<Vec> out;
  const auto layers = static_cast<uint32_t>(k.size());
  for (size_t j = 0; j < count; ++j) {
    Vec v = pool[uni(rng, 0, static_cast<uint32_t>(pool.size()) - 1)];
    switch (uni(rng, 0, 3)) {
      case 0:
        break;   // a duplicate
      case 1: {  // one layer changed
        const uint32_t i = uni(rng, 0, layers - 1);
        v[i] = static_cast<uint8_t>(uni(rng, 0, k[i] - 1));
        break;
      }
      default: {  // the prefix kept, the rest partly redrawn
        for (uint32_t i = uni(rng, 0, layers - 1); i < layers; ++i) {
          if (uni(rng, 0, 1) != 0) v[i] = static_cast<uint8_t>(uni(rng, 0, k[i] - 1));
        }
        break;
      }
    }
    if (uni(rng, 0, 3) == 0) pool.push_back(v);  // new prefixes get shared too
    out.push_back(std::move(v));
  }
  return out;
}

// A random layout: stride L..L+9, an unaligned start inside the memory.
void place(std::mt19937& rng, Batch& b) {
  b.stride = static_cast<uint32_t>(b.layers()) + uni(rng, 0, 9);
  b.addr = kMemBase + uni(rng, 0, 255);
}

Batch random_batch(std::mt19937& rng, size_t max_count = 64) {
  Batch b;
  const uint32_t layers = uni(rng, 0, 4) == 0 ? (uni(rng, 0, 1) != 0 ? 1 : hw::kMaxLayers)
                                              : uni(rng, 1, hw::kMaxLayers);
  for (uint32_t i = 0; i < layers; ++i) {
    b.k.push_back(uni(rng, 0, 5) == 0 ? 1 : static_cast<int>(uni(rng, 1, hw::kMaxChoices)));
  }
  b.cands = pooled(rng, b.k, uni(rng, 1, static_cast<uint32_t>(max_count)));
  place(rng, b);
  return b;
}

Batch fmnist_batch(std::mt19937& rng, size_t count) {
  Batch b;
  b.k = {4, 5, 6, 5, 6, 4};
  b.cands = pooled(rng, b.k, count);
  place(rng, b);
  return b;
}

// L = 16, K = 16, independent uniform candidates: ~15 new nodes each, NodeCap overflows around
// candidate 68.
Batch overflow_batch(std::mt19937& rng, size_t count) {
  Batch b;
  b.k.assign(hw::kMaxLayers, static_cast<int>(hw::kMaxChoices));
  for (size_t j = 0; j < count; ++j) b.cands.push_back(random_vec(rng, b.k));
  place(rng, b);
  return b;
}

TEST(FusionUnitRtl, RandomBatchesMatchReference) {
  std::mt19937 rng = seeded_rng("random batches", 5005);
  for (int bench_no = 0; bench_no < 10; ++bench_no) {
    const auto bench_seed = static_cast<uint32_t>(rng());
    Bench bench(bench_seed);
    // Several runs per bench: the unit is reused, stale entries of longer runs stay behind.
    for (int t = 0; t < 20; ++t) {
      Batch b = random_batch(rng);
      if (uni(rng, 0, 5) == 0) {  // a bad choice somewhere
        const auto j = uni(rng, 0, static_cast<uint32_t>(b.cands.size()) - 1);
        const auto i = uni(rng, 0, static_cast<uint32_t>(b.layers()) - 1);
        b.cands[j][i] = static_cast<uint8_t>(uni(rng, static_cast<uint32_t>(b.k[i]), 255));
      }
      const uint32_t ready = t % 4 == 0 ? 100 : uni(rng, 20, 95);
      bench.set_ready_percent(ready);
      bench.set_latency(1, t % 3 == 0 ? 1 : kMaxLatency);
      SCOPED_TRACE(b.describe() + fmt::format(" bench {} seed {} run {} ready {}%", bench_no,
                                              bench_seed, t, ready));
      run_and_check(bench, b, t % 2 == 0 ? &rng : nullptr);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(FusionUnitRtl, FmnistLikeBatches) {
  std::mt19937 rng = seeded_rng("fmnist-like", 6006);
  Bench bench(static_cast<uint32_t>(rng()));
  for (size_t count : {1u, 7u, 64u, 200u, 1u, 33u}) {
    const Batch b = fmnist_batch(rng, count);
    SCOPED_TRACE(b.describe());
    run_and_check(bench, b);
    if (::testing::Test::HasFailure()) return;
  }
}

// A full batch of MaxCands candidates (the leaf table's last entry) that still fits NodeCap.
TEST(FusionUnitRtl, MaxCandsBatch) {
  std::mt19937 rng(7007);
  Batch b;
  b.k = {4, 5, 6, 5, 6, 4};
  std::vector<Vec> pool(40);
  for (auto& p : pool) p = random_vec(rng, b.k);
  for (uint32_t j = 0; j < hw::kMaxCands; ++j) b.cands.push_back(pool[uni(rng, 0, 39)]);
  b.stride = 6;
  b.addr = kMemBase + 3;
  const Outcome want = reference(b);
  ASSERT_FALSE(want.error);
  Bench bench(8);
  bench.set_ready_percent(80);
  SCOPED_TRACE(b.describe());
  run_and_check(bench, b);
}

// Child comparisons of the walk (docs/fusion.md: "one cycle per child compared"): a byte whose
// choice is the p-th child of the current node compares p children; a new child after n existing
// ones compares n (none for a node without children).
uint64_t child_compares(const Batch& b) {
  std::vector<std::vector<std::pair<int, int>>> children(1);  // (choice, node) in insertion order
  uint64_t compares = 0;
  for (const Vec& v : b.cands) {
    int cur = 0;
    for (size_t i = 0; i < b.layers(); ++i) {
      auto& list = children[cur];
      size_t p = 0;
      while (p < list.size() && list[p].first != v[i]) ++p;
      if (p < list.size()) {
        compares += p + 1;
        cur = list[p].second;
      } else {
        compares += list.size();
        list.emplace_back(v[i], static_cast<int>(children.size()));
        cur = static_cast<int>(children.size());
        children.emplace_back();
      }
    }
  }
  return compares;
}

// Cycle cost on a port that always accepts and answers in one cycle (nasa_ctrl_port on a cached
// word answers in one, and takes a new request the cycle after). From the design (the header of
// rtl/nasa_fusion_unit.sv): every byte costs its request cycle, its response cycle (StWait) and
// one StStep cycle per child compared; an allocation's StNew cycle overlaps the next byte's
// request. So a run of B bytes with C compares takes 2B + C cycles, plus at most a few cycles to
// start and to end.
TEST(FusionUnitRtl, CycleCostIsTwoPerBytePlusOnePerCompare) {
  std::mt19937 rng(9009);
  Bench bench(9);
  bench.set_ready_percent(100);
  bench.set_latency(1, 1);
  bench.set_block_while_pending(true);
  constexpr uint64_t kStartEnd = 4;
  for (const auto& [name, b] :
       {std::pair{"fmnist-like L=6, 200 candidates from a pool", fmnist_batch(rng, 200)},
        std::pair{"L=16 K=16, 60 independent candidates", overflow_batch(rng, 60)}}) {
    const uint64_t cycles = run_and_check(bench, b);
    const Outcome want = reference(b);
    ASSERT_FALSE(want.error) << name;
    const uint64_t bytes = b.cands.size() * b.layers();
    const uint64_t compares = child_compares(b);
    const uint64_t model = 2 * bytes + compares;
    std::printf("rtlunit_fusion_unit: %s: %llu cycles (2 x %llu bytes + %llu compares = %llu), "
                "%zu nodes\n",
                name, static_cast<unsigned long long>(cycles),
                static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(compares),
                static_cast<unsigned long long>(model), want.nodes.size());
    EXPECT_GE(cycles, model) << name;
    EXPECT_LE(cycles, model + kStartEnd) << name;
  }
}

// A choice equal to K_i (and 255) fails with BadChoice naming the candidate; nothing is read after
// the bad byte; a new start then runs a good batch exactly. Also the first byte of the batch.
TEST(FusionUnitRtl, BadChoiceNamesCandidate) {
  std::mt19937 rng(1111);
  Bench bench(12);
  struct Case {
    size_t cand, layer;
    int value;  // offset from K_i
  };
  for (const Case c : {Case{5, 3, 0}, Case{0, 0, 0}, Case{9, 5, 255}, Case{3, 5, 0}}) {
    Batch b;
    b.k = {4, 5, 6, 5, 6, 4};
    b.cands = pooled(rng, b.k, 12);
    place(rng, b);
    const int k = b.k[c.layer];
    b.cands[c.cand][c.layer] = static_cast<uint8_t>(std::min(255, k + c.value));
    SCOPED_TRACE(b.describe() + fmt::format(" bad byte: candidate {} layer {}", c.cand, c.layer));
    const Outcome want = reference(b);
    ASSERT_TRUE(want.error);
    ASSERT_EQ(want.code, kBadChoice);
    ASSERT_EQ(want.index, c.cand);
    bench.load(b);
    const RtlResult got = run(bench, b);
    check(bench, b, got, want);
    // K_i - 1 is fine: the same batch with that byte corrected fuses.
    b.cands[c.cand][c.layer] = static_cast<uint8_t>(k - 1);
    run_and_check(bench, b);
    if (::testing::Test::HasFailure()) return;
  }
}

// Random L=16, K=16 candidates overflow NodeCap: NodeOverflow names the candidate, the table holds
// the NodeCap nodes allocated so far. Then a batch that needs exactly NodeCap nodes fuses, and one
// more new node overflows at the candidate that needs it.
TEST(FusionUnitRtl, NodeOverflowNamesCandidate) {
  std::mt19937 rng = seeded_rng("overflow", 2222);
  Bench bench(13);
  const Batch over = overflow_batch(rng, 100);
  const Outcome want = reference(over);
  ASSERT_TRUE(want.error);
  ASSERT_EQ(want.code, kNodeOverflow);
  ASSERT_EQ(want.nodes.size(), hw::kNodeCap);
  {
    SCOPED_TRACE(over.describe() + fmt::format(" overflow at candidate {}", want.index));
    bench.load(over);
    check(bench, over, run(bench, over), want);
  }
  if (::testing::Test::HasFailure()) return;

  // Exactly NodeCap: the candidates before the failing one, then a copy of candidate 0 whose last
  // d layers branch off (d = the nodes still free), then a duplicate (no new node).
  Batch exact = over;
  exact.cands.resize(want.index);
  const size_t used = reference(exact).nodes.size();
  const size_t d = hw::kNodeCap - used;
  ASSERT_GE(d, 1u);
  ASSERT_LE(d, hw::kMaxLayers);
  bool found = false;
  for (int ch = 0; ch < static_cast<int>(hw::kMaxChoices) && !found; ++ch) {
    Vec v = exact.cands[0];
    v[hw::kMaxLayers - d] = static_cast<uint8_t>(ch);
    exact.cands.push_back(v);
    if (reference(exact).nodes.size() == hw::kNodeCap) {
      found = true;
    } else {
      exact.cands.pop_back();
    }
  }
  ASSERT_TRUE(found) << "no branch of candidate 0 adds exactly " << d << " nodes";
  exact.cands.push_back(exact.cands[1]);
  ASSERT_FALSE(reference(exact).error);
  {
    SCOPED_TRACE(exact.describe() + " exactly NodeCap nodes");
    run_and_check(bench, exact);
  }
  if (::testing::Test::HasFailure()) return;

  // One more candidate with a new last layer: overflow at it.
  Vec v = exact.cands[0];
  bool added = false;
  for (int ch = 0; ch < static_cast<int>(hw::kMaxChoices) && !added; ++ch) {
    v.back() = static_cast<uint8_t>(ch);
    Batch t = exact;
    t.cands.push_back(v);
    added = reference(t).error;
  }
  ASSERT_TRUE(added);
  exact.cands.push_back(v);
  exact.cands.push_back(exact.cands[2]);
  const Outcome want2 = reference(exact);
  ASSERT_TRUE(want2.error);
  ASSERT_EQ(want2.index, exact.cands.size() - 2);
  SCOPED_TRACE(exact.describe() + " one node over NodeCap");
  bench.load(exact);
  check(bench, exact, run(bench, exact), want2);
}

// Errors and good runs alternate on one bench: each start clears the last error, nothing stale
// leaks into the next table.
TEST(FusionUnitRtl, RepeatedRunsReuseUnit) {
  std::mt19937 rng(3333);
  Bench bench(14);
  for (int t = 0; t < 10; ++t) {
    Batch b;
    switch (t % 4) {
      case 0:
        b = random_batch(rng, 64);
        break;
      case 1:
        b = overflow_batch(rng, 80);
        break;
      case 2:
        b = random_batch(rng, 4);  // small after large: most of the table stale
        break;
      default:
        b = fmnist_batch(rng, 50);
        b.cands[uni(rng, 0, 49)][uni(rng, 0, 5)] = 200;
        break;
    }
    SCOPED_TRACE(b.describe() + fmt::format(" run {}", t));
    run_and_check(bench, b);
    if (::testing::Test::HasFailure()) return;
  }
}

// Abort at many points of a run (request held under backpressure, read outstanding, mid-search):
// idle the next cycle, no further request, no done_o/err_o. The reads in flight are either dropped
// by the port or still answered (before the port accepts another read); either way the next run on
// the same bench, started at once or later, is exact.
TEST(FusionUnitRtl, AbortReturnsToIdle) {
  std::mt19937 rng = seeded_rng("abort", 4444);
  int aborted = 0;
  for (int t = 0; t < 40; ++t) {
    Batch b = random_batch(rng, 64);
    while (b.cands.size() * b.layers() < 8) b.cands.push_back(b.cands.front());
    const auto bytes = static_cast<uint32_t>(b.cands.size() * b.layers());
    const uint32_t abort_at = uni(rng, 1, std::min(2 * bytes, 300u));
    const bool keep = t % 2 == 0;
    SCOPED_TRACE(b.describe() + fmt::format(" abort at cycle {} responses {}", abort_at,
                                            keep ? "kept" : "dropped"));
    Bench bench(static_cast<uint32_t>(rng()));
    bench.set_block_while_pending(keep);
    bench.load(b);
    bench.cycle(/*start=*/true);
    bool ended = false;
    for (uint32_t i = 1; i < abort_at && !ended; ++i) {
      bench.cycle();
      ended = bench.done() || bench.err();
    }
    if (ended) continue;  // a short or failing batch finished first
    ++aborted;
    bench.cycle(/*start=*/false, /*abort=*/true);
    bench.abandon_reads(keep);
    const uint64_t reqs = bench.requests();
    // Restart at once half of the time: a kept response then arrives during the next run.
    const uint32_t quiet = t % 4 < 2 ? 60 : uni(rng, 0, 2);
    for (uint32_t i = 0; i < quiet; ++i) {
      bench.cycle();
      ASSERT_FALSE(bench.busy()) << "busy " << i << " cycles after abort";
      ASSERT_FALSE(bench.done() || bench.err()) << "done_o/err_o after abort";
    }
    ASSERT_EQ(bench.requests(), reqs) << "requests after abort";
    run_and_check(bench, b);
    if (::testing::Test::HasFailure()) return;
  }
  std::printf("rtlunit_fusion_unit: %d of 40 runs aborted\n", aborted);
  EXPECT_GE(aborted, 30)
      << "most runs must still be running at the abort, or the test lost its point";
}

// Abort in the same cycle as start: nothing starts.
TEST(FusionUnitRtl, AbortWithStartStaysIdle) {
  std::mt19937 rng(5555);
  Bench bench(15);
  const Batch b = random_batch(rng, 8);
  bench.load(b);
  bench.cycle(/*start=*/true, /*abort=*/true);
  const uint64_t reqs = bench.requests();
  for (int i = 0; i < 20; ++i) {
    bench.cycle();
    ASSERT_FALSE(bench.busy());
    ASSERT_FALSE(bench.done() || bench.err());
  }
  EXPECT_EQ(bench.requests(), reqs);
  run_and_check(bench, b);
}

}  // namespace
}  // namespace nasa::fusion
