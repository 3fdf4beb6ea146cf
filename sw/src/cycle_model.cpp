// Cycle model: replays rtl/nasa_engine.sv's control (sequencer, loaders, arbiter, DMA, issue
// stage, drain, output writer) and the sim/ DRAM model's timing without data. Every register
// below names the RTL register it mirrors; keep the two in step (the cosim checks the counters).
#include "nasa/cycle_model.h"

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <vector>

namespace nasa::cycles {

DramTiming default_dram(const hw::Config& cfg) { return DramTiming{32, cfg.mem_bytes, 16}; }

double ideal_cycles(const Desc& d, const hw::Config& cfg) {
  return static_cast<double>(shape_of(d).macs) / (double{1} * cfg.rows * cfg.cols);
}

namespace {

constexpr uint32_t kJobDepth = 4, kWriterDepth = 4, kDecodeSteps = 12;

enum Dst : uint8_t { kDesc, kIn, kWRow, kWScat, kPrm };
enum State : uint8_t { kIdle, kFetch, kFetchWait, kDecode, kRun };

struct Job {
  uint64_t src;
  uint64_t len;
  Dst dst;
  uint8_t half;
  bool colend;  // last row of a weight column
};
struct Inflight {
  uint32_t off;
  uint64_t nb, no;
  Dst dst;
  uint8_t half;
  bool colend;
};
struct Row {
  uint64_t addr;
  uint32_t n;
};

// The sim/ DRAM model (sim/src/dram.cpp): in-order reads, first beat `latency` cycles after
// acceptance, beats and writes share the bus at bytes_per_cycle.
class Dram {
 public:
  Dram(const DramTiming& t, uint32_t port) : t_(t), port_(port) {}
  bool req_ready() const { return reads_ + writes_.size() < t_.max_outstanding; }
  bool rsp_valid(uint64_t cyc) const { return !beats_.empty() && beats_.front().avail <= cyc; }
  // end of cycle `cyc`
  void clock(uint64_t cyc, bool take_rsp, bool read, uint32_t beats, bool write) {
    const uint64_t bpc = t_.bytes_per_cycle;
    if (take_rsp) {
      if (beats_.front().last) --reads_;
      beats_.pop_front();
    }
    if (read) {
      uint64_t slot = std::max((cyc + t_.latency) * bpc, bus_free_);
      for (uint32_t j = 0; j < beats; ++j) {
        beats_.push_back({(slot + bpc - 1) / bpc, j + 1 == beats});
        slot += port_;
      }
      bus_free_ = slot;
      ++reads_;
    } else if (write) {
      const uint64_t start = std::max(cyc * bpc, bus_free_);
      bus_free_ = start + port_;
      writes_.push_back((bus_free_ + bpc - 1) / bpc);
    }
    while (!writes_.empty() && writes_.front() <= cyc + 1) writes_.pop_front();
  }

 private:
  struct Beat {
    uint64_t avail;
    bool last;
  };
  DramTiming t_;
  uint64_t port_;
  uint64_t bus_free_ = 0;
  uint32_t reads_ = 0;
  std::deque<Beat> beats_;
  std::deque<uint64_t> writes_;
};

// Per-layer constants (the RTL's r_* registers).
struct Layer {
  bool pe = false, add = false, need_all = false;  // pe: PE array, weights and records
  bool wrow = false;  // Conv/Fc weights in rows, loaded column by column (DwConv: taps)
  uint64_t cin = 0, cout = 0, kk = 0, kred = 0;
  uint64_t steps = 0;  // reduction steps per tile (r_cin_n * r_kw * r_kh)
  uint64_t cin_n = 0, kw = 0;
  uint64_t p = 0, wo = 0, stride = 1, pad = 0, kh = 0, row_b = 0;
  uint64_t nct = 0, npt = 0, na = 0, offb = 0, in_total = 0;
  uint64_t in_addr = 0, in2_addr = 0, out_addr = 0, wgt_addr = 0, prm_addr = 0;
  // pixel gather (1x1 stride-2 Conv/DwConv, RTL r_g): the loader reads only the pixels the layer
  // uses, one job per pixel of `cin` bytes, into `cpad`-byte slots (cin rounded up to the port);
  // the layer then runs as a stride-1 layer over that compact ho x wo x cpad input
  bool gather = false;
  uint64_t cpad = 0, gstep = 0, grow = 0;
};

class Engine {
 public:
  Engine(const hw::Config& cfg, const DramTiming& dram)
      : cfg_(cfg),
        mb_(cfg.mem_bytes),
        chunk_(uint64_t{cfg.burst_max} * cfg.mem_bytes),
        wchunk_(chunk_ / 2),
        dram_(dram, cfg.mem_bytes) {
    if (dram.bytes_per_cycle == 0 || dram.bytes_per_cycle > cfg.mem_bytes || dram.latency == 0) {
      throw std::invalid_argument(
          "cycle model: DRAM bandwidth must be in [1, port width] and "
          "latency at least 1");
    }
  }

