// Hash-consing of candidate batches into the fused graph, its statistics and batch sources.
#include "nasa/fusion.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <utility>

#include "nasa/hw_spec.h"

namespace nasa::fusion {
namespace {

uint64_t u(int v) { return static_cast<uint64_t>(v); }
int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Bytes of `convs` convolutions with `params` folded weights+biases and `channels` output
// channels in total: the biases are stored as parameter records, not as plain int8.
uint64_t stored_weight_bytes(uint64_t params, uint64_t channels) {
  return params - channels + channels * hw::kParamBytes;
}

uint64_t mix(uint64_t h, uint64_t v) {
  // splitmix64 finalizer over the running hash: cheap and good enough for small keys.
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 31;
  return h;
}

std::string_view trim(std::string_view s) {
  constexpr std::string_view kBlank = " \t\r\n\v\f";
  size_t b = s.find_first_not_of(kBlank);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(kBlank);
  return s.substr(b, e - b + 1);
}

}  // namespace

size_t NodeKeyHash::operator()(const NodeKey& k) const noexcept {
  uint64_t h = mix(static_cast<uint32_t>(k.layer), static_cast<uint32_t>(k.choice));
  for (uint32_t in : k.inputs) h = mix(h, in);
  return static_cast<size_t>(h);
}

Fuser::Fuser(const spec::Supernet& net) : net_(net) {
  graph_.num_layers = static_cast<int>(net.layers.size());
  graph_.nodes.push_back(Node{});  // root: the stem output
  leaf_seen_.push_back(false);
}

uint32_t Fuser::intern(int layer, int choice, std::span<const uint32_t> inputs) {
  NodeKey key{layer, choice, std::vector<uint32_t>(inputs.begin(), inputs.end())};
  if (auto it = index_.find(key); it != index_.end()) return it->second;
  auto id = static_cast<uint32_t>(graph_.nodes.size());
  Node n;
  // The first input is the tree parent the scheduler walks; further inputs (cells) are only
  // part of the identity.
  n.parent = inputs.front();
  n.layer = layer;
  n.choice = choice;
  for (uint32_t in : inputs) n.depth = std::max(n.depth, graph_.nodes[in].depth + 1);
  graph_.nodes.push_back(std::move(n));
  graph_.nodes[inputs.front()].children.push_back(id);
  leaf_seen_.push_back(false);
  index_.emplace(std::move(key), id);
  return id;
}

uint32_t Fuser::add(const spec::Candidate& c) {
  size_t index = graph_.leaf_of.size();
  try {
    spec::validate_candidate(net_, c);
  } catch (const spec::SpecError& e) {
    throw FusionError(fmt::format("batch candidate {}: {}", index, e.what()));
  }
  uint32_t cur = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    const uint32_t in[1] = {cur};
    cur = intern(static_cast<int>(i), c[i], in);
  }
  graph_.leaf_of.push_back(cur);
  if (!leaf_seen_[cur]) {
    leaf_seen_[cur] = true;
    graph_.unique_leaves.push_back(cur);
  }
  return cur;
}

FusedGraph fuse(const spec::Supernet& net, std::span<const spec::Candidate> batch) {
  if (batch.empty()) {
    throw FusionError(
        fmt::format("fuse: empty batch for supernet '{}' (expected at least one "
                    "candidate)",
                    net.name));
  }
  Fuser f(net);
  for (const auto& c : batch) f.add(c);
  return f.graph();
}

spec::Candidate path_of(const FusedGraph& g, uint32_t node) {
  if (node >= g.nodes.size()) {
    throw FusionError(fmt::format("path_of: node {} out of range [0, {})", node, g.nodes.size()));
  }
  spec::Candidate c;
  for (uint32_t n = node; n != 0; n = g.nodes[n].parent) c.push_back(g.nodes[n].choice);
  std::reverse(c.begin(), c.end());
  return c;
}

