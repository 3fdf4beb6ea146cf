#include "nasa/batch_model.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "nasa/cand_gen.h"
#include "nasa/desc.h"
#include "nasa/memory_image.h"
#include "nasa/refmodel.h"

namespace nasa::batch {
namespace {

constexpr uint32_t kNoNode = hw::kNoNode;

struct Stop {
  hw::Err err;
  uint32_t index;
};

// The control units' byte accesses with the control master's one-word cache, and their cycles.
class CtrlPort {
 public:
  CtrlPort(std::span<uint8_t> mem, const hw::Config& cfg, const cycles::DramTiming& dram,
           uint32_t base, uint32_t limit, cycles::Counters& c)
      : mem_(mem), cfg_(cfg), dram_(dram), base_(base), limit_(limit), c_(c) {}

  uint8_t read(uint32_t addr) {
    check(addr);
    const uint32_t word = addr & ~(cfg_.mem_bytes - 1);
    if (cached_ && word == word_) {
      cyc(2);
    } else {
      cached_ = true;
      word_ = word;
      cyc(dram_.latency + 4);
      c_[static_cast<size_t>(hw::Counter::DramRdBytes)] += cfg_.mem_bytes;
    }
    return mem_[addr];
  }
  void write(uint32_t addr, uint8_t v) {
    check(addr);
    mem_[addr] = v;
    cyc(3);
    c_[static_cast<size_t>(hw::Counter::DramWrBytes)] += 1;
  }
  void invalidate() { cached_ = false; }
  void cyc(uint64_t n) { c_[static_cast<size_t>(hw::Counter::Cycles)] += n; }

