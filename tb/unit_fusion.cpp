// Software fusion (hash-consing, statistics, batch sources) and schedules (orders, arena plans,
// modeled DRAM traffic), checked against hand-built tries and independent computations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "nasa/fusion.h"
#include "nasa/hw_spec.h"
#include "nasa/schedule.h"
#include "nasa/spec.h"

#include "thrown_message.h"

namespace nasa::fusion {
namespace {

using spec::Candidate;
using spec::Supernet;

Supernet fmnist() { return spec::builtin_space("fmnist-mb"); }

// 8x8x1 -> stem 4 -> [4, s1: mb_k3_e1 mb_k3_e3 skip] -> [8, s2: mb_k3_e3 conv_k3]
// -> [8, s1: mb_k3_e1 mb_k5_e1 skip] -> head 16 -> 3 classes.
Supernet tiny() {
  Supernet n;
  n.name = "tiny";
  n.in_h = 8;
  n.in_w = 8;
  n.in_c = 1;
  n.classes = 3;
  n.stem = {4, 3, 1};
  auto op = [](const char* s) { return spec::parse_op(s); };
  n.layers = {{4, 1, {op("mb_k3_e1"), op("mb_k3_e3"), op("skip")}},
              {8, 2, {op("mb_k3_e3"), op("conv_k3")}},
              {8, 1, {op("mb_k3_e1"), op("mb_k5_e1"), op("skip")}}};
  n.head = {16};
  spec::validate(n);
  return n;
}

int scale() {
  const char* s = std::getenv("NASA_TEST_SCALE");
  return s ? std::max(1, std::atoi(s)) : 1;
}

// Runs `f` and returns the FusionError message; fails the test when nothing is thrown.
std::string error_of(const std::function<void()>& f) {
  return nasa::testing::message_of<FusionError>(f, "FusionError");
}

// Random candidates with forced sharing: exact duplicates of earlier candidates and copies of an
// earlier candidate re-sampled from a random layer on (shared prefixes).
std::vector<Candidate> shared_batch(const Supernet& net, size_t n, uint64_t seed) {
  std::vector<Candidate> b = random_candidates(net, n, seed);
  std::mt19937_64 rng(seed ^ 0xD1CEull);
  const size_t layers = net.layers.size();
  for (size_t i = 1; i < n; ++i) {
    switch (rng() % 4) {
      case 0:
        b[i] = b[rng() % i];
        break;
      case 1: {
        b[i] = b[rng() % i];
        for (size_t j = rng() % layers; j < layers; ++j) {
          b[i][j] = static_cast<int>(rng() % net.layers[j].choices.size());
        }
        break;
      }
      default:
        break;
    }
  }
  if (n >= 2) b[n - 1] = b[0];
  return b;
}

uint64_t image_bytes(const Supernet& net) {
  return static_cast<uint64_t>(net.in_h) * static_cast<uint64_t>(net.in_w) *
         static_cast<uint64_t>(net.in_c);
}

// ---------------------------------------------------------------------------------------------
// Fusion

TEST(Fusion, HandBuiltTrie) {
  const Supernet net = tiny();
  const std::vector<Candidate> batch = {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {0, 0, 0}};
  FusedGraph g = fuse(net, batch);
  // id: parent, layer, choice, children, depth
  const std::vector<Node> want = {
      {kNoParent, -1, -1, {1, 5}, 0},  // 0 root
      {0, 0, 0, {2}, 1},               // 1 = 0
      {1, 1, 0, {3, 4}, 2},            // 2 = 0-0
      {2, 2, 0, {}, 3},                // 3 = 0-0-0
      {2, 2, 1, {}, 3},                // 4 = 0-0-1
      {0, 0, 1, {6}, 1},               // 5 = 1
      {5, 1, 0, {7}, 2},               // 6 = 1-0
      {6, 2, 0, {}, 3},                // 7 = 1-0-0
  };
  EXPECT_EQ(g.nodes, want);
  EXPECT_EQ(g.leaf_of, (std::vector<uint32_t>{3, 4, 7, 3}));
  EXPECT_EQ(g.unique_leaves, (std::vector<uint32_t>{3, 4, 7}));
  EXPECT_EQ(g.num_layers, 3);
  for (size_t j = 0; j < batch.size(); ++j) EXPECT_EQ(path_of(g, g.leaf_of[j]), batch[j]);
  EXPECT_EQ(path_of(g, 0), Candidate{});
  EXPECT_EQ(path_of(g, 6), (Candidate{1, 0}));

  FusionStats s = fusion_stats(net, g);
  EXPECT_EQ(s.candidates, 4u);
  EXPECT_EQ(s.unique_candidates, 3u);
  EXPECT_EQ(s.nodes, 8u);
}

TEST(Fusion, SkipNodesAreNodesOfTheirOwn) {
  // Skip is an op like any other for hash-consing: 2-x and 0-x never share a node.
  const Supernet net = tiny();
  FusedGraph g = fuse(net, std::vector<Candidate>{{2, 1, 2}, {0, 1, 2}, {2, 1, 2}, {2, 1, 0}});
  EXPECT_EQ(g.nodes.size(), 1u + 3u + 3u + 1u);
  EXPECT_EQ(g.leaf_of, (std::vector<uint32_t>{3, 6, 3, 7}));
  EXPECT_EQ(g.nodes[2].children, (std::vector<uint32_t>{3, 7}));
}

TEST(Fusion, IncrementalFuserEqualsBatchFuse) {
  const Supernet net = fmnist();
  const auto batch = shared_batch(net, 40, 7);
  Fuser f(net);
  for (size_t j = 0; j < batch.size(); ++j) {
    size_t before = f.graph().nodes.size();
    uint32_t leaf = f.add(batch[j]);
    EXPECT_EQ(leaf, f.graph().leaf_of.back());
    // Re-adding a candidate allocates nothing.
    EXPECT_EQ(f.add(batch[j]), leaf);
    EXPECT_GE(f.graph().nodes.size(), before);
  }
  std::vector<Candidate> doubled;
  for (const auto& c : batch) {
    doubled.push_back(c);
    doubled.push_back(c);
  }
  EXPECT_EQ(f.graph(), fuse(net, doubled));
}

TEST(Fusion, NodeKeyHashing) {
  NodeKeyHash h;
  NodeKey a{1, 2, {3}}, b{1, 2, {3}}, c{1, 2, {4}}, d{2, 1, {3}}, e{1, 2, {3, 5}};
  EXPECT_EQ(a, b);
  EXPECT_EQ(h(a), h(b));
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  EXPECT_NE(a, e);
  // Not a proof of quality, but a constant hash would pass everything else.
  std::set<size_t> seen = {h(a), h(c), h(d), h(e)};
  EXPECT_EQ(seen.size(), 4u);
}

// The independent model: distinct prefixes of the candidate vectors.
TEST(Fusion, RandomBatchesMatchDistinctPrefixes) {
  const Supernet net = fmnist();
  const size_t L = net.layers.size();
  const uint64_t base_seed = 0xF0510000;
  std::printf("RandomBatchesMatchDistinctPrefixes: seeds %#llx + n + 1000 * round\n",
              static_cast<unsigned long long>(base_seed));
  const uint64_t stem = spec::stem_cost(net).macs, head = spec::head_cost(net).macs;
  for (int round = 0; round < scale(); ++round) {
    for (size_t n = 1; n <= 64; ++n) {
      const uint64_t seed = base_seed + n + 1000 * static_cast<uint64_t>(round);
      SCOPED_TRACE(::testing::Message() << "seed " << seed << ", batch of " << n);
      const auto batch = shared_batch(net, n, seed);
      FusedGraph g = fuse(net, batch);

      std::set<Candidate> prefixes, distinct(batch.begin(), batch.end());
      std::set<std::pair<int, int>> weight_sets;
      uint64_t macs_fused = stem + head * distinct.size(), macs_unfused = 0;
      for (const auto& c : batch) {
        macs_unfused += spec::candidate_macs(net, c);
        for (size_t len = 1; len <= L; ++len) {
          Candidate p(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(len));
          if (prefixes.insert(p).second) macs_fused += spec::op_cost(net, len - 1, p.back()).macs;
          weight_sets.emplace(static_cast<int>(len - 1), c[len - 1]);
        }
      }
      ASSERT_EQ(g.nodes.size(), 1 + prefixes.size());
      FusionStats s = fusion_stats(net, g);
      EXPECT_EQ(s.nodes, 1 + prefixes.size());
      EXPECT_EQ(s.candidates, n);
      EXPECT_EQ(s.unique_candidates, distinct.size());
      EXPECT_EQ(g.unique_leaves.size(), distinct.size());
      EXPECT_EQ(s.macs_fused, macs_fused);
      EXPECT_EQ(s.macs_unfused, macs_unfused);
      EXPECT_LE(s.macs_fused, s.macs_unfused);
      EXPECT_LE(s.act_bytes_fused, s.act_bytes_unfused);

      uint64_t weights = stem_footprint(net).weight_bytes + head_footprint(net).weight_bytes;
      for (auto [l, c] : weight_sets) {
        weights += op_footprint(net, static_cast<size_t>(l), static_cast<size_t>(c)).weight_bytes;
      }
      EXPECT_EQ(s.weight_bytes_fused, weights);

      // Leaves: equal exactly for equal candidates; each leaf spells its candidate.
      for (size_t i = 0; i < n; ++i) {
        EXPECT_EQ(path_of(g, g.leaf_of[i]), batch[i]);
        EXPECT_EQ(g.nodes[g.leaf_of[i]].depth, static_cast<int>(L));
        for (size_t j = 0; j < i; ++j) {
          EXPECT_EQ(g.leaf_of[i] == g.leaf_of[j], batch[i] == batch[j]) << i << " vs " << j;
        }
      }
      // Ids are allocation order: walking the batch, each node on a path is either known or
      // exactly the next id.
      uint32_t next = 1;
      for (const auto& c : batch) {
        uint32_t cur = 0;
        for (size_t i = 0; i < L; ++i) {
          auto it = std::find_if(g.nodes[cur].children.begin(), g.nodes[cur].children.end(),
                                 [&](uint32_t k) { return g.nodes[k].choice == c[i]; });
          ASSERT_NE(it, g.nodes[cur].children.end());
          ASSERT_LE(*it, next);
          if (*it == next) ++next;
          cur = *it;
        }
      }
      EXPECT_EQ(next, g.nodes.size());
      for (uint32_t id = 1; id < g.nodes.size(); ++id) {
        const Node& nd = g.nodes[id];
        EXPECT_EQ(nd.depth, nd.layer + 1);
        EXPECT_EQ(nd.depth, g.nodes[nd.parent].depth + 1);
        EXPECT_TRUE(std::is_sorted(nd.children.begin(), nd.children.end()));
      }
    }
  }
}

TEST(Fusion, SingleCandidateIsNotFused) {
  const Supernet net = fmnist();
  for (uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    auto batch = random_candidates(net, 1, seed);
    FusionStats s = fusion_stats(net, fuse(net, batch));
    EXPECT_EQ(s.macs_fused, s.macs_unfused);
    EXPECT_EQ(s.macs_fused, spec::candidate_macs(net, batch[0]));
    EXPECT_EQ(s.weight_bytes_fused, s.weight_bytes_unfused);
    EXPECT_EQ(s.act_bytes_fused, s.act_bytes_unfused);
    EXPECT_EQ(s.nodes, net.layers.size() + 1);
  }
}

TEST(Fusion, StatsJson) {
  const Supernet net = tiny();
  FusionStats s =
      fusion_stats(net, fuse(net, std::vector<Candidate>{{0, 0, 0}, {0, 0, 1}, {0, 0, 0}}));
  nlohmann::json j = to_json(s);
  std::set<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"candidate_count", "unique_candidate_count", "nodes",
                                         "macs_unfused_per_image", "macs_fused_per_image",
                                         "weight_bytes_unfused", "weight_bytes_fused",
                                         "act_bytes_unfused_per_image", "act_bytes_fused_per_image",
                                         "mac_ratio"}));
  EXPECT_EQ(j["candidate_count"], 3);
  EXPECT_EQ(j["unique_candidate_count"], 2);
  EXPECT_EQ(j["nodes"], 5);
  EXPECT_EQ(j["macs_fused_per_image"], s.macs_fused);
  EXPECT_DOUBLE_EQ(j["mac_ratio"].get<double>(),
                   static_cast<double>(s.macs_unfused) / static_cast<double>(s.macs_fused));
  EXPECT_GT(j["mac_ratio"].get<double>(), 1.0);
}

