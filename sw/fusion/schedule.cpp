// Schedules of a fused graph: step orders, arena plans and the DRAM traffic model.
#include "nasa/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

namespace nasa::fusion {
namespace {

constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
constexpr uint32_t kStemOp = 0, kHeadOp = 1;

// Checks that `g` is a non-empty graph whose nodes are ops of `net`.
void check_graph(const spec::Supernet& net, const FusedGraph& g, std::string_view where) {
  if (g.nodes.empty() || g.leaf_of.empty() || g.unique_leaves.empty()) {
    throw FusionError(
        fmt::format("{}: empty fused graph (expected the result of fuse() on a batch)", where));
  }
  if (g.num_layers != static_cast<int>(net.layers.size())) {
    throw FusionError(fmt::format(
        "{}: fused graph has {} layers, supernet '{}' has {} (expected a graph fused for it)",
        where, g.num_layers, net.name, net.layers.size()));
  }
  for (size_t i = 1; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.layer < 0 || static_cast<size_t>(n.layer) >= net.layers.size() || n.choice < 0 ||
        static_cast<size_t>(n.choice) >= net.layers[n.layer].choices.size() ||
        n.parent >= g.nodes.size()) {
      throw FusionError(fmt::format(
          "{}: node {} (layer {}, choice {}, parent {}) is not an op of supernet '{}' (expected "
          "a graph fused for it)",
          where, i, n.layer, n.choice, n.parent, net.name));
    }
  }
}

// Belady-style cache of whole items: on overflow the item used furthest in the future goes.
class FurthestUseCache {
 public:
  explicit FurthestUseCache(uint64_t capacity) : cap_(capacity) {}

  bool resident(uint32_t id) const { return id < in_.size() && in_[id]; }

  // `next_use(id)`: position of the next use after now, kNever if none.
  template <class NextUse>
  void insert(uint32_t id, uint64_t bytes, NextUse next_use) {
    if (bytes > cap_) return;  // streamed, never resident
    items_.push_back({id, bytes});
    if (id >= in_.size()) in_.resize(id + 1, false);
    in_[id] = true;
    used_ += bytes;
    while (used_ > cap_) {
      size_t victim = 0;
      uint64_t furthest = 0;
      for (size_t i = 0; i < items_.size(); ++i) {
        uint64_t n = next_use(items_[i].id);
        if (i == 0 || n > furthest) {
          victim = i;
          furthest = n;
        }
      }
      used_ -= items_[victim].bytes;
      in_[items_[victim].id] = false;
      items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(victim));
    }
  }

  std::vector<uint32_t> state() const {
    std::vector<uint32_t> ids;
    for (const auto& it : items_) ids.push_back(it.id);
    std::sort(ids.begin(), ids.end());
    return ids;
  }

 private:
  struct Item {
    uint32_t id;
    uint64_t bytes;
  };
  uint64_t cap_;
  uint64_t used_ = 0;
  std::vector<Item> items_;
  std::vector<bool> in_;  // by id: resident
};

// Positions (step indices) at which each id is used, for next-use queries.
class UseList {
 public:
  explicit UseList(size_t ids) : uses_(ids) {}
  void add(uint32_t id, uint64_t pos) { uses_[id].push_back(pos); }
  // First use strictly after `pos`, or kNever.
  uint64_t after(uint32_t id, uint64_t pos) const {
    const auto& u = uses_[id];
    auto it = std::upper_bound(u.begin(), u.end(), pos);
    return it == u.end() ? kNever : *it;
  }
  uint64_t first(uint32_t id) const { return uses_[id].empty() ? kNever : uses_[id].front(); }

 private:
  std::vector<std::vector<uint64_t>> uses_;
};

class Builder {
 public:
  Builder(const spec::Supernet& net, const FusedGraph& g, ScheduleKind kind) : net_(net), g_(g) {
    s_.kind = kind;
    s_.num_layers = g.num_layers;
    s_.ops.push_back(stem_footprint(net));
    s_.ops.push_back(head_footprint(net));
    for (size_t i = 0; i < net.layers.size(); ++i) {
      for (size_t c = 0; c < net.layers[i].choices.size(); ++c) {
        s_.ops.push_back(op_footprint(net, i, c));
      }
    }
    s_.tensors.push_back({TensorKind::Image, kNoParent, -1,
                          static_cast<uint64_t>(net.in_h) * static_cast<uint64_t>(net.in_w) *
                              static_cast<uint64_t>(net.in_c)});
  }

