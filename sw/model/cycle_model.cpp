// Cycle model: replays rtl/nasa_engine.sv's control (sequencer, loaders, arbiter, DMA, issue
// stage, drain, output writer) and the sim/ DRAM model's timing without data. Every register
// below names the RTL register it mirrors; keep the two in step (the cosim checks the counters).
#include "nasa/cycle_model.h"

#include "nasa/dram_bus.h"

#include <algorithm>
#include <bit>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

namespace nasa::cycles {

// DDR-like memory behind the engine; the controller's (Mcu) is the board's SPRAM behind
// fpga/nasa_spram.sv: a request taken every cycle, a read's data the cycle after it (two in
// flight, as one read's data meet the next request: the MAC array reads a row a cycle).
DramTiming default_dram(const hw::Config& cfg) {
  return cfg.mcu ? DramTiming{1, cfg.mem_bytes, 2} : DramTiming{32, cfg.mem_bytes, 16};
}

namespace {
// K-split (RTL nasa_engine_pkg::ks_of): log2 of the column groups a tile of cg channels in a
// layer allowing ksc runs its reduction in
uint64_t ks_of(uint64_t cg, uint64_t ksc, uint64_t cols) {
  uint64_t ks = 0;
  while (ks < ksc && cg << (ks + 1) <= cols) ++ks;
  return ks;
}
// the most a layer allows (RTL dv_ksc): Conv/Fc only, f divides the reduction steps per tap
// (Cin, Fc: H*W*Cin), the port width and the weight column (BurstMax * MemBytes / 2 bytes)
uint64_t ksc_of(const Desc& d, const hw::Config& cfg) {
  const auto op = static_cast<hw::Op>(d.op);
  if (op != hw::Op::Conv && op != hw::Op::Fc) return 0;
  const uint64_t cin_n = op == hw::Op::Fc ? uint64_t{d.h} * d.w * d.cin : d.cin;
  const uint64_t wchunk = uint64_t{cfg.burst_max} * cfg.mem_bytes / 2;
  auto tz = [](uint64_t v) { return static_cast<uint64_t>(std::countr_zero(v)); };
  return std::min<uint64_t>({hw::kKsLogMax, tz(cin_n), tz(cfg.mem_bytes), tz(wchunk)});
}
}  // namespace

uint32_t ksplit_groups(const Desc& d, const hw::Config& cfg, uint32_t cg) {
  return uint32_t{1} << ks_of(cg, ksc_of(d, cfg), cfg.cols);
}

double ideal_cycles(const Desc& d, const hw::Config& cfg) {
  return static_cast<double>(shape_of(d).macs) / (double{1} * cfg.rows * cfg.cols);
}

namespace {

// the engine's depths, from the contract (the RTL reads the same values from nasa_pkg)
using hw::kDecodeSteps;
using hw::kJobDepth;
using hw::kWriterDepth;

enum Dst : uint8_t { kDesc, kIn, kWRow, kWScat, kPrm };
enum State : uint8_t { kIdle, kFetch, kFetchWait, kDecode, kRun };  // RTL state_q

struct Job {
  uint64_t src;
  uint64_t len;
  Dst dst;
  bool colend;  // last row of a weight column
  bool flag;    // RTL tag flag: weights: the tile's last job; input: the layer's parity
};
struct Inflight {
  uint32_t off;
  uint64_t nb, no;
  Dst dst;
  bool colend, flag;
};
// An output writer entry: one drained row, or two (the dual drain: a tile's rows dr_row and
// dr_row + 1, at addr and addr2) of n bytes each.
struct Row {
  uint64_t addr;
  uint32_t n;
  bool lend;  // a layer's last row
  bool two = false;
  uint64_t addr2 = 0;
};

// A port word of a writer entry: its aligned address and the bytes it carries.
struct WrWord {
  uint64_t addr = 0, bytes = 0;
};
// The words an entry writes, in order (a row: its low word, and its high word when it straddles
// one); returns how many (1-4).
uint32_t entry_words(const Row& r, uint64_t mb, std::array<WrWord, 4>& w) {
  uint32_t k = 0;
  for (int i = 0; i < (r.two ? 2 : 1); ++i) {
    const uint64_t a = i ? r.addr2 : r.addr, off = a % mb, lo = std::min<uint64_t>(r.n, mb - off);
    w[k++] = {a - off, lo};
    if (lo < r.n) w[k++] = {a - off + mb, r.n - lo};
  }
  return k;
}

// Per-layer constants (the RTL's r_* / nx_* registers and the loaders' copies).
struct Layer {
  bool pe = false, add = false, need_all = false;  // pe: PE array, weights and records
  bool wrow = false;  // Conv/Fc weights in rows, loaded column by column (DwConv: taps)
  uint64_t cin = 0, cout = 0, kk = 0, kred = 0;
  uint64_t tsz = 0;    // weight-ring bytes of one tile (RTL r_tsz)
  uint64_t steps = 0;  // reduction steps per tile (r_cin_n * r_kw * r_kh)
  uint64_t cin_n = 0, kw = 0;
  uint64_t ksc = 0;  // K-split: log2 of the largest f the layer allows (RTL dv_ksc)
  uint64_t p = 0, wo = 0, stride = 1, pad = 0, kh = 0, row_b = 0;
  uint64_t nct = 0, npt = 0, na = 0, offb = 0, in_total = 0;
  uint64_t in_end = 0;  // input-buffer bytes the loader writes (whole port words)
  // a folded residual (Res, RTL r_res): loaded first (nres bytes), the input after it at offr
  bool res = false;
  uint64_t nres = 0, offr = 0;
  uint64_t in_addr = 0, in2_addr = 0, out_addr = 0, wgt_addr = 0, prm_addr = 0;
  // pixel gather (1x1 stride-2 Conv/DwConv, RTL r_g): the loader reads only the pixels the layer
  // uses, one job per pixel of `cin` bytes, into `cpad`-byte slots (cin rounded up to the port);
  // the layer then runs as a stride-1 layer over that compact ho x wo x cpad input
  bool gather = false;
  uint64_t cpad = 0, gstep = 0, grow = 0;
  // packed images (RTL r_pack): image i's input at i*offb in the buffer (from in_addr +
  // i*istride), its output at out_addr + i*ostride; hw_out positions an image
  uint64_t imgs = 1, istride = 0, ostride = 0, hw_out = 1;
  // set when the layer starts loading: its input-arrival counter, first weight tile
  int par = 0;
  uint64_t rec0 = 0;
};

// The byte ranges a layer reads (input, second input, weights, records) and writes.
struct Ranges {
  std::array<std::pair<uint64_t, uint64_t>, 4> rd{};  // [lo, hi); empty when lo == hi
  uint64_t out_lo = 0, out_hi = 0;
};

// Whether a layer with ranges `n` reads what a layer with ranges `w` writes.
bool reads_from(const Ranges& n, const Ranges& w) {
  for (const auto& [lo, hi] : n.rd) {
    if (lo < hi && lo < w.out_hi && w.out_lo < hi) return true;
  }
  return false;
}

Ranges ranges_of(const Desc& d) {
  const Shape s = shape_of(d);
  Ranges r;
  r.rd[0] = {d.in_addr, uint64_t{d.in_addr} + s.in_span};
  if (d.op == static_cast<uint8_t>(hw::Op::Add)) {
    r.rd[1] = {d.in2_addr, uint64_t{d.in2_addr} + s.in_bytes};
  } else if (has_residual(d)) {
    r.rd[1] = {d.in2_addr, uint64_t{d.in2_addr} + s.out_bytes};
  }
  if (s.wgt_bytes) {
    r.rd[2] = {d.wgt_addr, uint64_t{d.wgt_addr} + s.wgt_bytes};
    r.rd[3] = {d.prm_addr, uint64_t{d.prm_addr} + s.prm_bytes};
  }
  r.out_lo = d.out_addr;
  r.out_hi = uint64_t{d.out_addr} + s.out_span;
  return r;
}

class Engine {
 public:
  Engine(const hw::Config& cfg, const DramTiming& dram)
      : cfg_p_(&cfg),
        mb_(cfg.mem_bytes),
        chunk_(uint64_t{cfg.burst_max} * cfg.mem_bytes),
        wchunk_(chunk_ / 2),
        wdepth_(2 * uint64_t{cfg.kred_max}),
        dram_(dram, cfg.mem_bytes),
        sc_win_(cfg, dram.scratch_base),
        dual_(cfg.dual_drain()),
        rec_size_(cfg.wtiles) {
    if (dram.bytes_per_cycle == 0 || dram.bytes_per_cycle > cfg.mem_bytes || dram.latency == 0) {
      throw std::invalid_argument(
          "cycle model: DRAM bandwidth must be in [1, port width] and "
          "latency at least 1");
    }
  }