// docs/supernet.md worked example: fmnist-mb layer 2 (28x28x16 -> 14x14x24), mb_k3_e6.
TEST(Fusion, FootprintOfDocumentedOp) {
  const Supernet net = fmnist();
  OpFootprint f = op_footprint(net, 2, 3);
  EXPECT_EQ(f.macs, 1825152u);
  // 4,920 params = 4,704 weights + 216 biases; each bias is a parameter record.
  EXPECT_EQ(f.weight_bytes, 4704u + 216u * hw::kParamBytes);
  EXPECT_EQ(f.intermediates, (std::vector<uint64_t>{28u * 28 * 96, 14u * 14 * 96}));
  EXPECT_EQ(f.out_bytes, 14u * 14 * 24);
  EXPECT_FALSE(f.alias);

  OpFootprint skip = op_footprint(net, 1, 4);
  EXPECT_TRUE(skip.alias);
  EXPECT_EQ(skip.macs, 0u);
  EXPECT_EQ(skip.weight_bytes, 0u);
  EXPECT_EQ(skip.act_bytes(), 0u);

  OpFootprint stem = stem_footprint(net);
  EXPECT_EQ(stem.weight_bytes, 9u * 16 + 16 * hw::kParamBytes);
  EXPECT_EQ(stem.out_bytes, 28u * 28 * 16);
  OpFootprint head = head_footprint(net);
  EXPECT_EQ(head.weight_bytes, 40u * 128 + 128 * 10 + (128 + 10) * hw::kParamBytes);
  EXPECT_EQ(head.intermediates, (std::vector<uint64_t>{7u * 7 * 128, 128}));
  EXPECT_EQ(head.out_bytes, 10u);
}