 private:
  void check(uint32_t addr) const {
    if (addr < base_ || addr >= limit_ || addr >= mem_.size()) throw Stop{hw::Err::Window, 0};
  }
  std::span<uint8_t> mem_;
  const hw::Config& cfg_;
  const cycles::DramTiming& dram_;
  uint32_t base_, limit_;
  cycles::Counters& c_;
  bool cached_ = false;
  uint32_t word_ = 0;
};

struct Node {
  uint32_t parent = kNoNode, layer = 0xFF, choice = 0xFF;
  std::vector<uint32_t> children;
};

hw::Err check_config(const hw::Config& cfg, const Regs& r) {
  if (r.cand_count == 0 || r.img_count == 0) return hw::Err::EmptyBatch;
  bool bad = r.num_layers == 0 || r.num_layers > cfg.max_layers || r.mini_batch == 0 ||
             r.cand_count > cfg.max_cands || r.gen_mode > hw::kGenModeLast || r.classes == 0 ||
             r.classes > 0xFFFF || r.gen_prob > 0x10000 ||
             (hw::gen_mode_needs_parents(r.gen_mode) && r.parent_count == 0);
  for (uint32_t i = 0; i < cfg.max_layers && i < r.num_layers; ++i) {
    const uint32_t k = r.layer_k[i] & 0xFF;
    bad = bad || k == 0 || k > cfg.max_choices;
  }
  return bad ? hw::Err::BadBatchCfg : hw::Err::None;
}

}  // namespace

RunResult run(std::span<uint8_t> mem, const hw::Config& cfg, const Regs& r, uint32_t win_base,
              uint32_t win_limit, Tables& t) {
  // the window as the engine's CSRs hold it: clamped to the address space
  win_base = cfg.clamp_window(win_base);
  win_limit = cfg.clamp_window(win_limit);
  RunResult res;
  cycles::Counters& c = res.counters;
  const cycles::DramTiming dram = cycles::default_dram(cfg);
  cycles::LayerMemo memo(cfg, dram);  // exact: replays each distinct layer once
  CtrlPort port(mem, cfg, dram, win_base, win_limit, c);
  auto& cycles_total = c[static_cast<size_t>(hw::Counter::Cycles)];
  cycles_total += 2;  // start and end of the run
  std::vector<Node> nodes;
  try {
    if (const hw::Err e = check_config(cfg, r); e != hw::Err::None) throw Stop{e, 0};
    const uint32_t L = r.num_layers;
    std::vector<int> ks(L);
    for (uint32_t i = 0; i < L; ++i) ks[i] = static_cast<int>(r.layer_k[i] & 0xFF);

    // ---- cand_gen ----
    if (r.gen_mode != static_cast<uint32_t>(hw::GenMode::Memory)) {
      std::vector<spec::Candidate> parents;
      if (hw::gen_mode_needs_parents(r.gen_mode)) {
        for (uint32_t p = 0; p < r.parent_count; ++p) {
          spec::Candidate v(L);
          for (uint32_t i = 0; i < L; ++i) v[i] = port.read(r.parent_addr + p * r.cand_stride + i);
          parents.push_back(std::move(v));
        }
      }
      const auto out = cand_gen::generate(static_cast<cand_gen::Mode>(r.gen_mode), r.gen_seed,
                                          r.gen_prob, ks, r.cand_count, parents);
      for (uint32_t j = 0; j < r.cand_count; ++j) {
        for (uint32_t i = 0; i < L; ++i) {
          port.write(r.cand_addr + j * r.cand_stride + i, static_cast<uint8_t>(out[j][i]));
        }
      }
    }

    // ---- fusion_unit ----
    nodes.push_back({});
    std::vector<uint32_t> leaf;
    for (uint32_t j = 0; j < r.cand_count; ++j) {
      uint32_t cur = 0;
      for (uint32_t i = 0; i < L; ++i) {
        const uint32_t ch = port.read(r.cand_addr + j * r.cand_stride + i);
        if (ch >= static_cast<uint32_t>(ks[i])) throw Stop{hw::Err::BadChoice, j};
        uint32_t found = kNoNode;
        for (uint32_t k : nodes[cur].children) {
          port.cyc(2);
          if (nodes[k].choice == ch) {
            found = k;
            break;
          }
        }
        if (found == kNoNode) {
          if (nodes.size() == cfg.node_cap) throw Stop{hw::Err::NodeOverflow, j};
          found = static_cast<uint32_t>(nodes.size());
          nodes.push_back({cur, i, ch, {}});
          nodes[cur].children.push_back(found);
          port.cyc(3);
        }
        cur = found;
      }
      leaf.push_back(cur);
    }
    t.leaf = leaf;
    port.cyc(2);

    // ---- scheduler + eval_unit ----
    std::vector<uint32_t> correct(nodes.size(), 0);
    res.profile.by_node.assign(nodes.size(), {});
    std::vector<uint32_t> out_base(L + 1), out_stride(L + 1);
    auto& macs_total = c[static_cast<size_t>(hw::Counter::Macs)];
    auto issue = [&](uint32_t node, uint32_t tpl_index, uint32_t x, uint32_t y, uint32_t l) {
      const uint32_t ta = r.tpl_addr + tpl_index * hw::kDescBytes;
      if (static_cast<uint64_t>(ta) + hw::kDescBytes > win_limit || ta < win_base) {
        throw Stop{hw::Err::Window, res.layers_done};
      }
      Desc d = read_desc(mem, ta);
      if (d.patch & hw::Patch::InFromX) d.in_addr = x;
      if (d.patch & hw::Patch::In2FromX) d.in2_addr = x;
      if (d.patch & hw::Patch::OutFromL) {
        d.out_addr = l;
      } else if (d.patch & hw::Patch::OutFromY) {
        d.out_addr = y;
      }
      const hw::Err e = validate(d, cfg, win_base, win_limit);
      if (e != hw::Err::None) throw Stop{e, res.layers_done};
      ref::execute(d, mem);
      const uint64_t cyc0 = cycles_total, mac0 = macs_total;
      memo.add_layer(d, c, ta);
      for (Usage* u : {&res.profile.by_node[node], &res.profile.by_op[d.op & 7u]}) {
        u->cycles += cycles_total - cyc0;
        u->macs += macs_total - mac0;
        ++u->layers;
      }
      port.invalidate();
      port.cyc(3);
      ++res.layers_done;
    };
    auto evaluate = [&](uint32_t n, uint32_t g, uint32_t l) {
      int best = 0;
      int8_t best_v = 0;
      for (uint32_t k = 0; k < r.classes; ++k) {
        const auto v = static_cast<int8_t>(port.read(l + k));
        if (k == 0 || v > best_v) {
          best_v = v;
          best = static_cast<int>(k);
        }
      }
      const uint32_t label = port.read(r.label_addr + g);
      if (static_cast<uint32_t>(best) == label) ++correct[n];
      port.cyc(3);
    };
    const uint32_t stem_first = hw::tpl_first(r.stem_tpl), stem_count = hw::tpl_count(r.stem_tpl);
    const uint32_t head_first = hw::tpl_first(r.head_tpl), head_count = hw::tpl_count(r.head_tpl);
    uint32_t img_ptr = r.img_addr;
    for (uint32_t g0 = 0; g0 < r.img_count; g0 += r.mini_batch) {
      const uint32_t nb = std::min(r.mini_batch, r.img_count - g0);
      // depth-first pre-order, children in insertion order
      std::vector<std::pair<uint32_t, uint32_t>> stack{{0u, 0u}};  // (node, depth)
      while (!stack.empty()) {
        const auto [n, d] = stack.back();
        stack.pop_back();
        port.cyc(6);
        uint32_t first, count, xb, xs;
        if (d == 0) {
          first = stem_first;
          count = stem_count;
          xb = img_ptr;
          xs = r.img_stride;
        } else {
          const uint32_t e = r.optab[nodes[n].layer * cfg.max_choices + nodes[n].choice];
          first = hw::tpl_first(e);
          count = hw::tpl_count(e);
          xb = out_base[d - 1];
          xs = out_stride[d - 1];
        }
        out_base[d] = count == 0 ? xb : r.arena_addr[d];
        out_stride[d] = count == 0 ? xs : r.arena_stride[d];
        const bool is_leaf = d == L;
        const uint32_t lnode = r.logits_addr + n * r.logits_stride;
        for (uint32_t b = 0; b < nb; ++b) {
          const uint32_t g = g0 + b;
          const uint32_t x = xb + b * xs, y = r.arena_addr[d] + b * r.arena_stride[d];
          const uint32_t l = r.logits_stride == 0 ? r.logits_addr : lnode + g * r.classes;
          port.cyc(2);
          for (uint32_t k = 0; k < count; ++k) issue(n, first + k, x, y, l);
          if (is_leaf) {
            const uint32_t hx = count == 0 ? x : y;
            for (uint32_t k = 0; k < head_count; ++k) issue(n, head_first + k, hx, y, l);
            evaluate(n, g, l);
          }
        }
        if (d == 0) img_ptr += nb * r.img_stride;
        if (!is_leaf) {
          const auto& ch = nodes[n].children;
          for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.emplace_back(*it, d + 1);
        }
      }
    }
    t.correct = std::move(correct);
  } catch (const Stop& s) {
    res.err = s.err;
    res.err_index = s.index;
  }
  uint64_t layer_cycles = 0;
  for (const Usage& u : res.profile.by_op) layer_cycles += u.cycles;
  res.profile.control_cycles = cycles_total - layer_cycles;
  t.node_count = static_cast<uint32_t>(nodes.size());
  t.node.clear();
  for (const Node& n : nodes) t.node.push_back(hw::node_word(n.parent, n.layer, n.choice));
  if (res.err != hw::Err::None) t.leaf.clear();
  if (t.correct.size() < nodes.size()) t.correct.resize(nodes.size(), 0);
  return res;
}

namespace {

// Pointers into the registers (const or not, so reads and writes share one map).
template <class R>
auto* table_entry(const hw::Config& cfg, R& r, uint32_t sel, uint32_t idx) {
  using P = decltype(&r.num_layers);
  switch (static_cast<hw::Table>(sel)) {
    case hw::Table::OpTab:
      return idx < cfg.max_layers * cfg.max_choices ? &r.optab[idx] : P{};
    case hw::Table::LayerK:
      return idx < cfg.max_layers ? &r.layer_k[idx] : P{};
    case hw::Table::ArenaAddr:
      return idx <= cfg.max_layers ? &r.arena_addr[idx] : P{};
    case hw::Table::ArenaStride:
      return idx <= cfg.max_layers ? &r.arena_stride[idx] : P{};
    default:
      return P{};
  }
}

template <class R>
auto* csr_field(R& r, uint32_t addr) {
  using P = decltype(&r.num_layers);
  switch (static_cast<hw::Csr>(addr)) {
    case hw::Csr::NumLayers:
      return &r.num_layers;
    case hw::Csr::CandAddr:
      return &r.cand_addr;
    case hw::Csr::CandStride:
      return &r.cand_stride;
    case hw::Csr::CandCount:
      return &r.cand_count;
    case hw::Csr::TplAddr:
      return &r.tpl_addr;
    case hw::Csr::StemTpl:
      return &r.stem_tpl;
    case hw::Csr::HeadTpl:
      return &r.head_tpl;
    case hw::Csr::ImgAddr:
      return &r.img_addr;
    case hw::Csr::ImgStride:
      return &r.img_stride;
    case hw::Csr::ImgCount:
      return &r.img_count;
    case hw::Csr::LabelAddr:
      return &r.label_addr;
    case hw::Csr::MiniBatch:
      return &r.mini_batch;
    case hw::Csr::Classes:
      return &r.classes;
    case hw::Csr::LogitsAddr:
      return &r.logits_addr;
    case hw::Csr::LogitsStride:
      return &r.logits_stride;
    case hw::Csr::GenMode:
      return &r.gen_mode;
    case hw::Csr::GenSeed:
      return &r.gen_seed;
    case hw::Csr::GenProb:
      return &r.gen_prob;
    case hw::Csr::ParentAddr:
      return &r.parent_addr;
    case hw::Csr::ParentCount:
      return &r.parent_count;
    default:
      return P{};
  }
}

}  // namespace

bool write_csr(const hw::Config& cfg, Regs& r, uint32_t& tbl_addr, uint32_t addr, uint32_t value) {
  if (uint32_t* f = csr_field(r, addr)) {
    *f = value;
    return true;
  }
  if (addr == static_cast<uint32_t>(hw::Csr::TblAddr)) {
    tbl_addr = value;
    return true;
  }
  if (addr == static_cast<uint32_t>(hw::Csr::TblData)) {
    if (uint32_t* e = table_entry(cfg, r, hw::tbl_table(tbl_addr), hw::tbl_index(tbl_addr))) {
      *e = static_cast<hw::Table>(hw::tbl_table(tbl_addr)) == hw::Table::LayerK ? value & 0xFF : value;
    }
    tbl_addr = hw::tbl_next(tbl_addr);
    return true;
  }
  return false;
}

bool read_csr(const hw::Config& cfg, const Regs& r, const Tables& t, uint32_t& tbl_addr,
              uint32_t addr, uint32_t& value) {
  if (const uint32_t* f = csr_field(r, addr)) {
    value = *f;
    return true;
  }
  switch (static_cast<hw::Csr>(addr)) {
    case hw::Csr::TblAddr:
      value = tbl_addr;
      return true;
    case hw::Csr::NodeCount:
      value = t.node_count;
      return true;
    case hw::Csr::HwBatch:
      value = cfg.hw_batch();
      return true;
    case hw::Csr::TblData: {
      const uint32_t sel = hw::tbl_table(tbl_addr), idx = hw::tbl_index(tbl_addr);
      value = 0;
      switch (static_cast<hw::Table>(sel)) {
        case hw::Table::Node:
          if (idx < t.node_count && idx < t.node.size()) value = t.node[idx];
          break;
        case hw::Table::Leaf:
          if (idx < t.leaf.size()) value = t.leaf[idx];
          break;
        case hw::Table::Correct:
          if (idx < t.correct.size()) value = t.correct[idx];
          break;
        default:
          if (const uint32_t* e = table_entry(cfg, r, sel, idx)) value = *e;
          break;
      }
      tbl_addr = hw::tbl_next(tbl_addr);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace nasa::batch