  Counters run(std::span<const Desc> descs, uint32_t desc_addr, std::vector<uint64_t>* ends) {
    descs_ = descs;
    desc_addr_ = desc_addr;
    ends_ = ends;
    c_ = {};
    if (descs.empty()) return c_;
    state_ = kFetch;
    while (state_ != kIdle) step();
    return c_;
  }

  // Ext mode (batch runs): the front end waits in kFetch for the scheduler's descriptors.
  void start_ext() {
    ext_ = true;
    c_ = {};
    state_ = kFetch;
  }
  // One cycle in ext mode; `offer`: the descriptor the scheduler presents (xd_valid), fetched
  // from `tpl_addr`. Returns xd_ready (the fetch was issued) and xd_done (a layer completed).
  ExtEngine::Step step_ext(const Desc* offer, uint32_t tpl_addr) {
    offer_ = offer;
    offer_tpl_ = tpl_addr;
    out_ = {};
    step();
    offer_ = nullptr;
    return out_;
  }
  // Nothing in flight: every started layer complete, the DMA and the front end idle in kFetch.
  bool quiet() const {
    return state_ == kFetch && pend_ == 0 && !b_v_ && !a_v_ && job_q_.empty() && rq_left_ == 0 &&
           inf_.empty() && !flush_ && wq_.empty() && !shadow_full_ && !s1_valid_ && il_done_ &&
           (!TL_.pe || tl_j_ == TL_.nct) && !sc_jv_ && !sc_ov_;
  }
  // `n` cycles of a quiet engine waiting for a descriptor (what step_ext would count).
  void idle_ext(uint64_t n) {
    count(hw::Counter::Cycles, n);
    count(hw::Counter::StallDesc, n);
    cyc_ += n;
    dram_.settle(cyc_);
  }
  const Counters& counters() const { return c_; }
  uint64_t cycle() const { return cyc_; }

  // At rest (quiet()): the state that decides the timing of what comes next, relative to now
  // and to the ring's oldest tile (absolute addresses only through same_weights()).
  void state_key(std::vector<uint64_t>& k) const {
    dram_.key(cyc_, k);
    const uint64_t live = rec_wr_ - rec_rd_;
    k.insert(k.end(), {rg_used_, live, rec_fill_ - rec_rd_, c_rec_ - rec_rd_, rsp_cols_, pw_v_,
                       pw_wrow_, pw_cout_, pw_kred_, pw_ksc_,
                       pw_rec0_ >= rec_rd_ ? pw_rec0_ - rec_rd_ + 1 : 0,
                       // (not the layer parity itself: the engine works alike on either, and
                       // a stretch's descriptor count, odd with packed groups, flips it)
                       static_cast<uint64_t>((ld_par_ ^ fe_li_) & 1), rr_, last_was_wr_, hold_, hold_wr_,
                       wk_, sh_res_, flush_, c_done_, dr_row_, rq_ph_, beat_, oidx_, init_lanes_,
                       static_cast<uint64_t>(state_), res_v_, cov_left_});
    for (uint64_t i = 0; i < live; ++i) k.push_back(rec_size_[(rec_rd_ + i) % cfg().wtiles]);
  }
  // Whether `d` reads the weights and records of the last layer started (the reuse check's
  // addresses; the rest of it is in state_key()).
  bool same_weights(const Desc& d) const { return pw_wgt_ == d.wgt_addr && pw_prm_ == d.prm_addr; }
  // This engine as `end` left a replayed stretch: `end`'s state at the cycle `at`, the counters
  // these plus `add`, the last layer started reading weights `wgt` and records `prm`.
  void replay(const Engine& end, uint64_t at, const Counters& add, uint64_t wgt, uint64_t prm) {
    Counters c = c_;
    for (size_t i = 0; i < c.size(); ++i) c[i] += add[i];
    *this = end;
    dram_.shift(at - cyc_);
    cyc_ = at;
    c_ = c;
    pw_wgt_ = wgt;
    pw_prm_ = prm;
  }