// Every op: weights recounted conv by conv from the shapes (expand cin*cin*e, depthwise
// k*k*cin*e, project cin*e*cout; conv k*k*cin*cout).
TEST(Fusion, FootprintWeightsFromShapes) {
  const Supernet net = fmnist();
  const auto shapes = spec::layer_shapes(net);
  for (size_t i = 0; i < net.layers.size(); ++i) {
    for (size_t c = 0; c < net.layers[i].choices.size(); ++c) {
      SCOPED_TRACE(::testing::Message() << "layer " << i << " choice " << c);
      const spec::OpSpec op = net.layers[i].choices[c];
      const auto s = shapes[i];
      uint64_t w = 0, ch = 0;
      const uint64_t k = static_cast<uint64_t>(op.k), e = static_cast<uint64_t>(op.expand);
      const uint64_t cin = static_cast<uint64_t>(s.cin), cout = static_cast<uint64_t>(s.cout);
      if (op.kind == spec::OpKind::MBConv) {
        if (e != 1) {
          w += cin * cin * e;
          ch += cin * e;
        }
        w += k * k * cin * e + cin * e * cout;
        ch += cin * e + cout;
      } else if (op.kind == spec::OpKind::Conv) {
        w += k * k * cin * cout;
        ch += cout;
      }
      OpFootprint f = op_footprint(net, i, c);
      EXPECT_EQ(f.weight_bytes, w + ch * hw::kParamBytes);
      EXPECT_EQ(f.macs, spec::op_cost(net, i, c).macs);
    }
  }
}

