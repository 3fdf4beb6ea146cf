#include "nasa/batch_model.h"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <unordered_map>
#include <stdexcept>
#include <utility>

#include "nasa/cand_gen.h"
#include "nasa/desc.h"
#include "nasa/memory_image.h"
#include "nasa/refmodel.h"

namespace nasa::batch {
namespace {

constexpr uint32_t kNoNode = hw::kNoNode;
// When the scheduler starts: kFuseToSched cycles after the control units' accesses (their costs
// above, measured against the RTL), and no earlier than kClearStart cycles after the eval unit's
// NodeCap-cycle counter clear; the engine waits for descriptors from the run's first cycle; the
// run ends kSchedEnd cycles after the scheduler (nasa_top's batch sequencer, the engine's end of
// the run). tb/cosim_fused.cpp checks every counter against the RTL.
constexpr uint64_t kFuseToSched = 2, kClearStart = 2, kSchedEnd = 2;
// a memo key's record of an offer the engine took covered by a packed layer (after its gap;
// never a template's record, whose second word is an address modulo the port width)
constexpr uint64_t kCoveredMark = ~uint64_t{0};

// The engine's cover of a packed template's further images (RTL cov_tpl, cov_left): after it
// takes a packed layer's template, it takes the next images-1 offers of that template without a
// fetch (those images ran in the packed layer).
struct Cover {
  uint32_t tpl = 0, left = 0;
  bool covers(uint32_t offered_tpl) const { return left != 0 && offered_tpl == tpl; }
  void take() { --left; }
  void start(uint32_t taken_tpl, const Desc& d) {
    tpl = taken_tpl;
    left = images_of(d) - 1;
  }
};

struct Stop {
  hw::Err err;
  uint32_t index;
};

// The control units' byte accesses with the control master's one-word cache, and their cycles.
class CtrlPort {
 public:
  CtrlPort(std::span<uint8_t> mem, const hw::Config& cfg, const cycles::DramTiming& dram,
           uint32_t base, uint32_t limit, cycles::Counters& c)
      : mem_(mem),
        cfg_(cfg),
        dram_(dram),
        base_(base),
        limit_(limit),
        scratch_(cfg, dram.scratch_base),
        c_(c) {}

  uint8_t read(uint32_t addr) {
    check(addr);
    const uint32_t word = addr & ~(cfg_.mem_bytes - 1);
    if (cached_ && word == word_) {
      cyc(2);
    } else {
      cached_ = true;
      word_ = word;
      cyc(dram_.latency + 3);
      c_[static_cast<size_t>(hw::Counter::DramRdBytes)] += cfg_.mem_bytes;
    }
    return mem_[addr];
  }
  void write(uint32_t addr, uint8_t v) {
    check(addr);
    mem_[addr] = v;
    cyc(2);
    c_[static_cast<size_t>(hw::Counter::DramWrBytes)] += 1;
  }
  void invalidate() { cached_ = false; }
  void cyc(uint64_t n) { cycles_ += n; }
  // the cycles of the accesses since the last call
  uint64_t take_cycles() { return std::exchange(cycles_, 0); }