 private:
  static Layer layer_of(const Desc& d, const hw::Config& cfg) {
    const uint32_t mb = cfg.mem_bytes, rows = cfg.rows, cols = cfg.cols;
    const Shape s = shape_of(d);
    const auto op = static_cast<hw::Op>(d.op);
    const bool win = op == hw::Op::Conv || op == hw::Op::DwConv || op == hw::Op::MaxPool ||
                     op == hw::Op::AvgPool;
    const bool fc = op == hw::Op::Fc, gap = op == hw::Op::Gap, add = op == hw::Op::Add;
    Layer l;
    l.wrow = op == hw::Op::Conv || fc;
    l.pe = l.wrow || op == hw::Op::DwConv;  // DwConv: Rows positions x Cols channels too
    l.add = add;
    l.need_all = fc || gap;
    l.cin = d.cin;
    l.cout = d.cout;
    const uint64_t k = (op == hw::Op::MaxPool || op == hw::Op::AvgPool) ? 3 : d.k;
    l.kk = uint64_t{d.k} * d.k;
    l.kred = fc ? uint64_t{d.h} * d.w * d.cin : l.kk * d.cin;
    l.tsz = ((op == hw::Op::DwConv ? l.kk : l.kred) + mb - 1) / mb * mb;
    const uint64_t cin_n = op == hw::Op::Conv ? d.cin : (fc ? l.kred : 1);
    const uint64_t kh = win ? k : (gap ? d.h : (add ? 2 : 1));
    const uint64_t kw = win ? k : (gap ? d.w : 1);
    l.steps = cin_n * kh * kw;
    l.cin_n = cin_n;
    l.ksc = ksc_of(d, cfg);
    l.kw = kw;
    l.kh = kh;
    l.stride = win ? d.stride : 1;
    l.pad = top_pad(d);  // the rows a tile reads follow the top padding (a band's PadTop)
    l.wo = (fc || gap) ? 1 : s.wo;
    l.row_b = uint64_t{d.w} * d.cin;
    const uint64_t hw_out = uint64_t{s.ho} * s.wo;
    l.imgs = s.images;
    l.istride = d.in_stride;
    l.ostride = d.out_stride;
    l.hw_out = (fc || gap) ? 1 : hw_out;
    l.p = l.imgs * l.hw_out;
    l.nct = (d.cout + cols - 1) / cols;
    l.npt = l.pe ? (l.p + rows - 1) / rows : l.p;
    l.na = s.in_bytes;
    l.offb = (l.na + mb - 1) / mb * mb;
    l.in_total = add ? l.offb + l.na : (l.imgs - 1) * l.offb + l.na;
    l.in_end = add ? 2 * l.offb : l.imgs * l.offb;
    if (has_residual(d)) {  // (stride 1: never a gather)
      l.res = true;
      l.nres = s.out_bytes;
      l.offr = residual_offset(d, mb);
      l.in_total += l.offr;
      l.in_end += l.offr;
    }
    if (gathers_input(d, mb)) {
      l.gather = true;
      l.cpad = gather_slot_bytes(d, mb);
      l.stride = 1;
      l.row_b = uint64_t{s.wo} * l.cpad;
      l.na = l.in_total = l.in_end = hw_out * l.cpad;
      l.gstep = 2 * uint64_t{d.cin};
      l.grow = 2 * uint64_t{d.w} * d.cin;
    }
    l.in_addr = d.in_addr;
    l.in2_addr = d.in2_addr;
    l.out_addr = d.out_addr;
    l.wgt_addr = d.wgt_addr;
    l.prm_addr = d.prm_addr;
    return l;
  }

  void count(hw::Counter id, uint64_t v) { c_[static_cast<int>(id)] += v; }

  uint64_t nb_of(uint64_t src, uint64_t len) const { return (src % mb_ + len + mb_ - 1) / mb_; }

  // input bytes step `step` of tile `tile` of the computing layer needs (RTL `need`): the rows
  // up to the kernel row ky the step reads, for the last position of the tile
  uint64_t need(uint64_t tile, uint64_t step) const {
    if (L_.need_all) return L_.in_total;
    if (L_.add) return L_.offb + tile * L_.cin + L_.cin;
    const uint64_t plast = L_.pe ? tile * cfg().rows + cfg().rows - 1 : tile;
    // (packed images: the lanes move on to the next image after an image's last position)
    const uint64_t img = L_.imgs > 1 ? plast / L_.hw_out : 0;
    const uint64_t q = L_.imgs > 1 ? plast % L_.hw_out : plast;
    const int64_t iy0 =
        static_cast<int64_t>((q / L_.wo) * L_.stride) - static_cast<int64_t>(L_.pad);
    const auto ky = static_cast<int64_t>(step / (L_.cin_n * L_.kw));
    const int64_t n = static_cast<int64_t>(img * L_.offb) +
                      (iy0 + ky + 1) * static_cast<int64_t>(L_.row_b);
    // (after a folded residual, which comes first, whole)
    return L_.offr + std::min<uint64_t>(static_cast<uint64_t>(std::max<int64_t>(n, 0)),
                                        L_.in_total - L_.offr);
  }

  // RTL hz_q: the decoding layer reads what layer fe_li_ - 1 (back = 1) or - 2 writes
  bool hazard(const Desc& d, int back) const {
    return reads_from(ranges_of(d), ranges_[(fe_li_ + 2 - back) % 2]);
  }

  void step();
  // (a model that stops progressing throws: no progress event for kStuckCycles busy cycles)
  void watchdog();
  static constexpr uint64_t kStuckCycles = uint64_t{1} << 20;
  uint64_t wd_sig_ = 0, wd_cyc_ = 0;

  const hw::Config* cfg_p_;  // (a pointer: replay() assigns whole engines)
  const hw::Config& cfg() const { return *cfg_p_; }
  uint64_t mb_, chunk_, wchunk_;  // input chunk, weight column (RTL Chunk, WChunk)
  uint64_t wdepth_;               // weight-ring bytes per lane (RTL WDepth)
  DramBus dram_;
  std::span<const Desc> descs_;
  uint32_t desc_addr_ = 0;
  // ext mode: the scheduler's offer this cycle, the descriptor being fetched/decoded, outputs
  bool ext_ = false;
  const Desc* offer_ = nullptr;
  uint32_t offer_tpl_ = 0;
  Desc cur_{};
  ExtEngine::Step out_{};
  std::vector<uint64_t>* ends_ = nullptr;  // the cycle each layer completes in, when asked
  Counters c_{};
  uint64_t cyc_ = 0;