  // Emits node n's op reading tensor `in`; returns the tensor holding its output.
  uint32_t node(uint32_t n, uint32_t in) {
    const Node& nd = g_.nodes[n];
    Step st;
    st.node = n;
    st.input = in;
    if (n == 0) {
      st.op = StepOp::Stem;
      st.op_id = kStemOp;
    } else {
      st.op_id = op_id_of(net_, nd.layer, nd.choice);
      st.op = s_.ops[st.op_id].alias ? StepOp::Skip : StepOp::Op;
    }
    st.output = st.op == StepOp::Skip
                    ? in
                    : tensor(TensorKind::Act, n, nd.depth, s_.ops[st.op_id].out_bytes);
    s_.steps.push_back(st);
    return st.output;
  }

  void head(uint32_t leaf, uint32_t in) {
    uint32_t out =
        tensor(TensorKind::Logits, leaf, g_.nodes[leaf].depth + 1, s_.ops[kHeadOp].out_bytes);
    s_.steps.push_back({StepOp::Head, leaf, kHeadOp, in, out});
  }

  bool is_leaf(uint32_t n) const { return g_.nodes[n].depth == g_.num_layers; }
  Schedule take() && { return std::move(s_); }

 private:
  uint32_t tensor(TensorKind kind, uint32_t node, int depth, uint64_t bytes) {
    s_.tensors.push_back({kind, node, depth, bytes});
    return static_cast<uint32_t>(s_.tensors.size() - 1);
  }

  const spec::Supernet& net_;
  const FusedGraph& g_;
  Schedule s_;
};

void build_unfused(const FusedGraph& g, Builder& b) {
  for (uint32_t leaf : g.leaf_of) {
    std::vector<uint32_t> path;
    for (uint32_t n = leaf; n != 0; n = g.nodes[n].parent) path.push_back(n);
    uint32_t t = b.node(0, kImageTensor);
    for (auto it = path.rbegin(); it != path.rend(); ++it) t = b.node(*it, t);
    b.head(leaf, t);
  }
}

void build_depth_first(const FusedGraph& g, bool grouped, Builder& b) {
  std::vector<int> last_choice(static_cast<size_t>(g.num_layers), -1);
  std::vector<std::pair<uint32_t, uint32_t>> stack = {{0, kImageTensor}};  // (node, input)
  std::vector<uint32_t> order;
  while (!stack.empty()) {
    auto [n, in] = stack.back();
    stack.pop_back();
    const Node& nd = g.nodes[n];
    if (nd.layer >= 0) last_choice[static_cast<size_t>(nd.layer)] = nd.choice;
    uint32_t out = b.node(n, in);
    if (b.is_leaf(n)) b.head(n, out);
    order = nd.children;
    if (grouped && !order.empty()) {
      int layer = g.nodes[order.front()].layer;
      int want = last_choice[static_cast<size_t>(layer)];
      auto it = std::find_if(order.begin(), order.end(),
                             [&](uint32_t c) { return g.nodes[c].choice == want; });
      if (it != order.end()) std::rotate(order.begin(), it, it + 1);
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) stack.emplace_back(*it, out);
  }
}

void build_breadth_first(const FusedGraph& g, Builder& b) {
  std::vector<uint32_t> out_of(g.nodes.size(), kImageTensor);
  std::vector<uint32_t> level = {0};
  out_of[0] = b.node(0, kImageTensor);
  for (int d = 1; d <= g.num_layers; ++d) {
    std::vector<uint32_t> next;
    for (uint32_t n : level) {
      for (uint32_t c : g.nodes[n].children) next.push_back(c);
    }
    // Stable grouping by choice, choices in order of first appearance.
    std::vector<int> choices;
    for (uint32_t n : next) {
      if (std::find(choices.begin(), choices.end(), g.nodes[n].choice) == choices.end()) {
        choices.push_back(g.nodes[n].choice);
      }
    }
    level.clear();
    for (int c : choices) {
      for (uint32_t n : next) {
        if (g.nodes[n].choice == c) level.push_back(n);
      }
    }
    for (uint32_t n : level) out_of[n] = b.node(n, out_of[g.nodes[n].parent]);
  }
  for (uint32_t leaf : level) b.head(leaf, out_of[leaf]);
}

bool is_depth_slotted(ScheduleKind k) { return k != ScheduleKind::BreadthFirst; }