 private:
  // (inside the window, outside the engine's on-chip scratch: the control units see memory only)
  void check(uint32_t addr) const {
    if (addr < base_ || addr >= limit_ || addr >= mem_.size() || scratch_.overlaps(addr, 1)) {
      throw Stop{hw::Err::Window, 0};
    }
  }
  std::span<uint8_t> mem_;
  const hw::Config& cfg_;
  const cycles::DramTiming& dram_;
  uint32_t base_, limit_;
  ScratchWindow scratch_;
  cycles::Counters& c_;
  bool cached_ = false;
  uint32_t word_ = 0;
  uint64_t cycles_ = 0;
};

struct Node {
  uint32_t parent = kNoNode, layer = 0xFF, choice = 0xFF;
  std::vector<uint32_t> children;
};

// `d` with every address modulo the port width (what the engine's timing sees of them).
Desc mod_addresses(Desc d, uint32_t mb) {
  d.in_addr %= mb;
  d.in2_addr %= mb;
  d.out_addr %= mb;
  d.wgt_addr %= mb;
  d.prm_addr %= mb;
  return d;
}

// rtl/nasa_scheduler.sv, cycle by cycle (the same states, registers and transitions): walks the
// fused node table depth-first once per mini-batch and offers each node's templates to the
// engine, each template for every image of the mini-batch before the next (its weights stay on
// chip), streaming (the next one as soon as the engine took one); at a leaf it waits until every
// descriptor it issued completed, then has the eval unit score the mini-batch's images.
class Scheduler {
 public:
  enum St : uint8_t {
    SIdle, SBatch, SBatchAdv, SNodeRd, SNodeAt, SOpRd, SOpAt, SNode, SIssue, SRunEnd, SDrain,
    SEval, SEvalWait, SNext, SClimbRd, SClimbAt
  };
  Scheduler(const hw::Config& cfg, const Regs& r, std::span<const uint32_t> first,
            std::span<const uint32_t> next, std::span<const Node> nodes)
      : cfg_(&cfg), r_(&r), first_(first), next_(next), nodes_(nodes),
        out_src_(cfg.max_layers + 1, 0), path_(cfg.max_layers + 1, 0) {
    st_ = SBatch;  // (started: SIdle took start_i)
    src_img_ = cfg.max_layers + 1;
    img_ptr_ = r.img_addr;
  }
  bool issuing() const { return st_ == SIssue; }
  bool evaluating() const { return st_ == SEval; }
  bool waiting_eval() const { return st_ == SEvalWait; }
  // where a memoized stretch may start: leaving a leaf's evaluations, or at a mini-batch
  bool at_rest() const { return st_ == SNext || st_ == SBatch; }
  // for a dry run (the engine taking every descriptor at once and completing it at once)
  void forget_outstanding() { out_ = 0; }
  uint32_t tpl_addr() const { return r_->tpl_addr + ((cfirst_ + t_) << 6); }
  uint32_t x() const { return (head_ && ncount_ != 0) ? yi_ : xi_; }
  uint32_t y() const { return yi_; }
  uint32_t l() const { return l_; }
  uint32_t s() const { return si_; }
  // images left in the mini-batch from this one (RTL xd_n_o: at most 255)
  uint32_t left() const { return std::min<uint32_t>(nb_ - b_, 255); }
  uint32_t node() const { return node_; }
  uint32_t image() const { return g0_ + b_; }