TEST(Fusion, RandomCandidatesAreSeededAndValid) {
  const Supernet net = fmnist();
  auto a = random_candidates(net, 200, 42), b = random_candidates(net, 200, 42);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, random_candidates(net, 200, 43));
  std::mt19937_64 rng(42);
  for (const auto& c : a) {
    EXPECT_NO_THROW(spec::validate_candidate(net, c));
    for (size_t i = 0; i < c.size(); ++i) {
      EXPECT_EQ(c[i], static_cast<int>(rng() % net.layers[i].choices.size()));
    }
  }
  // Every choice of every layer shows up in 200 draws.
  for (size_t i = 0; i < net.layers.size(); ++i) {
    std::set<int> seen;
    for (const auto& c : a) seen.insert(c[i]);
    EXPECT_EQ(seen.size(), net.layers[i].choices.size()) << "layer " << i;
  }
  EXPECT_TRUE(random_candidates(net, 0, 1).empty());
}

class ArchFile : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& name, const std::string& text) {
    auto p = std::filesystem::path(::testing::TempDir()) / name;
    std::ofstream(p) << text;
    return p;
  }
};

TEST_F(ArchFile, ReadsCandidatesSkippingCommentsAndBlanks) {
  const Supernet net = fmnist();
  auto p = write("nasa_arch_ok.txt",
                 "# generation 3\n2-0-1-3-4-0\n\n   \n  1-1-1-1-1-1  \r\n#0-0-0-0-0-0\n"
                 "0-4-0-5-0-5");
  auto cands = read_arch_file(p, net);
  EXPECT_EQ(cands,
            (std::vector<Candidate>{{2, 0, 1, 3, 4, 0}, {1, 1, 1, 1, 1, 1}, {0, 4, 0, 5, 0, 5}}));
}