uint64_t OpFootprint::act_bytes() const {
  uint64_t b = out_bytes;
  for (uint64_t t : intermediates) b += t;
  return b;
}

OpFootprint op_footprint(const spec::Supernet& net, size_t layer, size_t choice) {
  spec::OpCost cost = spec::op_cost(net, layer, choice);  // also checks the indices
  const spec::OpSpec& op = net.layers[layer].choices[choice];
  spec::LayerShape s = spec::layer_shapes(net)[layer];
  uint64_t ho = u(ceil_div(s.h, s.stride)), wo = u(ceil_div(s.w, s.stride));
  OpFootprint f;
  f.macs = cost.macs;
  uint64_t channels = 0;
  switch (op.kind) {
    case spec::OpKind::Skip:
      f.alias = true;
      return f;
    case spec::OpKind::Conv:
      channels = u(s.cout);
      break;
    case spec::OpKind::MBConv: {
      uint64_t mid = u(s.cin) * u(op.expand);
      if (op.expand != 1) {
        channels += mid;
        f.intermediates.push_back(u(s.h) * u(s.w) * mid);
      }
      channels += mid + u(s.cout);
      f.intermediates.push_back(ho * wo * mid);
      break;
    }
  }
  f.weight_bytes = stored_weight_bytes(cost.params, channels);
  f.out_bytes = ho * wo * u(s.cout);
  return f;
}

OpFootprint stem_footprint(const spec::Supernet& net) {
  spec::LayerShape s = spec::stem_output(net);
  OpFootprint f;
  spec::OpCost cost = spec::stem_cost(net);
  f.macs = cost.macs;
  f.weight_bytes = stored_weight_bytes(cost.params, u(net.stem.out_channels));
  f.out_bytes = u(s.h) * u(s.w) * u(s.cout);
  return f;
}

OpFootprint head_footprint(const spec::Supernet& net) {
  spec::LayerShape last = spec::stem_output(net);
  if (!net.layers.empty()) {
    spec::LayerShape l = spec::layer_shapes(net).back();
    last = {ceil_div(l.h, l.stride), ceil_div(l.w, l.stride), l.cout, l.cout, 1};
  }
  OpFootprint f;
  spec::OpCost cost = spec::head_cost(net);
  f.macs = cost.macs;
  f.weight_bytes = stored_weight_bytes(cost.params, u(net.head.channels) + u(net.classes));
  f.intermediates = {u(last.h) * u(last.w) * u(net.head.channels), u(net.head.channels)};
  f.out_bytes = u(net.classes);
  return f;
}

FusionStats fusion_stats(const spec::Supernet& net, const FusedGraph& g) {
  if (g.nodes.empty() || g.leaf_of.empty()) {
    throw FusionError("fusion_stats: empty fused graph (expected the result of fuse())");
  }
  std::vector<std::vector<OpFootprint>> ops(net.layers.size());
  for (size_t i = 0; i < net.layers.size(); ++i) {
    for (size_t c = 0; c < net.layers[i].choices.size(); ++c) {
      ops[i].push_back(op_footprint(net, i, c));
    }
  }
  auto op = [&](const Node& n) -> const OpFootprint& {
    if (n.layer < 0 || static_cast<size_t>(n.layer) >= ops.size() || n.choice < 0 ||
        static_cast<size_t>(n.choice) >= ops[n.layer].size()) {
      throw FusionError(fmt::format(
          "fusion_stats: node (layer {}, choice {}) is not in supernet '{}' (expected a graph "
          "fused for this supernet)",
          n.layer, n.choice, net.name));
    }
    return ops[n.layer][n.choice];
  };
  const OpFootprint stem = stem_footprint(net), head = head_footprint(net);

  FusionStats s;
  s.candidates = g.leaf_of.size();
  s.unique_candidates = g.unique_leaves.size();
  s.nodes = g.nodes.size();

  for (uint32_t leaf : g.leaf_of) {
    s.macs_unfused += stem.macs + head.macs;
    s.weight_bytes_unfused += stem.weight_bytes + head.weight_bytes;
    s.act_bytes_unfused += stem.act_bytes() + head.act_bytes();
    for (uint32_t n = leaf; n != 0; n = g.nodes[n].parent) {
      const OpFootprint& f = op(g.nodes[n]);
      s.macs_unfused += f.macs;
      s.weight_bytes_unfused += f.weight_bytes;
      s.act_bytes_unfused += f.act_bytes();
    }
  }

  s.macs_fused = stem.macs + head.macs * s.unique_candidates;
  s.act_bytes_fused = stem.act_bytes() + head.act_bytes() * s.unique_candidates;
  s.weight_bytes_fused = stem.weight_bytes + head.weight_bytes;
  std::set<std::pair<int, int>> weight_sets;
  for (size_t i = 1; i < g.nodes.size(); ++i) {
    const OpFootprint& f = op(g.nodes[i]);
    s.macs_fused += f.macs;
    s.act_bytes_fused += f.act_bytes();
    if (weight_sets.emplace(g.nodes[i].layer, g.nodes[i].choice).second) {
      s.weight_bytes_fused += f.weight_bytes;
    }
  }
  return s;
}