  // sequencer: the front end on descriptor fe_li_, slot A (the computing layer, L_) and slot B
  // (the next one, loading, NX_)
  State state_ = kIdle;
  uint32_t fe_li_ = 0, dec_step_ = 0;
  bool a_v_ = false, b_v_ = false;
  Layer L_, NX_;
  // a folded residual's layer that left A while its last tile drains: its buffer region stays
  // reserved until its last row leaves the drain (RTL res_v, res_end)
  bool res_v_ = false;
  uint64_t res_end_ = 0;
  uint64_t pend_ = 0;  // layers started and not complete
  int ld_par_ = 0;
  std::array<Ranges, 2> ranges_{};  // by layer index parity (RTL ot_lo_q / ot_hi_q)
  std::array<uint64_t, 2> in_loaded_{};
  bool init_lanes_ = false;
  // DMA
  std::deque<Job> job_q_;
  uint64_t rq_left_ = 0;
  std::deque<Inflight> inf_;
  uint64_t beat_ = 0, oidx_ = 0;
  bool flush_ = false, last_was_wr_ = false, hold_ = false, hold_wr_ = false;
  // on-chip scratch (RTL nasa_scratch; docs/engine.md "On-chip scratch"): its window, the job
  // (beats sc_nb_, next sc_idx_, layer parity sc_flag_), the beat in its output register; input
  // jobs in the DMA (RTL dma_in_q)
  ScratchWindow sc_win_;
  bool sc_jv_ = false, sc_ov_ = false, sc_flag_ = false, sc_o_flag_ = false;
  uint64_t sc_idx_ = 0, sc_nb_ = 0, dma_in_ = 0;
  // output writer
  std::deque<Row> wq_;
  uint32_t wk_ = 0;  // the head entry's next word
  // dual drain (docs/engine.md "Dual drain"): two rows a cycle into the scratch
  bool dual_ = false, sh_res_ = false;
  // input loader (IL_: the loading layer's constants)
  Layer IL_;
  bool il_region_ = false, il_done_ = true;
  uint64_t il_off_ = 0;
  uint64_t il_src_ = 0, il_rsrc_ = 0, il_dst_ = 0, il_x_ = 0;  // current segment (RTL il_*_q)
  uint64_t il_img_ = 0;                                         // its packed image
  // tile loader (TL_: the loading layer's constants)
  Layer TL_;
  uint32_t tl_phase_ = 0;
  uint64_t tl_j_ = 0, tl_co0_ = 0, tl_row_ = 0, tl_off_ = 0, tl_row_src_ = 0, tl_rsrc_ = 0,
           tl_tap_src_ = 0, tl_tapbase_ = 0, tl_cg_ = 0;
  // weight ring: tiles [rec_rd_, rec_wr_) live, [rec_rd_, rec_fill_) complete (counts, not
  // wrapped: the RTL's pointers only differ by at most WTiles); the compute reads tile c_rec_
  uint64_t rg_used_ = 0, rec_rd_ = 0, rec_wr_ = 0, rec_fill_ = 0, rsp_cols_ = 0, c_rec_ = 0;
  std::vector<uint64_t> rec_size_;  // by slot (rec % WTiles)
  // the previous layer's weights, for reuse (RTL pw_*_q)
  bool pw_v_ = false, pw_wrow_ = false;
  uint64_t pw_wgt_ = 0, pw_prm_ = 0, pw_cout_ = 0, pw_kred_ = 0, pw_ksc_ = 0, pw_rec0_ = 0;
  bool rr_ = false;
  // issue stage
  uint64_t c_j_ = 0, c_co0_ = 0, c_cg_ = 0, c_pt_ = 0, c_step_ = 0;
  bool c_done_ = true;
  // stage 1 and drain (the shadow keeps what the drain needs of the tile's layer)
  bool s1_valid_ = false, s1_last_ = false, s1_pe_ = false;
  uint64_t s1_macs_ = 0;
  bool shadow_full_ = false, sh_lend_ = false, sh_pe_ = false;
  uint64_t dr_row_ = 0, sh_rows_ = 0, sh_n_ = 0, sh_tile_ = 0, sh_co0_ = 0, rq_ph_ = 0;
  uint64_t sh_out_ = 0, sh_cout_ = 0, sh_hwo_ = ~uint64_t{0}, sh_os_ = 0;
  // ext mode: the template of the last packed layer started and the offers of it still to take
  // without a fetch (RTL cov_tpl, cov_left); the template being fetched (RTL xq_tpl)
  uint32_t cov_tpl_ = 0, xq_tpl_ = 0;
  uint64_t cov_left_ = 0;
};

void Engine::step() {
  const uint64_t rows = cfg().rows, cols = cfg().cols;

  // ---------------- DMA response side ----------------
  const bool rsp_ready = !inf_.empty() && !flush_;
  const bool rsp_fire = rsp_ready && dram_.rsp_valid(cyc_);
  bool o_valid = false, o_last = false, o_colend = false, o_flag = false;
  Dst o_dst = kDesc;
  bool inf_pop = false;
  if (flush_) {
    const Inflight& h = inf_.front();
    o_valid = o_last = true;
    o_dst = h.dst;
    o_colend = h.colend;
    o_flag = h.flag;
    inf_pop = true;
  } else if (rsp_fire) {
    const Inflight& h = inf_.front();
    const bool aligned = h.off == 0, last_beat = beat_ == h.nb - 1;
    o_dst = h.dst;
    o_colend = h.colend;
    o_flag = h.flag;
    if (aligned) {
      o_valid = true;
      o_last = last_beat;
    } else if (beat_ != 0) {
      o_valid = true;
      o_last = beat_ == h.no;
    }
    if (last_beat && (aligned || h.no != h.nb)) inf_pop = true;
  }

  // the scratch's beat takes the response path when the DMA has none (RTL sc_ready); its layer
  // parity (read before a beat issued this cycle replaces it)
  const bool sc_take = sc_ov_ && !o_valid, sc_take_flag = sc_o_flag_;

  // ---------------- engine combinational ----------------
  const Desc* d = ext_ ? &cur_ : (fe_li_ < descs_.size() ? &descs_[fe_li_] : nullptr);
  // ext mode: an offer of the last packed layer's template, one of its further images, is taken
  // without a fetch (RTL cov_take)
  const bool cov_take = ext_ && state_ == kFetch && offer_ != nullptr && cov_left_ != 0 &&
                        offer_tpl_ == cov_tpl_;
  const bool desc_job = state_ == kFetch && (!ext_ || offer_ != nullptr) && !cov_take;
  const bool want = a_v_ && !c_done_ && !init_lanes_;
  const bool c_complete = c_rec_ < rec_fill_;
  // (K-split: a step takes kf reduction bytes, c_step_ counts bytes; it needs the weight
  // column of its last)
  const uint64_t kf = uint64_t{1} << ks_of(c_cg_, L_.ksc, cols);
  const bool w_ok = !L_.pe || c_complete ||
                    (L_.wrow && c_rec_ == rec_fill_ && rsp_cols_ > (c_step_ + kf - 1) / wchunk_);
  const bool in_ok = want && in_loaded_[L_.par] >= need(c_pt_, c_step_);  // (used with want)
  const bool tile_last = c_step_ + kf == L_.steps;
  const bool sh_ok = !tile_last || (!shadow_full_ && !(s1_valid_ && s1_last_));
  const bool fire = want && w_ok && in_ok && sh_ok;
  const bool last_pt = c_pt_ + 1 == L_.npt, last_ct = c_j_ + 1 == L_.nct;

  // loaders
  const bool il_valid = !il_done_;
  const uint64_t il_left =
      (IL_.gather ? IL_.cin : (IL_.res && !il_region_ ? IL_.nres : IL_.na)) - il_off_;
  const bool tl_valid = TL_.pe && tl_phase_ != 0;
  const uint64_t tl_rest = TL_.kred - tl_off_;
  const bool tl_colend = tl_row_ + 1 == tl_cg_;
  Job tl_job{};
  if (tl_phase_ == 1) {
    tl_job = {TL_.prm_addr + tl_co0_ * 8, tl_cg_ * 8, kPrm, false, false};
  } else if (TL_.wrow) {
    tl_job = {tl_rsrc_, std::min(tl_rest, wchunk_), kWRow, tl_colend,
              tl_colend && tl_rest <= wchunk_};
  } else {
    tl_job = {tl_tap_src_, tl_cg_, kWScat, false, tl_row_ + 1 == TL_.kk};
  }
  const bool job_ready = job_q_.size() < kJobDepth;
  // the compute's missing loads first: its tile's weights, else input before a later tile's
  const bool prefer_tl = want && !w_ok && rec_wr_ - 1 == c_rec_,
             prefer_il = want && !in_ok && !prefer_tl;
  bool il_grant = false, tl_grant = false, job_push = false, sc_accept = false;
  // an input job goes to the scratch when its source is in the window and the DMA holds no input
  // job, to the DMA when the scratch holds no job or beat (a layer's bytes arrive in order)
  const bool sc_busy = sc_jv_ || sc_ov_;
  Job job{};
  if (desc_job) {
    job = {ext_ ? offer_tpl_ : desc_addr_ + uint64_t{fe_li_} * hw::kDescBytes, hw::kDescBytes,
           kDesc, false, false};
    job_push = job_ready;
  } else if (il_valid && (!tl_valid || (!prefer_tl && (prefer_il || !rr_)))) {
    job = {il_src_ + il_off_, std::min(il_left, chunk_), kIn, false, ld_par_ != 0};
    if (sc_win_.contains(job.src, 1)) {
      il_grant = sc_accept = !sc_jv_ && dma_in_ == 0;
    } else {
      il_grant = job_push = job_ready && !sc_busy;
    }
  } else if (tl_valid) {
    job = tl_job;
    tl_grant = job_push = job_ready;
  }

  // drain (RqLanes requant lanes: a row of sh_n_ results takes ceil(sh_n_ / RqLanes) phases)
  // and writer
  const bool rq_ph_last = (rq_ph_ + 1) * cfg().rq_lanes >= sh_n_;
  const bool row_valid = shadow_full_ && rq_ph_last;
  const bool row_ready = wq_.size() < kWriterDepth;
  const bool row_fire = row_valid && row_ready;
  // the dual drain takes two rows of a PE tile without a folded residual
  const uint64_t dr_n = dual_ && sh_pe_ && !sh_res_ && dr_row_ + 1 < sh_rows_ ? 2 : 1;
  const bool dr_lend = row_fire && sh_lend_ && dr_row_ + dr_n == sh_rows_;  // RTL dr_lend_o
  const bool wr_any = !wq_.empty();
  bool wr_sc = false, wr_sc2 = false, wr_merge = false;
  std::array<WrWord, 4> ww{};
  uint32_t nw = 0;
  if (wr_any) {
    nw = entry_words(wq_.front(), mb_, ww);
    // the word written this cycle: into the scratch inside its window (accepted at once); with
    // it the next word when that is the scratch's too and in its other bank, or the same word
    wr_sc = sc_win_.contains(ww[wk_].addr, 1);
    if (dual_ && wr_sc && wk_ + 1 < nw && sc_win_.contains(ww[wk_ + 1].addr, 1)) {
      wr_merge = ww[wk_ + 1].addr == ww[wk_].addr;
      wr_sc2 = !wr_merge && ((ww[wk_ + 1].addr / mb_) & 1) != ((ww[wk_].addr / mb_) & 1);
    }
  }
  const bool wr_valid = wr_any && !wr_sc;
  const uint32_t wr_step = wr_sc2 || wr_merge ? 2 : 1;

  // ---------------- DMA request side ----------------
  const uint64_t burst = std::min<uint64_t>(rq_left_, cfg().burst_max);
  const bool rd_req_valid = rq_left_ != 0;
  const bool grant_wr = hold_ ? hold_wr_ : (wr_valid && (!rd_req_valid || !last_was_wr_));
  const bool req_valid = grant_wr || rd_req_valid;
  const bool req_ready = dram_.req_ready();
  const bool rd_req_fire = req_valid && req_ready && !grant_wr;
  const bool wr_fire = req_valid && req_ready && grant_wr;
  const bool take_job = !job_q_.empty() && inf_.size() < cfg().dma_inflight &&
                        (!rd_req_valid || (rd_req_fire && rq_left_ == burst));
  const bool dma_idle =
      job_q_.empty() && !rd_req_valid && inf_.empty() && !flush_ && !sc_busy;  // (RTL mem_idle)
  const bool sc_issue = sc_jv_ && (!sc_ov_ || sc_take);
  // the writer pops a row when its last word is accepted; a layer's last row completes it
  const bool wr_pop = (wr_fire || wr_sc) && wk_ + wr_step == nw;
  const bool ly_end = wr_pop && wq_.front().lend;

  // sequencer (RTL ld_start, cs_start)
  const bool be_idle = pend_ == 0;
  const bool a_fin = a_v_ && c_done_ && in_loaded_[L_.par] == L_.in_end;
  const bool dec_ok = state_ == kDecode && dec_step_ + 1 == kDecodeSteps;
  const bool ld_free = il_done_ && (!TL_.pe || tl_j_ == TL_.nct);
  bool ld_start = false;
  Layer N;
  if (dec_ok && !b_v_ && ld_free) {
    N = layer_of(*d, cfg());
    const bool in_room =
        (a_v_ ? L_.in_end : 0) + (res_v_ ? res_end_ : 0) + N.in_end <= cfg().in_buf_bytes;
    const bool hz_ok = pend_ <= 2 && !(pend_ >= 1 && hazard(*d, 1)) &&
                       !(pend_ >= 2 && hazard(*d, 2));
    ld_start = in_room && hz_ok;
  }
  const bool cs_start = b_v_ && (!a_v_ || a_fin);

  // ---------------- counters ----------------
  count(hw::Counter::Cycles, 1);
  if (s1_valid_) {
    count(s1_pe_ ? hw::Counter::PeBusy : hw::Counter::VecBusy, 1);
    count(hw::Counter::Macs, s1_macs_);
  }
  if (rsp_fire) count(hw::Counter::DramRdBytes, mb_);
  if (sc_take) {
    count(hw::Counter::InBufWrites, 1);
    count(hw::Counter::ScratchReads, 1);
  }
  if (wr_sc) count(hw::Counter::ScratchWrites, wr_sc2 ? 2 : 1);
  if (o_valid) {
    // buffer writes (the energy model's events)
    if (o_dst == kIn) count(hw::Counter::InBufWrites, 1);
    if (o_dst == kWRow || o_dst == kWScat) count(hw::Counter::WBufWrites, 1);
    if (o_dst == kPrm) count(hw::Counter::PrmWrites, 1);
  }
  if (wr_fire) count(hw::Counter::DramWrBytes, ww[wk_].bytes);
  if (want && !w_ok) count(hw::Counter::StallWeight, 1);
  if (want && w_ok && !in_ok) count(hw::Counter::StallInput, 1);
  if (want && w_ok && in_ok && !sh_ok) count(hw::Counter::StallOutput, 1);
  if (!a_v_ && (state_ == kFetch || state_ == kFetchWait || state_ == kDecode)) {
    count(hw::Counter::StallDesc, 1);
  }

  // ---------------- register updates ----------------
  // DRAM
  dram_.clock(cyc_, rsp_fire, rd_req_fire, static_cast<uint32_t>(burst), wr_fire);

  // DMA response bookkeeping
  if (flush_) {
    flush_ = false;
    beat_ = oidx_ = 0;
  } else if (rsp_fire) {
    const Inflight& h = inf_.front();
    if (beat_ == h.nb - 1) {
      if (h.off != 0 && h.no == h.nb) {
        flush_ = true;
      } else {
        beat_ = oidx_ = 0;
      }
    } else {
      ++beat_;
    }
  }
  if (inf_pop) inf_.pop_front();

  // request generator, job queue
  if (take_job) {
    const Job& j = job_q_.front();
    rq_left_ = nb_of(j.src, j.len);
    inf_.push_back({static_cast<uint32_t>(j.src % mb_), rq_left_, (j.len + mb_ - 1) / mb_, j.dst,
                    j.colend, j.flag});
    job_q_.pop_front();
  } else if (rd_req_fire) {
    rq_left_ -= burst;
  }
  if (job_push) job_q_.push_back(job);
  // the scratch: a beat into its output register, the job accepted; input jobs in the DMA
  if (sc_issue) {
    sc_ov_ = true;
    sc_o_flag_ = sc_flag_;
    if (++sc_idx_ == sc_nb_) sc_jv_ = false;
  } else if (sc_take) {
    sc_ov_ = false;
  }
  if (sc_accept) {
    sc_jv_ = true;
    sc_idx_ = 0;
    sc_nb_ = (job.len + mb_ - 1) / mb_;
    sc_flag_ = job.flag;
  }
  dma_in_ += (il_grant && !sc_accept) ? 1 : 0;
  dma_in_ -= (o_valid && o_last && o_dst == kIn) ? 1 : 0;
  if (wr_fire)
    last_was_wr_ = true;
  else if (rd_req_fire)
    last_was_wr_ = false;
  hold_ = req_valid && !req_ready;
  hold_wr_ = grant_wr;

  // output writer
  if (wr_pop) {
    wq_.pop_front();
    wk_ = 0;
  } else if (wr_fire || wr_sc) {
    wk_ += wr_step;
  }

  // destinations
  if (o_valid && o_dst == kIn) in_loaded_[o_flag ? 1 : 0] += mb_;
  if (sc_take) in_loaded_[sc_take_flag ? 1 : 0] += mb_;
  if (ld_start) in_loaded_[ld_par_ ^ 1] = 0;
  if (o_valid && o_last && (o_dst == kWRow || o_dst == kWScat)) {
    if (o_flag) {
      ++rec_fill_;
      rsp_cols_ = 0;
    } else if (o_dst == kWRow && o_colend) {
      ++rsp_cols_;
    }
  }

  // drain (uses the shadow written at the previous tile's last step)
  if (shadow_full_ && !rq_ph_last) ++rq_ph_;
  if (row_fire) {
    rq_ph_ = 0;
    // (packed images: image p / hw_out at its own output)
    auto row_addr = [&](uint64_t row) {
      const uint64_t p = sh_pe_ ? sh_tile_ * rows + row : sh_tile_;
      const uint64_t img = p / sh_hwo_;
      return sh_out_ + img * sh_os_ + (p - img * sh_hwo_) * sh_cout_ + sh_co0_;
    };
    wq_.push_back({row_addr(dr_row_), static_cast<uint32_t>(sh_n_),
                   sh_lend_ && dr_row_ + dr_n == sh_rows_, dr_n == 2,
                   dr_n == 2 ? row_addr(dr_row_ + 1) : 0});
    if (dr_row_ + dr_n == sh_rows_) {
      shadow_full_ = false;
      dr_row_ = 0;
    } else {
      dr_row_ += dr_n;
    }
  }
  if (s1_valid_ && s1_last_) shadow_full_ = true;

  // stage 1
  s1_valid_ = fire;
  s1_last_ = tile_last;
  s1_pe_ = L_.pe;
  if (fire) {
    uint64_t n_act = 0;
    if (L_.pe) {
      const uint64_t p0 = c_pt_ * rows;
      n_act = p0 >= L_.p ? 0 : std::min<uint64_t>(rows, L_.p - p0);
    }
    s1_macs_ = L_.pe ? n_act * c_cg_ * kf : 0;
    if (tile_last) {
      sh_n_ = c_cg_;
      sh_rows_ = L_.pe ? n_act : 1;
      sh_tile_ = c_pt_;
      sh_co0_ = c_co0_;
      sh_lend_ = last_pt && last_ct;
      sh_pe_ = L_.pe;
      sh_res_ = L_.res;
      sh_out_ = L_.out_addr;
      sh_cout_ = L_.cout;
      sh_hwo_ = L_.imgs > 1 ? L_.hw_out : ~uint64_t{0};
      sh_os_ = L_.ostride;
    }
  }

  // tile loader: a tile into the weight ring, or the oldest tile out when there is no room
  const uint64_t rec_n = rec_wr_ - rec_rd_;
  const bool space_ok = rec_n != cfg().wtiles && rg_used_ + TL_.tsz <= wdepth_;
  const bool evict_ok = rec_n != 0 && rec_rd_ != c_rec_;
  // (at most one tile ahead of the compute; evictions only for room)
  const bool alloc_go =
      tl_phase_ == 0 && TL_.pe && tl_j_ < TL_.nct && !ld_start && rec_wr_ - c_rec_ < 2;
  const bool claim = alloc_go && space_ok;
  if (cs_start) {
    c_rec_ = NX_.rec0;
  } else if (fire && tile_last && last_pt && L_.pe) {
    ++c_rec_;
  }
  if (alloc_go && !space_ok && evict_ok) {
    rg_used_ -= rec_size_[rec_rd_ % cfg().wtiles];
    ++rec_rd_;
  }
  if (claim) {
    tl_phase_ = 1;
    rec_size_[rec_wr_ % cfg().wtiles] = TL_.tsz;
    rg_used_ += TL_.tsz;
    ++rec_wr_;
    tl_rsrc_ = tl_row_src_;
    tl_cg_ = std::min<uint64_t>(cols, TL_.cout - tl_co0_);
    tl_row_ = 0;
    tl_off_ = 0;
    tl_tap_src_ = tl_tapbase_;
  }

  // issue stage counters
  if (cs_start) {
    c_j_ = c_co0_ = c_pt_ = c_step_ = 0;
    c_cg_ = std::min<uint64_t>(cols, NX_.cout);
    c_done_ = false;
  } else if (fire) {
    if (!tile_last) {
      c_step_ += kf;
    } else {
      c_step_ = 0;
      if (last_pt) {
        c_pt_ = 0;
        if (last_ct) {
          c_done_ = true;
        } else {
          ++c_j_;
          c_co0_ += cols;
          c_cg_ = std::min<uint64_t>(cols, L_.cout - c_co0_);
        }
      } else {
        ++c_pt_;
      }
    }
  }

  // loaders' grants
  if (il_grant) {
    if (il_left <= chunk_) {
      il_off_ = 0;
      if (IL_.gather && il_dst_ + IL_.cpad < IL_.na) {
        il_dst_ += IL_.cpad;
        if (il_x_ + 1 == IL_.wo) {
          il_x_ = 0;
          il_rsrc_ += IL_.grow;
          il_src_ = il_rsrc_;
        } else {
          ++il_x_;
          il_src_ += IL_.gstep;
        }
      } else if ((IL_.add || IL_.res) && !il_region_) {
        il_region_ = true;
        il_src_ = IL_.res ? IL_.in_addr : IL_.in2_addr;
        il_dst_ = IL_.res ? IL_.offr : IL_.offb;
      } else if (il_img_ + 1 < IL_.imgs) {  // the next packed image
        ++il_img_;
        il_rsrc_ += IL_.istride;
        il_src_ = il_rsrc_;
        il_dst_ += IL_.offb;
      } else {
        il_done_ = true;
      }
    } else {
      il_off_ += chunk_;
    }
  }
  if (il_grant)
    rr_ = true;
  else if (tl_grant)
    rr_ = false;
  switch (claim ? 0u : tl_phase_) {
    case 0:
      break;
    case 1:
      if (tl_grant) tl_phase_ = 2;
      break;
    default:
      if (tl_grant) {
        bool tile_done = false;
        if (TL_.wrow) {
          if (tl_colend) {
            tl_row_ = 0;
            if (tl_rest <= wchunk_) {
              tile_done = true;
              tl_row_src_ += TL_.kred * cols;
            } else {
              tl_off_ += wchunk_;
              tl_rsrc_ = tl_row_src_ + tl_off_;
            }
          } else {
            ++tl_row_;
            tl_rsrc_ += TL_.kred;
          }
        } else {
          tl_tap_src_ += TL_.cin;
          ++tl_row_;
          tile_done = tl_row_ == TL_.kk;
          if (tile_done) tl_tapbase_ += cols;
        }
        if (tile_done) {
          tl_phase_ = 0;
          ++tl_j_;
          tl_co0_ += cols;
        }
      }
      break;
  }

  // the loaders take a starting layer (RTL ld_start: after their grants, which it excludes)
  if (ld_start) {
    // (RTL pw_v_q: cleared when the tile pw_rec0_ is evicted)
    const bool reuse = pw_v_ && N.pe && N.wrow == pw_wrow_ && d->wgt_addr == pw_wgt_ &&
                       d->prm_addr == pw_prm_ && d->cout == pw_cout_ && N.kred == pw_kred_ &&
                       N.ksc == pw_ksc_ && pw_rec0_ >= rec_rd_;
    N.par = ld_par_ ^ 1;
    N.rec0 = reuse ? pw_rec0_ : rec_wr_;
    IL_ = TL_ = N;
    TL_.pe = N.pe && !reuse;  // reused weights: nothing to load
    pw_v_ = N.pe;
    pw_wrow_ = N.wrow;
    pw_wgt_ = d->wgt_addr;
    pw_prm_ = d->prm_addr;
    pw_cout_ = d->cout;
    pw_kred_ = N.kred;
    pw_ksc_ = N.ksc;
    pw_rec0_ = N.rec0;
    il_region_ = false;
    il_done_ = false;
    il_off_ = 0;
    il_src_ = N.res ? N.in2_addr : N.in_addr;  // a folded residual first
    il_rsrc_ = N.in_addr;
    il_dst_ = il_x_ = il_img_ = 0;
    tl_phase_ = 0;
    tl_j_ = 0;
    tl_co0_ = 0;
    tl_row_src_ = N.wgt_addr;
    tl_tapbase_ = N.wgt_addr;
    ranges_[fe_li_ % 2] = ranges_of(*d);
  }

  // sequencer
  init_lanes_ = cs_start;
  switch (state_) {
    case kFetch:
      if (cov_take) {
        --cov_left_;
        out_.ready = out_.covered = true;
      } else if (desc_job && job_ready) {
        state_ = kFetchWait;
        if (ext_) {  // (RTL xd_ready_o; the descriptor register takes the patched template)
          cur_ = *offer_;
          xq_tpl_ = offer_tpl_;
          out_.ready = true;
        }
      }
      break;
    case kFetchWait:
      if (o_valid && o_last && o_dst == kDesc) {
        state_ = kDecode;
        dec_step_ = 0;
      }
      break;
    case kDecode:
      if (dec_step_ + 1 < kDecodeSteps) {
        ++dec_step_;
      } else if (ld_start) {
        ++fe_li_;
        state_ = (ext_ || fe_li_ != descs_.size()) ? kFetch : kRun;
      }
      break;
    case kRun:
      if (be_idle && dma_idle) state_ = kIdle;
      break;
    default:
      break;
  }
  if (ld_start) {
    b_v_ = true;
    ld_par_ ^= 1;
    NX_ = N;
    if (ext_) {
      cov_tpl_ = xq_tpl_;
      cov_left_ = N.imgs - 1;
    }
  }
  if (a_fin && L_.res) {
    res_v_ = true;
    res_end_ = L_.in_end;
  } else if (dr_lend) {
    res_v_ = false;
  }
  if (cs_start) {
    a_v_ = true;
    if (!ld_start) b_v_ = false;
    L_ = NX_;  // (ld_start and cs_start never coincide: one needs B empty, the other full)
  } else if (a_fin) {
    a_v_ = false;
  }
  pend_ = pend_ + (ld_start ? 1 : 0) - (ly_end ? 1 : 0);
  if (ly_end && ends_ != nullptr) ends_->push_back(cyc_);
  out_.done = ly_end;
  ++cyc_;
  watchdog();
}

void Engine::watchdog() {
  // a bug in the model (a load credited to the wrong layer, a hand-shake that never completes)
  // must fail, not spin: every busy cycle ends within a bounded time in some event counted here
  uint64_t sig = fe_li_ + dec_step_ + static_cast<uint64_t>(state_);
  for (const hw::Counter id :
       {hw::Counter::PeBusy, hw::Counter::VecBusy, hw::Counter::DramRdBytes,
        hw::Counter::DramWrBytes, hw::Counter::InBufWrites, hw::Counter::WBufWrites,
        hw::Counter::PrmWrites, hw::Counter::ScratchWrites}) {
    sig += c_[static_cast<int>(id)];
  }
  if (sig != wd_sig_ || quiet()) {
    wd_sig_ = sig;
    wd_cyc_ = cyc_;
  } else if (cyc_ - wd_cyc_ > kStuckCycles) {
    throw std::logic_error("cycle model: no progress for " + std::to_string(kStuckCycles) +
                           " cycles (cycle " + std::to_string(cyc_) + ", descriptor " +
                           std::to_string(fe_li_) + ", layers pending " +
                           std::to_string(pend_) + "): a model bug");
  }
}

}  // namespace

bool reads_output_of(const Desc& d, const Desc& prev) {
  return reads_from(ranges_of(d), ranges_of(prev));
}

struct ExtEngine::Impl {
  Impl(const hw::Config& c, const DramTiming& dram) : cfg(c), e(cfg, dram) { e.start_ext(); }
  hw::Config cfg;  // (the engine keeps a pointer)
  Engine e;
};
struct ExtEngine::Snapshot {
  Engine e;
};
std::shared_ptr<const ExtEngine::Snapshot> ExtEngine::snapshot() const {
  return std::make_shared<const Snapshot>(Snapshot{impl_->e});
}
void ExtEngine::replay(const Snapshot& end, uint64_t at, const Counters& add, uint32_t wgt,
                       uint32_t prm) {
  impl_->e.replay(end.e, at, add, wgt, prm);
}
void ExtEngine::state_key(std::vector<uint64_t>& k) const { impl_->e.state_key(k); }
bool ExtEngine::same_weights(const Desc& d) const { return impl_->e.same_weights(d); }
uint64_t ExtEngine::cycle() const { return impl_->e.cycle(); }
ExtEngine::ExtEngine(const hw::Config& cfg, const DramTiming& dram)
    : impl_(std::make_unique<Impl>(cfg, dram)) {}
ExtEngine::~ExtEngine() = default;
ExtEngine::Step ExtEngine::step(const Desc* offer, uint32_t tpl_addr) {
  return impl_->e.step_ext(offer, tpl_addr);
}
bool ExtEngine::quiet() const { return impl_->e.quiet(); }
void ExtEngine::idle(uint64_t n) { impl_->e.idle_ext(n); }
const Counters& ExtEngine::counters() const { return impl_->e.counters(); }

Counters program(std::span<const Desc> descs, uint32_t desc_addr, const hw::Config& cfg,
                 const DramTiming& dram, std::vector<uint64_t>* layer_ends) {
  Engine e(cfg, dram);
  if (layer_ends != nullptr) layer_ends->clear();
  return e.run(descs, desc_addr, layer_ends);
}

void add_layer(const Desc& d, const hw::Config& cfg, const DramTiming& dram, Counters& c,
               uint32_t desc_addr) {
  const Counters l = program(std::span<const Desc>(&d, 1), desc_addr, cfg, dram);
  for (size_t i = 0; i < c.size(); ++i) c[i] += l[i];
}

size_t LayerMemo::hash_words(std::span<const uint32_t> k) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the words
  for (uint32_t w : k) {
    h ^= w;
    h *= 0x100000001b3ULL;
  }
  return static_cast<size_t>(h ^ (h >> 29));
}

// Layers stream through the engine (a layer loads while the one before computes, its tiles
// compute while that one drains, and it waits when it reads what an unfinished layer writes),
// so a layer's time depends on its neighbours' and the memo keeps whole programs. The hazard
// checks compare absolute address ranges, so the key holds the descriptors as they are; only the
// descriptor block's place counts modulo the port width.
void LayerMemo::add_program(std::span<const Desc> descs, uint32_t desc_addr, Counters& c) {
  std::vector<uint32_t> key;
  key.reserve(descs.size() * hw::kDescWords + 1);
  for (const Desc& d : descs) {
    const auto words = encode(d);
    key.insert(key.end(), words.begin(), words.end());
  }
  key.push_back(desc_addr % cfg_.mem_bytes);
  auto it = programs_.find(key);
  if (it == programs_.end()) {
    it = programs_.emplace(std::move(key), program(descs, desc_addr, cfg_, dram_)).first;
  } else {
    ++hits_;
  }
  for (size_t j = 0; j < c.size(); ++j) c[j] += it->second[j];
}

}  // namespace nasa::cycles