  // One clock edge; returns true in the cycle the scheduler is done (done_o). xd_cov: the engine
  // took the offer without a fetch, covered by the packed layer before it (no completion).
  bool tick(bool xd_ready, bool xd_done, bool ev_done, bool xd_cov = false) {
    const uint32_t L = r_->num_layers;
    const bool leaf = depth_ == L;
    const uint32_t depth_m1 = depth_ - 1;
    const uint32_t q_out = out_;  // (RTL q.out: the states see the register)
    out_ = q_out + (issuing() && xd_ready && !xd_cov ? 1 : 0) - (xd_done ? 1 : 0);
    bool done = false;
    // image 0 of the node's mini-batch (a template's first image)
    auto first_image = [&] {
      b_ = 0;
      xi_ = xin_base_;
      yi_ = r_->arena_addr[depth_];
      l_ = lnode_;
      si_ = 0;
    };
    switch (st_) {
      case SBatch:
        if (g0_ >= r_->img_count) {
          if (q_out == 0) {
            st_ = SIdle;
            done = true;
          }
        } else {
          st_ = SBatchAdv;
          nb_ = std::min(r_->img_count - g0_, r_->mini_batch);
          b_ = 0;
          img_next_ = img_ptr_ + r_->img_stride;
          g0c_next_ = g0c_ + r_->classes;
          node_ = 0;
          depth_ = 0;
        }
        break;
      // the next mini-batch's first image and logits offset, one image a cycle
      case SBatchAdv:
        if (b_ + 1 < nb_) {
          ++b_;
          img_next_ += r_->img_stride;
          g0c_next_ += r_->classes;
        } else {
          st_ = SNodeRd;
        }
        break;
      case SNodeRd:
        st_ = SNodeAt;
        break;
      case SNodeAt: {
        st_ = depth_ == 0 ? SNode : SOpRd;
        const uint32_t par_src = depth_ == 0 ? src_img_ : out_src_[depth_m1];
        first_n_ = first_[node_];
        layer_ = nodes_[node_].layer;
        choice_ = nodes_[node_].choice;
        path_[depth_] = node_;
        xin_base_ = par_src == src_img_ ? img_ptr_ : r_->arena_addr[par_src];
        xin_stride_ = par_src == src_img_ ? r_->img_stride : r_->arena_stride[par_src];
        xin_src_ = par_src;
        lnode_ = r_->logits_addr + node_ * r_->logits_stride;
        if (depth_ == 0) {
          nfirst_ = hw::tpl_first(r_->stem_tpl);
          ncount_ = hw::tpl_count(r_->stem_tpl);
        }
        break;
      }
      case SOpRd:
        st_ = SOpAt;
        break;
      case SOpAt: {
        st_ = SNode;
        const uint32_t e = r_->optab[layer_ * cfg_->max_choices + choice_];
        nfirst_ = hw::tpl_first(e);
        ncount_ = hw::tpl_count(e);
        break;
      }
      // the node's output placement, its logits for image 0, its first template
      case SNode:
        st_ = ncount_ == 0 ? SRunEnd : SIssue;
        out_src_[depth_] = ncount_ == 0 ? xin_src_ : depth_;  // a skip node's output: its input
        lnode_ = r_->logits_stride == 0 ? r_->logits_addr : lnode_ + g0c_;
        first_image();
        cfirst_ = nfirst_;
        ccount_ = ncount_;
        t_ = 0;
        head_ = false;
        break;
      // template t for image b; then the next image, or the next template from image 0
      case SIssue:
        if (xd_ready && b_ + 1 < nb_) {
          ++b_;
          xi_ += xin_stride_;
          yi_ += r_->arena_stride[depth_];
          l_ += r_->classes;
          si_ += r_->scratch_stride;
        } else if (xd_ready && t_ + 1 < ccount_) {
          ++t_;
          first_image();
        } else if (xd_ready) {
          st_ = SRunEnd;
        }
        break;
      case SRunEnd:
        if (leaf && !head_ && hw::tpl_count(r_->head_tpl) != 0) {
          st_ = SIssue;
          head_ = true;
          cfirst_ = hw::tpl_first(r_->head_tpl);
          ccount_ = hw::tpl_count(r_->head_tpl);
          t_ = 0;
          first_image();
        } else {
          st_ = leaf ? SDrain : SNext;
        }
        break;
      case SDrain:
        if (q_out == 0) {
          st_ = SEval;
          b_ = 0;
          l_ = lnode_;
        }
        break;
      case SEval:
        st_ = SEvalWait;
        break;
      case SEvalWait:
        if (ev_done && b_ + 1 < nb_) {
          st_ = SEval;
          ++b_;
          l_ += r_->classes;
        } else if (ev_done) {
          st_ = SNext;
        }
        break;
      // a child, or climb
      case SNext:
        if (first_n_ != kNoNode && !leaf) {
          st_ = SNodeRd;
          node_ = first_n_;
          ++depth_;
        } else {
          st_ = SClimbRd;
        }
        break;
      case SClimbRd:
        st_ = SClimbAt;
        break;
      case SClimbAt:
        if (next_[node_] != kNoNode) {
          st_ = SNodeRd;
          node_ = next_[node_];
        } else if (depth_ <= 1) {
          st_ = SBatch;
          g0_ += nb_;
          g0c_ = g0c_next_;
          img_ptr_ = img_next_;
        } else {
          st_ = SClimbRd;
          depth_ = depth_m1;
          node_ = path_[depth_m1];
        }
        break;
      default:
        break;
    }
    return done;
  }