// Traffic of one mini-batch of `m` images through the activation buffer.
std::pair<uint64_t, uint64_t> activation_traffic(const Schedule& s, uint64_t m, uint64_t capacity) {
  UseList reads(s.tensors.size());
  for (size_t i = 0; i < s.steps.size(); ++i) {
    if (s.steps[i].op != StepOp::Skip) reads.add(s.steps[i].input, i);
  }
  FurthestUseCache cache(capacity);
  std::vector<bool> spilled(s.tensors.size(), false);
  uint64_t rd = 0, wr = 0;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    if (st.op == StepOp::Skip) continue;
    auto next = [&](uint32_t id) { return reads.after(id, i); };
    const Tensor& in = s.tensors[st.input];
    if (!cache.resident(st.input)) {
      rd += in.bytes * m;
      if (in.kind == TensorKind::Act) spilled[st.input] = true;
      cache.insert(st.input, in.bytes * m, next);
    }
    for (uint64_t t : s.ops[st.op_id].intermediates) {
      if (t * m > capacity) {
        wr += t * m;
        rd += t * m;
      }
    }
    const Tensor& out = s.tensors[st.output];
    if (out.kind == TensorKind::Logits) {
      wr += out.bytes * m;
    } else {
      cache.insert(st.output, out.bytes * m, next);
    }
  }
  for (size_t t = 0; t < s.tensors.size(); ++t) {
    if (spilled[t]) wr += s.tensors[t].bytes * m;
  }
  return {rd, wr};
}

// Weight traffic of `batches` mini-batches: the order repeats, so once the resident set at the
// start of a mini-batch repeats, whole periods are counted without simulating them.
uint64_t weight_traffic(const Schedule& s, uint64_t batches, uint64_t capacity) {
  const uint64_t len = s.steps.size();
  UseList uses(s.ops.size());
  for (size_t i = 0; i < s.steps.size(); ++i) {
    if (s.steps[i].op != StepOp::Skip) uses.add(s.steps[i].op_id, i);
  }
  FurthestUseCache cache(capacity);
  std::map<std::vector<uint32_t>, std::pair<uint64_t, uint64_t>> seen;  // state -> (batch, bytes)
  bool skipped = false;
  uint64_t bytes = 0;
  for (uint64_t b = 0; b < batches; ++b) {
    const bool last = b + 1 == batches;
    if (!last && !skipped) {
      auto st = cache.state();
      if (auto it = seen.find(st); it != seen.end()) {
        uint64_t period = b - it->second.first, per = bytes - it->second.second;
        uint64_t k = (batches - 1 - b) / period;
        bytes += k * per;
        b += k * period;
        skipped = true;  // b <= batches - 1: the state at its start is `st` again
      } else {
        seen.emplace(std::move(st), std::make_pair(b, bytes));
      }
    }
    const bool final_batch = b + 1 == batches;
    for (size_t i = 0; i < s.steps.size(); ++i) {
      const Step& st = s.steps[i];
      if (st.op == StepOp::Skip) continue;
      auto next = [&](uint32_t id) -> uint64_t {
        uint64_t n = uses.after(id, i);
        if (n != kNever) return n;
        // Uses of the next mini-batch come after every use of this one.
        return final_batch ? kNever : len + uses.first(id);
      };
      if (!cache.resident(st.op_id)) {
        bytes += s.ops[st.op_id].weight_bytes;
        cache.insert(st.op_id, s.ops[st.op_id].weight_bytes, next);
      }
    }
  }
  return bytes;
}

}  // namespace

std::string_view schedule_name(ScheduleKind k) {
  static constexpr std::array<std::string_view, kScheduleKinds.size()> kNames = {
      "unfused", "depth_first", "depth_first_grouped", "breadth_first"};  // kScheduleKinds' order
  const auto i = static_cast<size_t>(k);
  return i < kNames.size() ? kNames[i] : "unknown";
}

uint32_t op_id_of(const spec::Supernet& net, int layer, int choice) {
  if (layer < 0 || static_cast<size_t>(layer) >= net.layers.size() || choice < 0 ||
      static_cast<size_t>(choice) >= net.layers[layer].choices.size()) {
    throw FusionError(fmt::format("op_id_of: (layer {}, choice {}) is not an op of supernet '{}'",
                                  layer, choice, net.name));
  }
  uint32_t id = kHeadOp + 1;
  for (int i = 0; i < layer; ++i) id += static_cast<uint32_t>(net.layers[i].choices.size());
  return id + static_cast<uint32_t>(choice);
}