TEST_F(ArchFile, BadLineIsNamed) {
  const Supernet net = fmnist();
  auto p = write("nasa_arch_bad.txt", "# header\n2-0-1-3-4-0\n\n2-0-9-3-4-0\n1-1-1-1-1-1\n");
  std::string msg = error_of([&] { read_arch_file(p, net); });
  EXPECT_NE(msg.find(p.string() + ":4:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("layer 2 choice 9"), std::string::npos) << msg;

  auto q = write("nasa_arch_short.txt", "2-0-1\n");
  msg = error_of([&] { read_arch_file(q, net); });
  EXPECT_NE(msg.find(q.string() + ":1:"), std::string::npos) << msg;
  auto r = write("nasa_arch_junk.txt", "0-0-0-0-0-0\nabc\n");
  msg = error_of([&] { read_arch_file(r, net); });
  EXPECT_NE(msg.find(r.string() + ":2:"), std::string::npos) << msg;
}

TEST_F(ArchFile, MissingOrEmptyFile) {
  const Supernet net = fmnist();
  std::string msg = error_of([&] { read_arch_file("/nonexistent/arch.txt", net); });
  EXPECT_NE(msg.find("/nonexistent/arch.txt"), std::string::npos) << msg;
  auto p = write("nasa_arch_empty.txt", "# nothing\n\n");
  msg = error_of([&] { read_arch_file(p, net); });
  EXPECT_NE(msg.find("no candidates"), std::string::npos) << msg;
  EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
}

TEST(Fusion, Errors) {
  const Supernet net = fmnist();
  std::string msg = error_of([&] { fuse(net, std::vector<Candidate>{}); });
  EXPECT_NE(msg.find("empty batch"), std::string::npos) << msg;

  std::vector<Candidate> batch = {{0, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1}, {0, 0, 7, 0, 0, 0}};
  msg = error_of([&] { fuse(net, batch); });
  EXPECT_NE(msg.find("batch candidate 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("layer 2 choice 7"), std::string::npos) << msg;

  batch[2] = {0, 0, 0};
  msg = error_of([&] { fuse(net, batch); });
  EXPECT_NE(msg.find("batch candidate 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("3 choices for 6 layers"), std::string::npos) << msg;

  batch[2] = {0, 0, 0, 0, 0, -1};
  msg = error_of([&] { fuse(net, batch); });
  EXPECT_NE(msg.find("batch candidate 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("layer 5"), std::string::npos) << msg;
}

// ---------------------------------------------------------------------------------------------
// Schedules

std::vector<uint32_t> nodes_of(const Schedule& s, bool with_heads = true) {
  std::vector<uint32_t> out;
  for (const auto& st : s.steps) {
    if (st.op == StepOp::Head) {
      if (with_heads) out.push_back(1000 + st.node);  // 1000 + leaf marks a head
    } else {
      out.push_back(st.node);
    }
  }
  return out;
}

TEST(Schedule, OrdersOfHandBuiltTrie) {
  const Supernet net = tiny();
  // Trie of Fusion.HandBuiltTrie: 0 -> {1 -> 2 -> {3, 4}, 5 -> 6 -> 7}.
  FusedGraph g = fuse(net, std::vector<Candidate>{{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {0, 0, 0}});
  EXPECT_EQ(nodes_of(make_schedule(net, g, ScheduleKind::Unfused)),
            (std::vector<uint32_t>{0, 1, 2, 3, 1003, 0, 1, 2, 4, 1004,
                                   0, 5, 6, 7, 1007, 0, 1, 2, 3, 1003}));
  EXPECT_EQ(nodes_of(make_schedule(net, g, ScheduleKind::DepthFirst)),
            (std::vector<uint32_t>{0, 1, 2, 3, 1003, 4, 1004, 5, 6, 7, 1007}));
  EXPECT_EQ(nodes_of(make_schedule(net, g, ScheduleKind::DepthFirstGrouped)),
            (std::vector<uint32_t>{0, 1, 2, 3, 1003, 4, 1004, 5, 6, 7, 1007}));
  // Depth 3 holds 3 (choice 0), 4 (choice 1), 7 (choice 0): grouped by choice.
  EXPECT_EQ(nodes_of(make_schedule(net, g, ScheduleKind::BreadthFirst)),
            (std::vector<uint32_t>{0, 1, 5, 2, 6, 3, 7, 4, 1003, 1007, 1004}));

  // Tensors: a step reads what its parent's step produced.
  Schedule dfs = make_schedule(net, g, ScheduleKind::DepthFirst);
  EXPECT_EQ(dfs.steps[0].input, kImageTensor);
  EXPECT_EQ(dfs.tensors[kImageTensor].kind, TensorKind::Image);
  EXPECT_EQ(dfs.tensors[kImageTensor].bytes, 64u);
  std::map<uint32_t, uint32_t> out_of;
  for (const auto& st : dfs.steps) {
    if (st.op == StepOp::Head) {
      EXPECT_EQ(st.input, out_of.at(st.node));
      EXPECT_EQ(dfs.tensors[st.output].kind, TensorKind::Logits);
      EXPECT_EQ(st.op_id, 1u);
      continue;
    }
    if (st.node != 0) {
      EXPECT_EQ(st.input, out_of.at(g.nodes[st.node].parent));
    }
    out_of[st.node] = st.output;
    EXPECT_EQ(dfs.tensors[st.output].node, st.node);
    if (st.node != 0) {
      EXPECT_EQ(st.op_id, op_id_of(net, g.nodes[st.node].layer, g.nodes[st.node].choice));
    }
  }
}

TEST(Schedule, GroupedVisitsLastUsedChoiceFirst) {
  const Supernet net = tiny();
  // 0 -> 1 (0) -> 2 (0-0) -> {3 (0-0-0), 4 (0-0-1)}; 5 (1) -> 6 (1-0) -> {7 (1-0-0), 8 (1-0-1)}.
  FusedGraph g = fuse(net, std::vector<Candidate>{{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1}});
  EXPECT_EQ(nodes_of(make_schedule(net, g, ScheduleKind::DepthFirst), false),
            (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  // Layer 2 last ran choice 1 (node 4), so node 6 visits 8 (choice 1) before 7.
  Schedule grouped = make_schedule(net, g, ScheduleKind::DepthFirstGrouped);
  EXPECT_EQ(nodes_of(grouped, false), (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 8, 7}));
}

// The grouping rule is a heuristic: under the furthest-next-use weight buffer it can lose on a
// given batch and buffer, but over many it must save weight traffic (about 0.5% on fmnist-mb).
TEST(Schedule, GroupedSavesWeightTrafficOverall) {
  const Supernet net = fmnist();
  std::printf("GroupedSavesWeightTrafficOverall: seeds 1..20\n");
  uint64_t dfs = 0, grouped = 0;
  for (size_t n : {64u, 256u}) {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      FusedGraph g = fuse(net, random_candidates(net, n, seed));
      Schedule d = make_schedule(net, g, ScheduleKind::DepthFirst);
      Schedule gr = make_schedule(net, g, ScheduleKind::DepthFirstGrouped);
      for (uint64_t cap : {8000u, 16000u, 32000u, 64000u, 100000u}) {
        dfs += model_schedule(d, 1, BufferModel{uint64_t{1} << 30, cap}).weight_bytes;
        grouped += model_schedule(gr, 1, BufferModel{uint64_t{1} << 30, cap}).weight_bytes;
      }
    }
  }
  EXPECT_LT(grouped, dfs);
}

TEST(Schedule, DepthFirstArenaIsOneSlotPerDepth) {
  const Supernet net = fmnist();
  FusedGraph g = fuse(net, random_candidates(net, 32, 5));
  MemoryPlan p = plan_memory(make_schedule(net, g, ScheduleKind::DepthFirst));
  const std::vector<uint64_t> sizes = {28u * 28 * 16, 28u * 28 * 16, 28u * 28 * 16, 14u * 14 * 24,
                                       14u * 14 * 24, 7u * 7 * 40,   7u * 7 * 40};
  ASSERT_EQ(p.slots.size(), net.layers.size() + 1);
  uint64_t off = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    EXPECT_EQ(p.slots[d].bytes, sizes[d]) << "depth " << d;
    EXPECT_EQ(p.slots[d].offset, off) << "depth " << d;
    off += sizes[d];
  }
  EXPECT_EQ(p.arena_bytes, off);
  // Largest intra-op set: mb_k*_e6 at layer 2 expands 28x28x16 to 96 channels.
  EXPECT_EQ(p.scratch_bytes, 28u * 28 * 96 + 14 * 14 * 96);
}

TEST(Schedule, DepthFirstPeakLiveIsDepthPlusOne) {
  const Supernet net = tiny();
  // Every node on the first path has a child still to run when the first leaf runs, so root,
  // 0, 0-0 (input) and 0-0-0 (output) are live together: 4 = depth + 1 tensors.
  FusedGraph g = fuse(net, std::vector<Candidate>{{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {1, 0, 0}});
  Schedule s = make_schedule(net, g, ScheduleKind::DepthFirst);
  MemoryPlan p = plan_memory(s);
  EXPECT_EQ(p.peak_live_tensors, 4u);
  EXPECT_EQ(p.slots.size(), 4u);
  // 8x8x4, 8x8x4, 4x4x8, 4x4x8.
  EXPECT_EQ(p.peak_live_bytes, 256u + 256 + 128 + 128);
  EXPECT_EQ(p.arena_bytes, 256u + 256 + 128 + 128);

  // A lone candidate needs only its input and output at any time.
  MemoryPlan one = plan_memory(
      make_schedule(net, fuse(net, std::vector<Candidate>{{0, 0, 0}}), ScheduleKind::DepthFirst));
  EXPECT_EQ(one.peak_live_tensors, 2u);
  // Skip nodes alias: 2-x-x has no tensor at depth 1.
  MemoryPlan skip = plan_memory(
      make_schedule(net, fuse(net, std::vector<Candidate>{{2, 0, 2}}), ScheduleKind::DepthFirst));
  EXPECT_EQ(skip.slots[1].bytes, 0u);
  EXPECT_EQ(skip.slots[3].bytes, 0u);
  EXPECT_EQ(skip.arena_bytes, 256u + 128);
}

// Independent liveness check of any plan: tensors live at the same time never overlap.
void check_plan(const Schedule& s, const MemoryPlan& p) {
  const size_t nt = s.tensors.size();
  std::vector<long> born(nt, -1), dies(nt, -1);
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    if (st.op == StepOp::Skip) continue;
    dies[st.input] = static_cast<long>(i);
    if (s.tensors[st.output].kind == TensorKind::Act) born[st.output] = static_cast<long>(i);
  }
  std::vector<size_t> acts;
  for (size_t t = 0; t < nt; ++t) {
    if (s.tensors[t].kind != TensorKind::Act) {
      EXPECT_EQ(p.slot_of[t], kNoSlot);
      continue;
    }
    ASSERT_GE(born[t], 0);
    ASSERT_GT(dies[t], born[t]) << "tensor " << t << " is never read";
    ASSERT_LT(p.slot_of[t], p.slots.size());
    EXPECT_GE(p.slots[p.slot_of[t]].bytes, s.tensors[t].bytes);
    acts.push_back(t);
  }
  uint32_t max_live = 0;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    uint32_t live = 0;
    for (size_t t : acts)
      live += born[t] <= static_cast<long>(i) && static_cast<long>(i) <= dies[t];
    max_live = std::max(max_live, live);
  }
  EXPECT_EQ(p.peak_live_tensors, max_live);
  for (size_t a = 0; a < acts.size(); ++a) {
    for (size_t b = a + 1; b < acts.size(); ++b) {
      size_t x = acts[a], y = acts[b];
      bool together = born[x] <= dies[y] && born[y] <= dies[x];
      if (!together) continue;
      const ArenaSlot &sx = p.slots[p.slot_of[x]], &sy = p.slots[p.slot_of[y]];
      bool apart = sx.offset + s.tensors[x].bytes <= sy.offset ||
                   sy.offset + s.tensors[y].bytes <= sx.offset;
      ASSERT_TRUE(apart) << schedule_name(s.kind) << ": tensors " << x << " and " << y;
    }
  }
  uint64_t end = 0;
  for (const auto& slot : p.slots) end = std::max(end, slot.offset + slot.bytes);
  EXPECT_EQ(p.arena_bytes, end);
}

TEST(Schedule, PlansKeepLiveTensorsApart) {
  const Supernet net = fmnist();
  const uint64_t base_seed = 0x5C4ED000;
  std::printf("PlansKeepLiveTensorsApart: seeds %#llx + n\n",
              static_cast<unsigned long long>(base_seed));
  for (size_t n : {1u, 2u, 5u, 17u, 48u}) {
    const uint64_t seed = base_seed + n;
    SCOPED_TRACE(::testing::Message() << "seed " << seed << ", batch of " << n);
    FusedGraph g = fuse(net, shared_batch(net, n, seed));
    for (ScheduleKind k : kScheduleKinds) {
      SCOPED_TRACE(schedule_name(k));
      Schedule s = make_schedule(net, g, k);
      MemoryPlan p = plan_memory(s);
      check_plan(s, p);
      if (k != ScheduleKind::BreadthFirst) {
        EXPECT_EQ(p.slots.size(), net.layers.size() + 1);
        EXPECT_LE(p.peak_live_tensors, net.layers.size() + 1);
      }
    }
  }
}

TEST(Schedule, UnboundedBuffersReachTheLowerBound) {
  const Supernet net = fmnist();
  const BufferModel big{uint64_t{1} << 40, uint64_t{1} << 40};
  for (uint64_t seed : {11u, 12u, 13u}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const auto batch = shared_batch(net, 30, seed);
    FusedGraph g = fuse(net, batch);
    FusionStats st = fusion_stats(net, g);
    for (size_t images : {1u, 10u}) {
      for (size_t mb : {1u, 4u}) {
        SCOPED_TRACE(::testing::Message() << images << " images, mini-batch " << mb);
        ScheduleReport lb = dram_lower_bound(net, g, images);
        EXPECT_EQ(lb.weight_bytes, st.weight_bytes_fused);
        EXPECT_EQ(lb.act_read_bytes, image_bytes(net) * images);
        EXPECT_EQ(lb.act_write_bytes, 10u * st.unique_candidates * images);
        auto reports = compare_schedules(net, g, images, big, mb);
        ASSERT_EQ(reports.size(), 4u);
        for (size_t i = 1; i < 4; ++i) {
          SCOPED_TRACE(reports[i].name);
          EXPECT_EQ(reports[i].weight_bytes, lb.weight_bytes);
          EXPECT_EQ(reports[i].act_read_bytes, lb.act_read_bytes);
          EXPECT_EQ(reports[i].act_write_bytes, lb.act_write_bytes);
          EXPECT_EQ(reports[i].macs, st.macs_fused * images);
        }
        // Unfused: the same, except that duplicates write their logits again.
        EXPECT_EQ(reports[0].name, "unfused");
        EXPECT_EQ(reports[0].total_bytes,
                  lb.total_bytes + 10u * (st.candidates - st.unique_candidates) * images);
        EXPECT_EQ(reports[0].macs, st.macs_unfused * images);
      }
    }
  }
}

TEST(Schedule, DramModelBoundsOnRandomBatches) {
  const Supernet net = fmnist();
  const uint64_t base_seed = 0xD7A30000;
  std::printf("DramModelBoundsOnRandomBatches: seeds %#llx + n\n",
              static_cast<unsigned long long>(base_seed));
  const uint64_t max_act = 28u * 28 * 16;
  uint64_t max_w = 0;
  {
    Schedule s =
        make_schedule(net, fuse(net, random_candidates(net, 1, 1)), ScheduleKind::DepthFirst);
    for (const auto& op : s.ops) max_w = std::max(max_w, op.weight_bytes);
  }
  for (size_t n : {1u, 3u, 8u, 24u, 64u}) {
    const uint64_t seed = base_seed + n;
    SCOPED_TRACE(::testing::Message() << "seed " << seed << ", batch of " << n);
    FusedGraph g = fuse(net, shared_batch(net, n, seed));
    FusionStats st = fusion_stats(net, g);
    const size_t images = 6, mb = 2;
    ScheduleReport lb = dram_lower_bound(net, g, images);
    // Stem, every non-skip node, one head per unique leaf.
    uint64_t executed = 1 + st.unique_candidates;
    for (size_t i = 1; i < g.nodes.size(); ++i) {
      const Node& nd = g.nodes[i];
      executed += net.layers[nd.layer].choices[nd.choice].kind != spec::OpKind::Skip;
    }
    const uint64_t path_act = (net.layers.size() + 2) * max_act * mb;
    // A path's tensors fit on chip with: one weight set at a time; a few; every set of the
    // batch; and a tiny configuration where little fits.
    const std::vector<BufferModel> buffers = {
        {path_act, max_w}, {path_act, 4 * max_w}, {path_act, st.weight_bytes_fused}, {4096, 2048}};
    for (const BufferModel& buf : buffers) {
      SCOPED_TRACE(::testing::Message() << "act buffer " << buf.act_buffer_bytes
                                        << ", weight buffer " << buf.weight_buffer_bytes);
      auto r = compare_schedules(net, g, images, buf, mb);
      for (const auto& x : r) {
        SCOPED_TRACE(x.name);
        EXPECT_LE(lb.weight_bytes, x.weight_bytes);
        EXPECT_LE(lb.act_read_bytes, x.act_read_bytes);
        EXPECT_LE(lb.act_write_bytes, x.act_write_bytes);
        EXPECT_LE(lb.total_bytes, x.total_bytes);
        EXPECT_EQ(x.total_bytes, x.weight_bytes + x.act_read_bytes + x.act_write_bytes);
      }
      const uint64_t batches = (images + mb - 1) / mb;
      EXPECT_EQ(r[1].steps, executed * batches);
      EXPECT_EQ(r[3].steps, executed * batches);
      if (buf.act_buffer_bytes < path_act) continue;
      // The path stays on chip: depth-first moves no activation beyond images and logits.
      EXPECT_EQ(r[1].act_read_bytes, lb.act_read_bytes);
      EXPECT_EQ(r[1].act_write_bytes, lb.act_write_bytes);
      if (buf.weight_buffer_bytes >= st.weight_bytes_fused) {
        // Every set stays once loaded: depth-first reaches the bound, unfused cannot beat it.
        // (With room for only a few sets there is no such guarantee: the eviction rule is a
        // heuristic for unequal sizes and depth-first can then load a little more.)
        EXPECT_EQ(r[1].total_bytes, lb.total_bytes);
        EXPECT_EQ(r[2].total_bytes, lb.total_bytes);
        EXPECT_LE(r[1].total_bytes, r[0].total_bytes) << "depth-first vs unfused";
      }
    }
    // One mini-batch and room for the largest weight set: breadth-first reads every weight set
    // exactly once.
    ScheduleReport bfs = model_schedule(make_schedule(net, g, ScheduleKind::BreadthFirst), 4,
                                        BufferModel{1024, max_w}, 4);
    EXPECT_EQ(bfs.weight_bytes, st.weight_bytes_fused);
  }
}

TEST(Schedule, WeightTrafficAcrossMiniBatches) {
  const Supernet net = fmnist();
  FusedGraph g = fuse(net, shared_batch(net, 12, 99));
  Schedule s = make_schedule(net, g, ScheduleKind::DepthFirst);
  uint64_t per_batch = 0;
  for (const auto& st : s.steps) per_batch += s.ops[st.op_id].weight_bytes;
  // Nothing fits: every use streams its weights.
  EXPECT_EQ(model_schedule(s, 1000, BufferModel{0, 0}, 3).weight_bytes, 334 * per_batch);

  // The periodic shortcut agrees with simulating one long order made of the repeats.
  for (uint64_t wbuf : {uint64_t{3000}, uint64_t{9000}, uint64_t{20000}}) {
    SCOPED_TRACE(::testing::Message() << "weight buffer " << wbuf);
    for (size_t batches : {1u, 2u, 5u, 37u}) {
      Schedule rep = s;
      rep.steps.clear();
      for (size_t b = 0; b < batches; ++b)
        rep.steps.insert(rep.steps.end(), s.steps.begin(), s.steps.end());
      EXPECT_EQ(model_schedule(s, batches, BufferModel{0, wbuf}, 1).weight_bytes,
                model_schedule(rep, 1, BufferModel{0, wbuf}, 1).weight_bytes)
          << batches << " mini-batches";
    }
  }
}

TEST(Schedule, ReportJsonAndErrors) {
  const Supernet net = tiny();
  FusedGraph g = fuse(net, std::vector<Candidate>{{0, 0, 0}, {1, 1, 1}});
  auto reports = compare_schedules(net, g, 3, BufferModel{512, 512});
  nlohmann::json j = to_json(reports);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 4u);
  std::vector<std::string> names;
  for (const auto& r : j) names.push_back(r["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"unfused", "depth_first", "depth_first_grouped",
                                             "breadth_first"}));
  for (const char* key : {"steps", "macs", "weight_bytes", "act_read_bytes", "act_write_bytes",
                          "total_bytes", "peak_live_act_bytes", "arena_bytes"}) {
    EXPECT_TRUE(j[1].contains(key)) << key;
  }
  EXPECT_EQ(j[1]["total_bytes"], reports[1].total_bytes);
  nlohmann::json pj = to_json(plan_memory(make_schedule(net, g, ScheduleKind::DepthFirst)));
  EXPECT_EQ(pj["slots"].size(), 4u);

  std::string msg = error_of([&] { compare_schedules(net, g, 0, BufferModel{}); });
  EXPECT_NE(msg.find("0 images"), std::string::npos) << msg;
  msg = error_of([&] { compare_schedules(net, g, 2, BufferModel{}, 0); });
  EXPECT_NE(msg.find("mini-batches of 0"), std::string::npos) << msg;
  msg = error_of([&] { make_schedule(fmnist(), g, ScheduleKind::DepthFirst); });
  EXPECT_NE(msg.find("3 layers"), std::string::npos) << msg;
  msg = error_of([&] { make_schedule(net, FusedGraph{}, ScheduleKind::DepthFirst); });
  EXPECT_NE(msg.find("empty fused graph"), std::string::npos) << msg;
}

}  // namespace
}  // namespace nasa::fusion