// The JSON form (docs/cli.md "Output fields"): the scope of every figure in its key.
nlohmann::json to_json(const FusionStats& s) {
  return {{"candidate_count", s.candidates},
          {"unique_candidate_count", s.unique_candidates},
          {"nodes", s.nodes},
          {"macs_unfused_per_image", s.macs_unfused},
          {"macs_fused_per_image", s.macs_fused},
          {"weight_bytes_unfused", s.weight_bytes_unfused},
          {"weight_bytes_fused", s.weight_bytes_fused},
          {"act_bytes_unfused_per_image", s.act_bytes_unfused},
          {"act_bytes_fused_per_image", s.act_bytes_fused},
          {"mac_ratio", s.macs_fused == 0 ? 0.0
                                          : static_cast<double>(s.macs_unfused) /
                                                static_cast<double>(s.macs_fused)}};
}

std::vector<spec::Candidate> random_candidates(const spec::Supernet& net, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<spec::Candidate> out(n, spec::Candidate(net.layers.size()));
  for (auto& c : out) {
    for (size_t i = 0; i < c.size(); ++i) {
      // Modulo rather than std::uniform_int_distribution, whose output differs between standard
      // libraries; the bias is below K / 2^64.
      c[i] = static_cast<int>(rng() % net.layers[i].choices.size());
    }
  }
  return out;
}

std::vector<spec::Candidate> read_arch_file(const std::filesystem::path& path,
                                            const spec::Supernet& net) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw FusionError(
        fmt::format("cannot open architecture file '{}': {}", path.string(), std::strerror(errno)));
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_arch_text(text, path.string(), net);
}

std::vector<spec::Candidate> parse_arch_text(std::string_view text, std::string_view source,
                                             const spec::Supernet& net) {
  std::vector<spec::Candidate> out;
  size_t lineno = 0;
  for (size_t pos = 0; pos < text.size();) {
    const size_t eol = std::min(text.find('\n', pos), text.size());
    const std::string_view line = trim(text.substr(pos, eol - pos));
    pos = eol + 1;
    ++lineno;
    if (line.empty() || line.front() == '#') continue;
    try {
      out.push_back(spec::parse_candidate(line, net));
    } catch (const spec::SpecError& e) {
      throw FusionError(fmt::format("{}:{}: {}", source, lineno, e.what()));
    }
  }
  if (out.empty()) {
    throw FusionError(fmt::format(
        "{}: no candidates (expected one per line in text form, e.g. '{}'; '#' starts a comment)",
        source, spec::format_candidate(spec::Candidate(net.layers.size(), 0))));
  }
  return out;
}

}  // namespace nasa::fusion