Schedule make_schedule(const spec::Supernet& net, const FusedGraph& g, ScheduleKind kind) {
  check_graph(net, g, fmt::format("make_schedule({})", schedule_name(kind)));
  Builder b(net, g, kind);
  switch (kind) {
    case ScheduleKind::Unfused:
      build_unfused(g, b);
      break;
    case ScheduleKind::DepthFirst:
      build_depth_first(g, false, b);
      break;
    case ScheduleKind::DepthFirstGrouped:
      build_depth_first(g, true, b);
      break;
    case ScheduleKind::BreadthFirst:
      build_breadth_first(g, b);
      break;
  }
  return std::move(b).take();
}

MemoryPlan plan_memory(const Schedule& s) {
  const size_t nt = s.tensors.size();
  std::vector<size_t> last_read(nt, 0);
  for (size_t i = 0; i < s.steps.size(); ++i) {
    if (s.steps[i].op != StepOp::Skip) last_read[s.steps[i].input] = i;
  }
  MemoryPlan p;
  p.slot_of.assign(nt, kNoSlot);
  if (is_depth_slotted(s.kind)) p.slots.resize(static_cast<size_t>(s.num_layers) + 1);
  std::vector<bool> busy;  // breadth-first: slot in use
  std::vector<uint32_t> live;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    if (st.op == StepOp::Skip) continue;
    uint64_t scratch = 0;
    for (uint64_t t : s.ops[st.op_id].intermediates) scratch += t;
    p.scratch_bytes = std::max(p.scratch_bytes, scratch);
    const Tensor& out = s.tensors[st.output];
    if (out.kind == TensorKind::Act) {
      if (is_depth_slotted(s.kind)) {
        auto d = static_cast<uint32_t>(out.depth);
        p.slots[d].bytes = std::max(p.slots[d].bytes, out.bytes);
        p.slot_of[st.output] = d;
      } else {
        uint32_t slot = kNoSlot;
        for (size_t k = 0; k < p.slots.size() && slot == kNoSlot; ++k) {
          if (!busy[k] && p.slots[k].bytes >= out.bytes) slot = static_cast<uint32_t>(k);
        }
        if (slot == kNoSlot) {
          slot = static_cast<uint32_t>(p.slots.size());
          p.slots.push_back({0, out.bytes});
          busy.push_back(false);
        }
        busy[slot] = true;
        p.slot_of[st.output] = slot;
      }
      live.push_back(st.output);
    }
    uint64_t bytes = 0;
    for (uint32_t t : live) bytes += s.tensors[t].bytes;
    p.peak_live_bytes = std::max(p.peak_live_bytes, bytes);
    p.peak_live_tensors = std::max(p.peak_live_tensors, static_cast<uint32_t>(live.size()));
    // Tensors whose last reader was this step die now.
    std::erase_if(live, [&](uint32_t t) {
      if (last_read[t] > i) return false;
      if (!is_depth_slotted(s.kind)) busy[p.slot_of[t]] = false;
      return true;
    });
  }
  uint64_t off = 0;
  for (auto& slot : p.slots) {
    slot.offset = off;
    off += slot.bytes;
  }
  p.arena_bytes = off;
  return p;
}

nlohmann::json to_json(const MemoryPlan& p) {
  nlohmann::json slots = nlohmann::json::array();
  for (const auto& s : p.slots) slots.push_back({{"offset", s.offset}, {"bytes", s.bytes}});
  return nlohmann::json{{"slots", std::move(slots)},
                        {"arena_bytes", p.arena_bytes},
                        {"peak_live_bytes", p.peak_live_bytes},
                        {"peak_live_tensors", p.peak_live_tensors},
                        {"scratch_bytes", p.scratch_bytes}};
}

BufferModel buffer_model(const hw::Config& cfg) {
  return {cfg.in_buf_bytes, uint64_t{cfg.kred_max} * cfg.cols * 2};
}

std::vector<bool> nodes_to_run(const FusedGraph& g, const std::vector<bool>& cached) {
  if (cached.size() != g.nodes.size()) {
    throw FusionError(fmt::format("with_cached: {} cache flags for a graph of {} nodes",
                                  cached.size(), g.nodes.size()));
  }
  std::vector<bool> run(g.nodes.size(), false);
  // children have larger ids than their parent (allocation order): one pass from the back
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    const bool leaf = n.depth == g.num_layers;
    if (leaf && cached[i]) {
      throw FusionError(fmt::format(
          "with_cached: leaf node {} is marked cached (a candidate is evaluated once)", i));
    }
    bool needed = leaf;
    for (uint32_t c : n.children) needed = needed || run[c];
    run[i] = needed && !cached[i];
  }
  return run;
}