  Counters run(std::span<const Desc> descs, uint32_t desc_addr) {
    descs_ = descs;
    desc_addr_ = desc_addr;
    c_ = {};
    if (descs.empty()) return c_;
    state_ = kFetch;
    run_ = false;
    li_ = 0;
    while (state_ != kIdle) step();
    return c_;
  }

 private:
  static Layer layer_of(const Desc& d, uint32_t mb, uint32_t rows, uint32_t cols) {
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
    const uint64_t cin_n = op == hw::Op::Conv ? d.cin : (fc ? l.kred : 1);
    const uint64_t kh = win ? k : (gap ? d.h : (add ? 2 : 1));
    const uint64_t kw = win ? k : (gap ? d.w : 1);
    l.steps = cin_n * kh * kw;
    l.cin_n = cin_n;
    l.kw = kw;
    l.kh = kh;
    l.stride = win ? d.stride : 1;
    l.pad = win ? (k - 1) / 2 : 0;
    l.wo = (fc || gap) ? 1 : s.wo;
    l.row_b = uint64_t{d.w} * d.cin;
    const uint64_t hw_out = uint64_t{s.ho} * s.wo;
    l.p = (fc || gap) ? 1 : hw_out;
    l.nct = (d.cout + cols - 1) / cols;
    l.npt = l.pe ? (l.p + rows - 1) / rows : l.p;
    l.na = s.in_bytes;
    l.offb = (l.na + mb - 1) / mb * mb;
    l.in_total = add ? l.offb + l.na : l.na;
    if (gathers_input(d, mb)) {
      l.gather = true;
      l.cpad = gather_slot_bytes(d, mb);
      l.stride = 1;
      l.row_b = uint64_t{s.wo} * l.cpad;
      l.na = l.in_total = hw_out * l.cpad;
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

  // input bytes step `step` of tile `tile` needs (RTL `need`): the rows up to the kernel row
  // ky the step reads, for the last position of the tile
  uint64_t need(uint64_t tile, uint64_t step) const {
    if (L_.need_all) return L_.in_total;
    if (L_.add) return L_.offb + tile * L_.cin + L_.cin;
    const uint64_t plast = L_.pe ? tile * cfg_.rows + cfg_.rows - 1 : tile;
    const int64_t iy0 =
        static_cast<int64_t>((plast / L_.wo) * L_.stride) - static_cast<int64_t>(L_.pad);
    const auto ky = static_cast<int64_t>(step / (L_.cin_n * L_.kw));
    const int64_t n = (iy0 + ky + 1) * static_cast<int64_t>(L_.row_b);
    return std::min<uint64_t>(static_cast<uint64_t>(std::max<int64_t>(n, 0)), L_.in_total);
  }

  void step();

  const hw::Config& cfg_;
  const uint64_t mb_, chunk_, wchunk_;  // input chunk, weight column (RTL Chunk, WChunk)
  Dram dram_;
  std::span<const Desc> descs_;
  uint32_t desc_addr_ = 0;
  Counters c_{};
  uint64_t cyc_ = 0;

  // sequencer
  State state_ = kIdle;  // the front end (fetch, decode); run_: a layer runs (the back end)
  bool run_ = false;
  uint32_t li_ = 0, dec_step_ = 0;
  Layer L_;
  bool init_lanes_ = false;
  // DMA
  std::deque<Job> job_q_;
  uint64_t rq_left_ = 0, rq_addr_ = 0;
  std::deque<Inflight> inf_;
  uint64_t beat_ = 0, oidx_ = 0;
  bool flush_ = false, last_was_wr_ = false, hold_ = false, hold_wr_ = false;
  // output writer
  std::deque<Row> wq_;
  bool second_ = false;
  // input loader
  bool il_region_ = false, il_done_ = true;
  uint64_t il_off_ = 0, in_loaded_ = 0;
  uint64_t il_src_ = 0, il_rsrc_ = 0, il_dst_ = 0, il_x_ = 0;  // current segment (RTL il_*_q)
  // tile loader
  uint32_t tl_phase_ = 0;
  uint64_t tl_j_ = 0, tl_co0_ = 0, tl_row_ = 0, tl_off_ = 0, tl_row_src_ = 0, tl_rsrc_ = 0,
           tl_tap_src_ = 0, tl_tapbase_ = 0, tl_cg_ = 0;
  bool h_claim_[2] = {}, h_iss_done_[2] = {};
  uint64_t h_iss_[2] = {}, h_done_[2] = {}, h_cols_[2] = {};
  bool rr_ = false;
  // issue stage
  uint64_t c_j_ = 0, c_co0_ = 0, c_cg_ = 0, c_pt_ = 0, c_step_ = 0;
  bool c_done_ = true;
  // stage 1 and drain
  bool s1_valid_ = false, s1_last_ = false, s1_pe_ = false;
  uint64_t s1_macs_ = 0;
  bool shadow_full_ = false;
  uint64_t dr_row_ = 0, sh_rows_ = 0, sh_n_ = 0, sh_tile_ = 0, sh_co0_ = 0, rq_ph_ = 0;
};

void Engine::step() {
  const uint64_t rows = cfg_.rows, cols = cfg_.cols;
  const bool running = run_;

  // ---------------- DMA response side ----------------
  const bool rsp_ready = !inf_.empty() && !flush_;
  const bool rsp_fire = rsp_ready && dram_.rsp_valid(cyc_);
  bool o_valid = false, o_last = false, o_colend = false;
  Dst o_dst = kDesc;
  uint8_t o_half = 0;
  bool inf_pop = false;
  if (flush_) {
    const Inflight& h = inf_.front();
    o_valid = o_last = true;
    o_dst = h.dst;
    o_half = h.half;
    o_colend = h.colend;
    inf_pop = true;
  } else if (rsp_fire) {
    const Inflight& h = inf_.front();
    const bool aligned = h.off == 0, last_beat = beat_ == h.nb - 1;
    o_dst = h.dst;
    o_half = h.half;
    o_colend = h.colend;
    if (aligned) {
      o_valid = true;
      o_last = last_beat;
    } else if (beat_ != 0) {
      o_valid = true;
      o_last = beat_ == h.no;
    }
    if (last_beat && (aligned || h.no != h.nb)) inf_pop = true;
  }

  // ---------------- engine combinational ----------------
  const Desc* d = li_ < descs_.size() ? &descs_[li_] : nullptr;
  const bool desc_job = state_ == kFetch;
  const bool want = running && !c_done_ && !init_lanes_;
  const uint8_t ch = static_cast<uint8_t>(c_j_ & 1);
  auto h_full = [&](int h) { return h_claim_[h] && h_iss_done_[h] && h_iss_[h] == h_done_[h]; };
  const bool w_ok =
      !L_.pe || (L_.wrow ? h_claim_[ch] && h_cols_[ch] > c_step_ / wchunk_ : h_full(ch));
  const bool in_ok = running && in_loaded_ >= need(c_pt_, c_step_);
  const bool tile_last = c_step_ + 1 == L_.steps;
  const bool sh_ok = !tile_last || (!shadow_full_ && !(s1_valid_ && s1_last_));
  const bool fire = want && w_ok && in_ok && sh_ok;
  const bool last_pt = c_pt_ + 1 == L_.npt, last_ct = c_j_ + 1 == L_.nct;

  // loaders
  const bool il_valid = running && !il_done_;
  const uint64_t il_left = (L_.gather ? L_.cin : L_.na) - il_off_;
  const bool tl_valid = running && L_.pe && tl_phase_ != 0;
  const uint8_t tl_h = static_cast<uint8_t>(tl_j_ & 1);
  const uint64_t tl_rest = L_.kred - tl_off_;
  const bool tl_colend = tl_row_ + 1 == tl_cg_;
  Job tl_job{};
  if (tl_phase_ == 1) {
    tl_job = {L_.prm_addr + tl_co0_ * 8, tl_cg_ * 8, kPrm, tl_h, false};
  } else if (L_.wrow) {
    tl_job = {tl_rsrc_, std::min(tl_rest, wchunk_), kWRow, tl_h, tl_colend};
  } else {
    tl_job = {tl_tap_src_, tl_cg_, kWScat, tl_h, false};
  }
  const bool job_ready = job_q_.size() < kJobDepth;
  // the compute's missing loads first: its tile's weights, else input before a later tile's
  const bool prefer_tl = want && !w_ok && tl_j_ == c_j_, prefer_il = want && !in_ok && !prefer_tl;
  bool il_grant = false, tl_grant = false, job_push = false;
  Job job{};
  if (desc_job) {
    // the next layer's descriptor while one runs (prefetch)
    job = {desc_addr_ + uint64_t{li_ + (run_ ? 1 : 0)} * hw::kDescBytes, hw::kDescBytes, kDesc, 0,
           false};
    job_push = job_ready;
  } else if (il_valid && (!tl_valid || (!prefer_tl && (prefer_il || !rr_)))) {
    job = {il_src_ + il_off_, std::min(il_left, chunk_), kIn, 0, false};
    il_grant = job_push = job_ready;
  } else if (tl_valid) {
    job = tl_job;
    tl_grant = job_push = job_ready;
  }

  // drain (RqLanes requant lanes: a row of sh_n_ results takes ceil(sh_n_ / RqLanes) phases)
  // and writer
  const bool rq_ph_last = (rq_ph_ + 1) * cfg_.rq_lanes >= sh_n_;
  const bool row_valid = shadow_full_ && running && rq_ph_last;
  const bool row_ready = wq_.size() < kWriterDepth;
  const bool row_fire = row_valid && row_ready;
  const bool wr_valid = !wq_.empty();
  bool two_part = false;
  if (wr_valid) two_part = wq_.front().addr % mb_ + wq_.front().n > mb_;

  // ---------------- DMA request side ----------------
  const uint64_t burst = std::min<uint64_t>(rq_left_, cfg_.burst_max);
  const bool rd_req_valid = rq_left_ != 0;
  const bool grant_wr = hold_ ? hold_wr_ : (wr_valid && (!rd_req_valid || !last_was_wr_));
  const bool req_valid = grant_wr || rd_req_valid;
  const bool req_ready = dram_.req_ready();
  const bool rd_req_fire = req_valid && req_ready && !grant_wr;
  const bool wr_fire = req_valid && req_ready && grant_wr;
  const bool take_job = !job_q_.empty() && inf_.size() < cfg_.dma_inflight &&
                        (!rd_req_valid || (rd_req_fire && rq_left_ == burst));
  const bool dma_idle = job_q_.empty() && !rd_req_valid && inf_.empty() && !flush_;

  const bool tl_done = !L_.pe || tl_j_ == L_.nct;
  const bool layer_done = running && c_done_ && !s1_valid_ && !shadow_full_ && wq_.empty() &&
                          dma_idle && il_done_ && tl_done;
  // prefetch of the next descriptor once the running layer has issued all its loads
  const bool pf_ok = il_done_ && tl_done && li_ + 1 < descs_.size();

  // ---------------- counters ----------------
  count(hw::Counter::Cycles, 1);
  if (s1_valid_) {
    count(s1_pe_ ? hw::Counter::PeBusy : hw::Counter::VecBusy, 1);
    count(hw::Counter::Macs, s1_macs_);
  }
  if (rsp_fire) count(hw::Counter::DramRdBytes, mb_);
  if (wr_fire) {
    const Row& r = wq_.front();
    const uint64_t off = r.addr % mb_;
    const uint64_t lo = std::min<uint64_t>(r.n, mb_ - off);
    count(hw::Counter::DramWrBytes, second_ ? r.n - lo : lo);
  }
  if (want && !w_ok) count(hw::Counter::StallWeight, 1);
  if (want && w_ok && !in_ok) count(hw::Counter::StallInput, 1);
  if (want && w_ok && in_ok && !sh_ok) count(hw::Counter::StallOutput, 1);
  if (!run_ && (state_ == kFetch || state_ == kFetchWait || state_ == kDecode)) {
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
                    j.half, j.colend});
    job_q_.pop_front();
  } else if (rd_req_fire) {
    rq_left_ -= burst;
  }
  if (job_push) job_q_.push_back(job);
  if (wr_fire)
    last_was_wr_ = true;
  else if (rd_req_fire)
    last_was_wr_ = false;
  hold_ = req_valid && !req_ready;
  hold_wr_ = grant_wr;