 private:
  const hw::Config* cfg_;  // (pointers: a dry run copies the scheduler back)
  const Regs* r_;
  std::span<const uint32_t> first_, next_;
  std::span<const Node> nodes_;
  std::vector<uint32_t> out_src_, path_;
  uint32_t src_img_ = 0;
  St st_ = SIdle;
  uint32_t out_ = 0;  // descriptors the engine took and has not completed
  uint32_t g0_ = 0, nb_ = 0, b_ = 0, img_ptr_ = 0, img_next_ = 0, g0c_ = 0, g0c_next_ = 0;
  uint32_t node_ = 0, first_n_ = 0, layer_ = 0, choice_ = 0, depth_ = 0;
  uint32_t nfirst_ = 0, cfirst_ = 0, ncount_ = 0, ccount_ = 0, t_ = 0;
  bool head_ = false;
  uint32_t xi_ = 0, yi_ = 0, l_ = 0, si_ = 0, lnode_ = 0, xin_base_ = 0, xin_stride_ = 0;
  uint32_t xin_src_ = 0;
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
              uint32_t win_limit, uint32_t scratch_base, Tables& t, bool use_memo) {
  // the window as the engine's CSRs hold it: clamped to the address space
  win_base = cfg.clamp_window(win_base);
  win_limit = cfg.clamp_window(win_limit);
  RunResult res;
  cycles::Counters& c = res.counters;
  cycles::DramTiming dram = cycles::default_dram(cfg);
  dram.scratch_base = cfg.scratch_window(scratch_base);
  const ScratchWindow scratch{cfg, scratch_base};
  CtrlPort port(mem, cfg, dram, win_base, win_limit, c);
  auto& cycles_total = c[static_cast<size_t>(hw::Counter::Cycles)];
  cycles_total += 2;  // start and end of the run
  std::vector<Node> nodes;
  uint32_t issued = 0;  // descriptors the engine took
  try {
    if (const hw::Err e = check_config(cfg, r); e != hw::Err::None) throw Stop{e, 0};
    const uint32_t L = r.num_layers;
    std::vector<int> ks(L);
    for (uint32_t i = 0; i < L; ++i) ks[i] = static_cast<int>(r.layer_k[i] & 0xFF);

    // ---- cand_gen ----
    if (r.gen_mode != static_cast<uint32_t>(hw::GenMode::Memory)) {
      // the parents' bytes as memory holds them (the unit reads only those it copies, below)
      std::vector<spec::Candidate> parents;
      if (hw::gen_mode_needs_parents(r.gen_mode)) {
        for (uint32_t p = 0; p < r.parent_count; ++p) {
          spec::Candidate v(L);
          for (uint32_t i = 0; i < L; ++i) {
            const uint64_t a = uint64_t{r.parent_addr} + uint64_t{p} * r.cand_stride + i;
            v[i] = a < mem.size() ? mem[a] : 0;
          }
          parents.push_back(std::move(v));
        }
      }
      std::vector<cand_gen::Source> src;
      const auto out = cand_gen::generate(static_cast<cand_gen::Mode>(r.gen_mode), r.gen_seed,
                                          r.gen_prob, ks, r.cand_count, parents, &src);
      for (uint32_t j = 0; j < r.cand_count; ++j) {
        for (uint32_t i = 0; i < L; ++i) {
          const cand_gen::Source& s = src[size_t{j} * L + i];
          if (s.parent >= 0) {
            port.read(r.parent_addr + static_cast<uint32_t>(s.parent) * r.cand_stride + i);
          } else if (s.second_draw) {
            port.cyc(1);
          }
          port.write(r.cand_addr + j * r.cand_stride + i, static_cast<uint8_t>(out[j][i]));
        }
      }
      port.cyc(1);  // (nasa_top hands over from cand_gen to the fusion unit)
    }

    // ---- fusion_unit ----
    nodes.push_back({});
    std::vector<uint32_t> leaf;
    for (uint32_t j = 0; j < r.cand_count; ++j) {
      uint32_t cur = 0;
      for (uint32_t i = 0; i < L; ++i) {
        const uint32_t ch = port.read(r.cand_addr + j * r.cand_stride + i);
        if (ch >= static_cast<uint32_t>(ks[i])) throw Stop{hw::Err::BadChoice, j};
        // (one cycle per child compared; a new node's own links are cleared while the next byte
        // is read)
        uint32_t found = kNoNode;
        for (uint32_t k : nodes[cur].children) {
          port.cyc(1);
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
          // (the fusion unit clears the new node's links in a cycle of its own, hidden behind
          // the next read; after the last candidate it is the unit's last cycle)
          if (j + 1 == r.cand_count && i + 1 == L) port.cyc(1);
        }
        cur = found;
      }
      leaf.push_back(cur);
    }
    t.leaf = leaf;

    // ---- scheduler + eval_unit, co-simulated with the engine cycle by cycle ----
    // The node table as the fusion unit links it: first child, next sibling (insertion order).
    std::vector<uint32_t> first(nodes.size(), kNoNode), next(nodes.size(), kNoNode);
    for (size_t n = 0; n < nodes.size(); ++n) {
      const auto& ch = nodes[n].children;
      for (size_t i = 0; i < ch.size(); ++i) {
        if (i == 0) first[n] = ch[i];
        else next[ch[i - 1]] = ch[i];
      }
    }
    std::vector<uint32_t> correct(nodes.size(), 0);
    res.profile.by_node.assign(nodes.size(), {});
    cycles::ExtEngine eng(cfg, dram);
    // the engine waited for descriptors since the run started (StallDesc counts those cycles)
    // (the scheduler starts after the fusion unit and after the eval unit cleared its counters,
    // NodeCap cycles from the start)
    const uint64_t pre = std::max<uint64_t>(cycles_total + port.take_cycles() + kFuseToSched,
                                            uint64_t{cfg.node_cap} + kClearStart);
    eng.idle(pre);
    // the descriptors the engine took and has not completed (oldest first): where each cycle and
    // MAC goes in the profile
    struct Taken {
      uint32_t node;
      uint8_t op;
      uint32_t index = 0;  // in the stretch being recorded
    };
    std::deque<Taken> taken;
    auto charge = [&](const Taken& k, uint64_t cyc, uint64_t macs, uint64_t layers) {
      for (Usage* u : {&res.profile.by_node[k.node], &res.profile.by_op[k.op & 7u]}) {
        u->cycles += cyc;
        u->macs += macs;
        u->layers += layers;
      }
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
    // The template the scheduler offers, patched (PATCH bits: X/Y/L, + S), and whether it is
    // valid.
    auto make_offer = [&](const Scheduler& sc, uint32_t tpl, Desc& d) {
      if (static_cast<uint64_t>(tpl) + hw::kDescBytes > win_limit || tpl < win_base ||
          scratch.overlaps(tpl, hw::kDescBytes)) {
        return hw::Err::Window;
      }
      d = patch_template(read_desc(mem, tpl), sc.x(), sc.y(), sc.l(), sc.s(), sc.left());
      return validate(d, cfg, win_base, win_limit, scratch_base);
    };
    // The memo of stretches: from rest (the engine quiet, the scheduler leaving a leaf's
    // evaluations or starting a mini-batch) to the next evaluation or the end, keyed by the engine's state and
    // the stretch's descriptors as the engine's timing sees them (addresses modulo the port
    // width, whether a descriptor reads what one of the two before it writes, whether it reads
    // the weights of the one before), with the scheduler's cycles between them. Exact: the
    // engine uses addresses only so (tb/unit_batch_memo.cpp replays without it).
    struct Planned {
      uint32_t tpl;
      Desc d;
      uint32_t node;
    };
    struct Stretch {
      uint64_t cycles = 0, control = 0;
      cycles::Counters add{};
      std::shared_ptr<const cycles::ExtEngine::Snapshot> end;
      std::vector<uint64_t> cycles_of;  // per descriptor: the cycles charged to it
    };
    struct KeyHash {
      size_t operator()(const std::vector<uint64_t>& k) const {
        uint64_t h = 0xcbf29ce484222325ULL;
        for (uint64_t w : k) h = (h ^ w) * 0x100000001b3ULL;
        return static_cast<size_t>(h ^ (h >> 29));
      }
    };
    std::unordered_map<std::vector<uint64_t>, Stretch, KeyHash> memo;
    uint64_t memo_hits = 0;
    bool recording = false;
    std::vector<uint64_t> rec_key, rec_cycles;
    std::vector<Planned> rec_plan;
    uint64_t rec_start = 0, rec_control = 0;
    uint32_t rec_taken = 0;
    cycles::Counters rec_counters{};
    uint64_t now = 0, control = 0;  // cycles of the scheduling phase; those with nothing taken
    auto finish_recording = [&] {
      recording = false;
      if (rec_taken != rec_plan.size()) return;  // (the run went elsewhere: not kept)
      Stretch m;
      m.cycles = now - rec_start;
      m.control = control - rec_control;
      const cycles::Counters& ec = eng.counters();
      for (size_t i = 0; i < ec.size(); ++i) m.add[i] = ec[i] - rec_counters[i];
      m.end = eng.snapshot();
      m.cycles_of = rec_cycles;
      memo.emplace(std::move(rec_key), std::move(m));
    };
    Scheduler sch(cfg, r, first, next, nodes);
    uint64_t eval_done_at = 0;
    bool eval_busy = false;
    Desc offer{};
    uint32_t offered_tpl = 0;
    bool have_offer = false;
    // (the engine's cover is known when the next offer is made: it takes one offer at a time)
    Cover cover;
    bool offer_covered = false;
    while (true) {
      // a stretch to the next evaluation, from rest: replayed when an equivalent one ran before
      if (use_memo && sch.at_rest() && !recording && !have_offer && taken.empty() && !eval_busy &&
          eng.quiet()) {
        Scheduler dry = sch;
        std::vector<Planned> plan;
        std::vector<uint64_t> key;
        eng.state_key(key);
        bool ok = true, dry_finished = false;
        uint64_t gap = 0;
        Cover dry_cover;  // (at rest the engine's cover has no offer left)
        for (;;) {
          if (dry.issuing() && dry_cover.covers(dry.tpl_addr())) {
            dry_cover.take();
            key.insert(key.end(), {gap, kCoveredMark});
            gap = 0;
            dry.forget_outstanding();
            dry_finished = dry.tick(true, false, false, true);
          } else if (dry.issuing()) {
            Planned pl{dry.tpl_addr(), {}, dry.node()};
            if (make_offer(dry, pl.tpl, pl.d) != hw::Err::None) {
              ok = false;  // (the real run reports it)
              break;
            }
            const size_t i = plan.size();
            const bool eq_prev = i == 0 ? eng.same_weights(pl.d)
                                        : (plan[i - 1].d.wgt_addr == pl.d.wgt_addr &&
                                           plan[i - 1].d.prm_addr == pl.d.prm_addr);
            key.insert(key.end(), {gap, pl.tpl % cfg.mem_bytes, eq_prev ? 1u : 0u,
                                   i >= 1 && cycles::reads_output_of(pl.d, plan[i - 1].d) ? 1u : 0u,
                                   i >= 2 && cycles::reads_output_of(pl.d, plan[i - 2].d) ? 1u : 0u});
            for (uint32_t w : encode(mod_addresses(pl.d, cfg.mem_bytes))) key.push_back(w);
            // (which of its tensors the on-chip scratch holds: the engine routes by it)
            key.push_back(uint64_t{scratch.overlaps(pl.d.in_addr, 1)} |
                          uint64_t{scratch.overlaps(pl.d.in2_addr, 1)} << 1 |
                          uint64_t{scratch.overlaps(pl.d.out_addr, 1)} << 2);
            dry_cover.start(pl.tpl, pl.d);
            plan.push_back(pl);
            gap = 0;
            dry.forget_outstanding();
            dry_finished = dry.tick(true, false, false);
          } else if (dry.evaluating()) {
            break;
          } else {
            dry.forget_outstanding();
            dry_finished = dry.tick(false, false, false);
            ++gap;
          }
          if (dry_finished) break;
        }
        key.push_back(gap);
        key.push_back(dry_finished ? 1 : 0);
        // (templates read after a layer of the stretch overwrote them: the dry run read them
        // too early, so no memo for such a stretch)
        for (size_t i = 0; ok && i < plan.size(); ++i) {
          const uint64_t lo = plan[i].d.out_addr, hi = lo + shape_of(plan[i].d).out_span;
          for (size_t j = i + 1; j < plan.size(); ++j) {
            if (plan[j].tpl < hi && lo < uint64_t{plan[j].tpl} + hw::kDescBytes) ok = false;
          }
        }
        if (ok) {
          auto it = memo.find(key);
          if (it != memo.end()) {
            const Stretch& m = it->second;
            for (size_t i = 0; i < plan.size(); ++i) {
              ref::execute(plan[i].d, mem);
              charge({plan[i].node, plan[i].d.op}, m.cycles_of[i], shape_of(plan[i].d).macs, 1);
            }
            if (!plan.empty()) {
              port.invalidate();
              eng.replay(*m.end, eng.cycle() + m.cycles, m.add, plan.back().d.wgt_addr,
                         plan.back().d.prm_addr);
            } else {
              eng.idle(m.cycles);
            }
            issued += static_cast<uint32_t>(plan.size());
            res.layers_done += static_cast<uint32_t>(plan.size());
            control += m.control;
            now += m.cycles;
            sch = dry;
            ++memo_hits;
            if (dry_finished) break;
            continue;
          }
          recording = true;
          rec_key = std::move(key);
          rec_plan = std::move(plan);
          rec_start = now;
          rec_control = control;
          rec_counters = eng.counters();
          rec_cycles.assign(rec_plan.size(), 0);
          rec_taken = 0;
        }
      }
      // the end of a recorded stretch
      if (recording && sch.evaluating()) finish_recording();
      // the scheduler's outputs this cycle
      if (sch.issuing() && !have_offer) {
        offered_tpl = sch.tpl_addr();
        // an invalid descriptor: the engine reports it once the layers before it completed (an
        // offer a packed layer covers is never fetched, nor checked)
        offer_covered = cover.covers(offered_tpl);
        if (const hw::Err e = make_offer(sch, offered_tpl, offer);
            e != hw::Err::None && !offer_covered) {
          throw Stop{e, issued};
        }
        have_offer = true;
      }
      if (sch.evaluating()) {
        // the eval unit reads the logits and the label through the control port; the scheduler
        // sees its done pulse that many cycles after SEval
        evaluate(sch.node(), sch.image(), sch.l());
        eval_done_at = now + port.take_cycles();
        eval_busy = true;
      }
      const bool ev_done = eval_busy && now == eval_done_at;
      // a quiet stretch: the scheduler waits for the eval unit, the engine for a descriptor
      if (sch.waiting_eval() && taken.empty() && eng.quiet() && now < eval_done_at) {
        const uint64_t n = eval_done_at - now;
        eng.idle(n);
        control += n;
        now += n;
        continue;
      }
      const auto st = eng.step(have_offer ? &offer : nullptr, offered_tpl);
      if (taken.empty()) {
        ++control;
      } else {
        charge(taken.front(), 1, 0, 0);
        if (recording) ++rec_cycles[taken.front().index];
      }
      if (st.ready && st.covered != offer_covered) {
        throw std::logic_error("batch model: the engine's cover of a packed template differs");
      }
      if (st.ready && st.covered) {
        port.invalidate();  // (RTL: xd_ready; the packed layer before runs this image)
        have_offer = false;
        cover.take();
      } else if (st.ready) {
        cover.start(offered_tpl, offer);
        ref::execute(offer, mem);  // (in issue order: the engine keeps their dependences)
        taken.push_back({sch.node(), offer.op, recording ? rec_taken++ : 0});
        ++issued;
        charge(taken.back(), 0, shape_of(offer).macs, 1);
        port.invalidate();  // (RTL: the control port forgets its word at xd_ready)
        have_offer = false;
      }
      if (st.done) {
        taken.pop_front();
        ++res.layers_done;
      }
      if (ev_done) {
        eval_busy = false;
      }
      const bool finished = sch.tick(st.ready, st.done, ev_done, st.covered);
      ++now;
      if (finished) {
        if (recording) finish_recording();
        break;
      }
    }
    cycles_total = pre + now + kSchedEnd;
    res.memo_hits = memo_hits;
    res.memo_stretches = memo.size();
    const cycles::Counters& ec = eng.counters();
    for (size_t i = 0; i < c.size(); ++i) {
      if (i != static_cast<size_t>(hw::Counter::Cycles)) c[i] += ec[i];
    }
    c[static_cast<size_t>(hw::Counter::StallDesc)] += kSchedEnd;
    t.correct = std::move(correct);
  } catch (const Stop& s) {
    res.err = s.err;
    res.err_index = s.index;
    res.layers_done = issued;  // (the engine reports an error once those completed)
    cycles_total += port.take_cycles();
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
    case hw::Csr::ScratchStride:
      return &r.scratch_stride;
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