Schedule with_cached(const Schedule& s, const FusedGraph& g, const std::vector<bool>& cached) {
  const std::vector<bool> run = nodes_to_run(g, cached);
  Schedule out = s;
  out.steps.clear();
  for (const Step& st : s.steps) {
    if (st.op != StepOp::Head && !run.at(st.node)) continue;
    out.steps.push_back(st);
    Tensor& in = out.tensors.at(st.input);
    // produced by a node that does not run: it comes from the cache
    if (in.kind == TensorKind::Act && in.node != kNoParent && !run.at(in.node)) {
      in.kind = TensorKind::Image;
    }
  }
  return out;
}

ScheduleReport model_schedule(const Schedule& s, size_t images, const BufferModel& buffers,
                              size_t mini_batch) {
  if (images == 0 || mini_batch == 0) {
    throw FusionError(fmt::format(
        "model_schedule({}): {} images in mini-batches of {} (expected both at least 1)",
        schedule_name(s.kind), images, mini_batch));
  }
  const uint64_t m = std::min<uint64_t>(mini_batch, images);
  const uint64_t batches = (images + m - 1) / m;
  const uint64_t m_last = images - (batches - 1) * m;

  ScheduleReport r;
  r.name = std::string(schedule_name(s.kind));
  for (const Step& st : s.steps) {
    if (st.op == StepOp::Skip) continue;
    r.steps += batches;
    r.macs += s.ops[st.op_id].macs * images;
  }
  r.weight_bytes = weight_traffic(s, batches, buffers.weight_buffer_bytes);
  auto [rd, wr] = activation_traffic(s, m, buffers.act_buffer_bytes);
  r.act_read_bytes = rd * (batches - 1);
  r.act_write_bytes = wr * (batches - 1);
  auto [rd_last, wr_last] =
      m_last == m ? std::pair{rd, wr} : activation_traffic(s, m_last, buffers.act_buffer_bytes);
  r.act_read_bytes += rd_last;
  r.act_write_bytes += wr_last;
  r.total_bytes = r.weight_bytes + r.act_read_bytes + r.act_write_bytes;
  MemoryPlan plan = plan_memory(s);
  r.peak_live_act_bytes = plan.peak_live_bytes;
  r.arena_bytes = plan.arena_bytes;
  return r;
}

std::vector<ScheduleReport> compare_schedules(const spec::Supernet& net, const FusedGraph& g,
                                              size_t images, const BufferModel& buffers,
                                              size_t mini_batch) {
  std::vector<ScheduleReport> out;
  out.reserve(kScheduleKinds.size());
  for (ScheduleKind k : kScheduleKinds) {
    out.push_back(model_schedule(make_schedule(net, g, k), images, buffers, mini_batch));
  }
  return out;
}

ScheduleReport dram_lower_bound(const spec::Supernet& net, const FusedGraph& g, size_t images) {
  check_graph(net, g, "dram_lower_bound");
  FusionStats st = fusion_stats(net, g);
  ScheduleReport r;
  r.name = "lower_bound";
  r.macs = st.macs_fused * images;
  r.weight_bytes = st.weight_bytes_fused;
  r.act_read_bytes = static_cast<uint64_t>(net.in_h) * static_cast<uint64_t>(net.in_w) *
                     static_cast<uint64_t>(net.in_c) * images;
  r.act_write_bytes = static_cast<uint64_t>(net.classes) * g.unique_leaves.size() * images;
  r.total_bytes = r.weight_bytes + r.act_read_bytes + r.act_write_bytes;
  return r;
}

// The JSON form: a key per field (nlohmann's serializer of the struct).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ScheduleReport, name, steps, macs, weight_bytes, act_read_bytes,
                                   act_write_bytes, total_bytes, peak_live_act_bytes, arena_bytes)

nlohmann::json to_json(const ScheduleReport& r) { return r; }

nlohmann::json to_json(std::span<const ScheduleReport> reports) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& r : reports) a.push_back(to_json(r));
  return a;
}

}  // namespace nasa::fusion