  // output writer
  if (wr_fire) {
    if (second_) {
      second_ = false;
      wq_.pop_front();
    } else if (two_part) {
      second_ = true;
    } else {
      wq_.pop_front();
    }
  }

  // destinations
  const bool run_start = state_ == kDecode && dec_step_ + 1 == kDecodeSteps && !run_;
  if (o_valid && o_dst == kIn && !run_start) in_loaded_ += mb_;
  if (o_valid && o_last && (o_dst == kWRow || o_dst == kWScat || o_dst == kPrm)) {
    ++h_done_[o_half];
  }
  if (o_valid && o_last && o_dst == kWRow && o_colend) ++h_cols_[o_half];

  // drain (uses the shadow written at the previous tile's last step)
  if (shadow_full_ && running && !rq_ph_last) ++rq_ph_;
  if (row_fire) {
    rq_ph_ = 0;
    const uint64_t p = L_.pe ? sh_tile_ * rows + dr_row_ : sh_tile_;
    wq_.push_back({L_.out_addr + p * L_.cout + sh_co0_, static_cast<uint32_t>(sh_n_)});
    if (dr_row_ + 1 == sh_rows_) {
      shadow_full_ = false;
      dr_row_ = 0;
    } else {
      ++dr_row_;
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
    s1_macs_ = L_.pe ? n_act * c_cg_ : 0;
    if (tile_last) {
      sh_n_ = c_cg_;
      sh_rows_ = L_.pe ? n_act : 1;
      sh_tile_ = c_pt_;
      sh_co0_ = c_co0_;
    }
  }

  // tile loader: release of the computed half, claim of a free one (registered flags)
  const bool claim = tl_phase_ == 0 && running && L_.pe && tl_j_ < L_.nct && !h_claim_[tl_h];
  if (fire && tile_last && last_pt && L_.pe) h_claim_[ch] = false;
  if (claim) {
    tl_phase_ = 1;
    h_claim_[tl_h] = true;
    h_iss_done_[tl_h] = false;
    h_iss_[tl_h] = 0;
    h_done_[tl_h] = 0;
    h_cols_[tl_h] = 0;
    tl_rsrc_ = tl_row_src_;
    tl_cg_ = std::min<uint64_t>(cols, L_.cout - tl_co0_);
    tl_row_ = 0;
    tl_off_ = 0;
    tl_tap_src_ = tl_tapbase_;
  }

  // issue stage counters
  if (fire) {
    if (!tile_last) {
      ++c_step_;
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
      if (L_.gather && il_dst_ + L_.cpad < L_.na) {
        il_dst_ += L_.cpad;
        if (il_x_ + 1 == L_.wo) {
          il_x_ = 0;
          il_rsrc_ += L_.grow;
          il_src_ = il_rsrc_;
        } else {
          ++il_x_;
          il_src_ += L_.gstep;
        }
      } else if (L_.add && !il_region_) {
        il_region_ = true;
        il_src_ = L_.in2_addr;
        il_dst_ = L_.offb;
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
  if (tl_grant) ++h_iss_[tl_h];
  switch (claim ? 0u : tl_phase_) {
    case 0:
      break;
    case 1:
      if (tl_grant) tl_phase_ = 2;
      break;
    default:
      if (tl_grant) {
        bool tile_done = false;
        if (L_.wrow) {
          if (tl_colend) {
            tl_row_ = 0;
            if (tl_rest <= wchunk_) {
              tile_done = true;
              tl_row_src_ += L_.kred * cols;
            } else {
              tl_off_ += wchunk_;
              tl_rsrc_ = tl_row_src_ + tl_off_;
            }
          } else {
            ++tl_row_;
            tl_rsrc_ += L_.kred;
          }
        } else {
          tl_tap_src_ += L_.cin;
          ++tl_row_;
          tile_done = tl_row_ == L_.kk;
          if (tile_done) tl_tapbase_ += cols;
        }
        if (tile_done) {
          tl_phase_ = 0;
          h_iss_done_[tl_h] = true;
          ++tl_j_;
          tl_co0_ += cols;
        }
      }
      break;
  }

  // sequencer
  init_lanes_ = run_start;
  const State front = state_;
  switch (state_) {
    case kFetch:
      if (job_ready) state_ = kFetchWait;
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
      } else if (run_start) {  // else decoded ahead: held until the running layer is done
        state_ = kRun;
        run_ = true;
        L_ = layer_of(*d, cfg_.mem_bytes, cfg_.rows, cfg_.cols);
        il_region_ = false;
        il_done_ = false;
        il_off_ = 0;
        il_src_ = il_rsrc_ = L_.in_addr;
        il_dst_ = il_x_ = 0;
        in_loaded_ = 0;
        tl_phase_ = 0;
        tl_j_ = 0;
        tl_co0_ = 0;
        tl_row_src_ = L_.wgt_addr;
        tl_tapbase_ = L_.wgt_addr;
        h_claim_[0] = h_claim_[1] = false;
        h_iss_done_[0] = h_iss_done_[1] = false;
        c_j_ = c_co0_ = c_pt_ = c_step_ = 0;
        c_cg_ = std::min<uint64_t>(cols, L_.cout);
        c_done_ = false;
      }
      break;
    case kRun:
      if (pf_ok) state_ = kFetch;
      break;
    default:
      break;
  }
  if (layer_done) {  // the back end
    ++li_;
    run_ = false;
    if (front == kRun) state_ = li_ == descs_.size() ? kIdle : kFetch;
  }
  ++cyc_;
}

}  // namespace

Counters program(std::span<const Desc> descs, uint32_t desc_addr, const hw::Config& cfg,
                 const DramTiming& dram) {
  Engine e(cfg, dram);
  return e.run(descs, desc_addr);
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

// The engine uses addresses only modulo its port width (beats per request, the split of a write
// row), so layers that differ only in where their buffers sit time alike.
std::array<uint32_t, hw::kDescWords + 1> LayerMemo::key_of(const Desc& d, uint32_t desc_addr) const {
  const uint32_t mb = cfg_.mem_bytes;
  Desc k = d;
  k.in_addr %= mb;
  k.in2_addr %= mb;
  k.out_addr %= mb;
  k.wgt_addr %= mb;
  k.prm_addr %= mb;
  std::array<uint32_t, hw::kDescWords + 1> key{};
  const auto words = encode(k);
  std::copy(words.begin(), words.end(), key.begin());
  key[hw::kDescWords] = desc_addr % mb;
  return key;
}

const Counters& LayerMemo::single(const Desc& d, uint32_t desc_addr) {
  const auto key = key_of(d, desc_addr);
  auto it = memo_.find(key);
  if (it == memo_.end()) {
    it = memo_.emplace(key, program(std::span<const Desc>(&d, 1), desc_addr, cfg_, dram_)).first;
  } else {
    ++hits_;
  }
  return it->second;
}

void LayerMemo::add_layer(const Desc& d, Counters& c, uint32_t desc_addr) {
  const Counters& l = single(d, desc_addr);
  for (size_t i = 0; i < c.size(); ++i) c[i] += l[i];
}

// A program's time telescopes over pairs of consecutive layers: layer i+1 starts from a clean
// engine when layer i is done, and only its descriptor fetch overlaps layer i, so program(A, B)
// - program(A) is what B adds after A, whatever came before A.
void LayerMemo::add_program(std::span<const Desc> descs, uint32_t desc_addr, Counters& c) {
  for (size_t i = 0; i < descs.size(); ++i) {
    const auto at = static_cast<uint32_t>(desc_addr + i * hw::kDescBytes);
    if (i == 0) {
      add_layer(descs[0], c, at);
      continue;
    }
    const auto prev_at = static_cast<uint32_t>(at - hw::kDescBytes);
    const auto ka = key_of(descs[i - 1], prev_at), kb = key_of(descs[i], at);
    std::array<uint32_t, 2 * (hw::kDescWords + 1)> key{};
    std::copy(ka.begin(), ka.end(), key.begin());
    std::copy(kb.begin(), kb.end(), key.begin() + ka.size());
    auto it = pairs_.find(key);
    if (it == pairs_.end()) {
      Counters delta = program(descs.subspan(i - 1, 2), prev_at, cfg_, dram_);
      const Counters& a = single(descs[i - 1], prev_at);
      for (size_t j = 0; j < delta.size(); ++j) delta[j] -= a[j];  // modulo 2^64, exact sums
      it = pairs_.emplace(key, delta).first;
    } else {
      ++hits_;
    }
    for (size_t j = 0; j < c.size(); ++j) c[j] += it->second[j];
  }
}

}  // namespace nasa::cycles
