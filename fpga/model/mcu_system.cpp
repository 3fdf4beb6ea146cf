// rtl/nasa_mcu.sv on the host: every register, table and timing rule below names the RTL signal
// it mirrors; keep the two in step (the fpga cosim compares the counters and every layer's
// completion cycle).
#include "nasa/mcu_system.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>
#include <vector>

#include "nasa/desc.h"
#include "nasa/mac_array_model.h"
#include "nasa/refmodel.h"

namespace nasa::mcu {
namespace {

using namespace hw::mcu;  // the memory map (hw_spec.h NASA_MCU_MAP)
constexpr uint32_t kGoLoad = 0x00002503;  // lw a0, 0(zero): crt0.S's wait for a run

}  // namespace

System::System(const hw::Config& cfg, std::span<uint8_t> mem, const cycles::DramTiming& dram,
               std::span<const uint32_t> rom, Core core, Unit unit)
    : cfg_(cfg),
      mem_(mem),
      dram_(dram, cfg.mem_bytes),
      iss_(rom, *this, core),
      page_(cfg_),
      rom_(rom),
      unit_(unit) {
  if (cfg.mem_bytes != 8) {
    throw std::invalid_argument("the controller's memory port is one 8-byte row wide");
  }
  if (mem.size() < uint64_t{1} << cfg.addr_bits) {
    throw std::invalid_argument(
        "controller model: main memory must hold the address space, with the host page and the "
        "firmware's RAM at its top");
  }
  page_port_ = {
      .read_word =
          [this](uint32_t a) {
            return static_cast<uint32_t>(main_row(a & ~7u) >> (a & 4 ? 32 : 0));
          },
      .write_word = [this](uint32_t a, uint32_t v) { main_write(a, v, 0xF); },
      .read_csr = [this](uint32_t a) { return port_read(a); },
      .write_csr = [this](uint32_t a, uint32_t v) { port_write(a, v); },
  };
  boot();
}

// The firmware from its reset entry to its wait for a run (RTL: after reset, and after a trap).
void System::boot() {
  iss_.reset();
  for (int i = 0; i < 1000000; ++i) {
    const uint32_t at = (iss_.pc() - kRomBase) >> 2;
    if (at < rom_.size() && rom_[at] == kGoLoad) return;
    if (!iss_.step()) break;
  }
  throw std::runtime_error("controller model: the firmware did not reach its wait for a run");
}

void System::write_csr(uint32_t addr, uint32_t value) {
  page_.write(page_port_, addr, value, busy_);
}

uint32_t System::read_csr(uint32_t addr) { return page_.read(page_port_, addr); }

// rtl/nasa_mcu.sv's CSR port: CTRL (CLEAR; START and BATCH when idle), STATUS, ERR_CODE and the
// live counters
void System::port_write(uint32_t addr, uint32_t value) {
  if (addr != static_cast<uint32_t>(hw::Csr::Ctrl)) return;
  if (value & hw::kCtrlClear) {
    done_ = error_ = false;
    err_code_ = 0;
  }
  if (!busy_ && (value & (hw::kCtrlStart | hw::kCtrlBatch))) {
    busy_ = true;
    done_ = error_ = false;
    err_code_ = 0;
    go_ = (value & hw::kCtrlBatch) ? 2 : 1;
    cycles_ = rd_bytes_ = wr_bytes_ = 0;
  }
}

uint32_t System::port_read(uint32_t addr) const {
  using hw::Csr;
  if (!device::McuPage::live(addr)) return 0;
  const uint32_t base = static_cast<uint32_t>(Csr::CounterBase);
  if (addr >= base) {
    const uint64_t c = counter(static_cast<hw::Counter>((addr - base) / 8));
    return static_cast<uint32_t>((addr - base) % 8 == 0 ? c : c >> 32);
  }
  switch (static_cast<Csr>(addr)) {
    case Csr::Status:
      return (busy_ ? hw::kStatusBusy : 0) | (done_ ? hw::kStatusDone : 0) |
             (error_ ? hw::kStatusError : 0);
    case Csr::ErrCode:
      return err_code_;
    default:
      return 0;
  }
}

uint64_t System::counter(hw::Counter c) const {
  // (the controller's counters are kCounterBits wide: rtl/nasa_mcu.sv)
  constexpr uint64_t mask = (uint64_t{1} << kCounterBits) - 1;
  switch (c) {
    case hw::Counter::Cycles:
      return cycles_ & mask;
    case hw::Counter::DramRdBytes:
      return rd_bytes_ & mask;
    case hw::Counter::DramWrBytes:
      return wr_bytes_ & mask;
    case hw::Counter::Macs:  // (the firmware's, in the host page)
      return main_row(cfg_.mcu_page() + 4 * kPMacs);
    default:
      return 0;
  }
}

void System::finish(uint32_t code) {
  busy_ = false;
  done_ = true;
  error_ = code != 0;
  err_code_ = code;
  go_ = 0;
  finished_ = true;
}

RunInfo System::run(uint64_t max_cycles) {
  RunInfo info;
  if (!busy_) return info;
  finished_ = false;
  run_origin_ = ~uint64_t{0};
  layer_ends_.clear();
  compute_starts_.clear();
  unit_cycles_.clear();
  unit_busy_ = 0;
  // (the core waits at its GO read; the read completes at once and the run's cycles count from
  // there)
  while (!finished_ && !iss_.trapped()) {
    iss_.step();
    if (run_origin_ != ~uint64_t{0} && iss_.cycle() - run_origin_ > max_cycles) break;
  }
  if (!finished_ && iss_.trapped()) {
    // RTL: the trap cycle ends the run with Fault; the core starts again from its reset entry
    cycles_ = iss_.cycle() - run_origin_;
    finish(static_cast<uint32_t>(hw::Err::Fault));
    unit_idle_ = 0;
    boot();
  }
  info.done = finished_;
  info.cycles = cycles_;
  info.layer_ends = layer_ends_;
  info.compute_starts = compute_starts_;
  info.unit_cycles = unit_cycles_;
  return info;
}

RunInfo System::run_program(uint32_t desc_addr, uint32_t desc_count, uint32_t win_base,
                            uint32_t win_limit, uint64_t max_cycles) {
  const auto csr = [this](hw::Csr c, uint32_t v) { write_csr(static_cast<uint32_t>(c), v); };
  csr(hw::Csr::DescAddr, desc_addr);
  csr(hw::Csr::DescCount, desc_count);
  csr(hw::Csr::WinBase, win_base);
  csr(hw::Csr::WinLimit, win_limit);
  csr(hw::Csr::Ctrl, hw::kCtrlStart);
  return run(max_cycles);
}

uint64_t System::main_row(uint32_t addr) const {
  if (uint64_t{addr} + 8 > mem_.size()) {
    throw std::out_of_range("controller model: main memory read past the memory image");
  }
  uint64_t row = 0;
  for (int i = 7; i >= 0; --i) row = row << 8 | mem_[addr + static_cast<uint32_t>(i)];
  return row;
}

void System::main_write(uint32_t addr, uint32_t data, uint32_t strb) {
  if (uint64_t{addr} + 4 > mem_.size()) {
    throw std::out_of_range("controller model: main memory write past the memory image");
  }
  for (int i = 0; i < 4; ++i) {
    if ((strb >> i) & 1) mem_[addr + i] = static_cast<uint8_t>(data >> (8 * i));
  }
}

void System::dram_until(uint64_t cyc) {
  for (; dram_cyc_ < cyc; ++dram_cyc_) dram_.clock(dram_cyc_, false, false, 0, false);
}

// The first cycle from `cyc` in which the DRAM model takes a request presented from `cyc` on.
uint64_t System::accept(uint64_t cyc) {
  dram_until(cyc);
  uint64_t c = cyc;
  while (!dram_.req_ready()) dram_.clock(c++, false, false, 0, false);
  return c;
}

uint64_t System::access(uint64_t cyc, bool write, uint32_t addr, uint32_t wdata, uint32_t strb,
                        uint32_t& rdata) {
  const uint32_t region = addr >> 28;
  rdata = 0;
  if (region == kRegionGo) {  // GO: the run starts when this read completes
    rdata = go_;
    run_origin_ = cyc;
    return cyc;
  }
  // main memory through the port (RTL ld_wait_q), once the unit is idle
  if (region == kRegionMain) {
    const uint32_t a = addr & 0x0FFFFFFFu;
    cyc = std::max(cyc, unit_idle_);
    if (!write) {  // the word is the row's half at bit 2 of its address
      uint64_t row = 0;
      const uint64_t c = fetch(cyc, a, row);
      rdata = static_cast<uint32_t>(row >> (a & 4u ? 32 : 0));
      return c;
    }
    const uint64_t c = accept(cyc);  // a store completes when accepted
    main_write(a, wdata, strb);
    dram_.clock(c, false, false, 0, true);
    dram_cyc_ = c + 1;
    wr_bytes_ += static_cast<uint64_t>(std::popcount(strb & 0xFu));
    return c;
  }
  const uint32_t widx = (addr >> 2) & 0x3FF;
  if (region == kRegionMmio) {  // registers and tables
    const uint32_t page = (addr >> 12) & 0xF;
    if (unit_ == Unit::Dot && page == kPageDot)
      return dot_access(cyc, write, widx & 7, wdata, rdata);
    if (unit_ == Unit::Array && page == kPageArray)
      return array_access(cyc, write, widx & 7, wdata, rdata);
    if (write && page == kPageCtrl) {
      switch (widx & 0xF) {
        case kCFinish:
          cycles_ = cyc - run_origin_;
          finish(wdata & 0xFF);
          break;
        case kCLayerEnd:
          layer_ends_.push_back(cyc - run_origin_);
          if (compute_starts_.size() < layer_ends_.size())
            compute_starts_.push_back(cyc - run_origin_);
          unit_cycles_.push_back(unit_busy_);
          unit_busy_ = 0;
          break;
        default: break;
      }
    }
    return write ? cyc : cyc + 1;  // (the control registers are write only)
  }
  return write ? cyc : cyc + 1;  // nothing there: reads give 0
}

// One row read over the port presented in cycle `cyc` (the 8-byte row holding `addr`): accepted
// when the DRAM model is ready, data in the cycle returned (RTL: the core's ld_wait_q, the dot
// unit's DReq/DWait).
uint64_t System::fetch(uint64_t cyc, uint32_t addr, uint64_t& row) {
  uint64_t c = accept(cyc);
  row = main_row(addr & ~7u);
  dram_.clock(c++, false, true, 1, false);
  while (!dram_.rsp_valid(c)) dram_.clock(c++, false, false, 0, false);
  dram_.clock(c, true, false, 0, false);
  dram_cyc_ = c + 1;
  rd_bytes_ += cfg_.mem_bytes;
  return c;
}

// rtl/nasa_mcu_dot.sv: register accesses wait while the unit runs (a write completes in its
// first free cycle, a read in the cycle after); the ACC write starts it.
uint64_t System::dot_access(uint64_t cyc, bool write, uint32_t reg, uint32_t wdata,
                            uint32_t& rdata) {
  const uint64_t c = std::max(cyc, unit_idle_);
  if (!write) {
    rdata = reg == kDAcc ? dot_acc_ : 0;
    return c + 1;
  }
  switch (reg) {
    case kDX: dot_x_ = wdata; break;
    case kDW: dot_w_ = wdata; break;
    case kDShape: dot_shape_ = wdata; break;
    case kDXstr: dot_xstr_ = wdata; break;
    case kDWstr: dot_wstr_ = wdata; break;
    case kDAcc:
      if (compute_starts_.size() == layer_ends_.size()) compute_starts_.push_back(c - run_origin_);
      dot_run(c, wdata);
      break;
    default: break;
  }
  return c;
}

// The unit's run after the ACC write in cycle `start`: each cycle from start + 1 takes an
// element when both operand rows are cached, else fetches the missing one (x first); the
// result is there, and the unit idle, three cycles after the last element.
void System::dot_run(uint64_t start, uint32_t acc) {
  const uint32_t amask = cfg_.addr_bits >= 32 ? ~0u : (1u << cfg_.addr_bits) - 1;
  const uint32_t n = dot_shape_ & 0xFFFF, runs = (dot_shape_ >> 16) & 0xFF,
                 mode = (dot_shape_ >> 24) & 3;
  const uint32_t xi = dot_xstr_ & 0xFFFF, xo = dot_xstr_ >> 16, wi = dot_wstr_ & 0xFFFF,
                 wo = dot_wstr_ >> 16;
  uint64_t t = start + 1;
  uint64_t last = start;  // (zero elements: idle at start + 3)
  bool xv = false, wv = false;
  uint32_t xt = 0, wt = 0;
  uint64_t xw = 0, ww = 0;
  uint32_t xrun = dot_x_ & amask, wrun = dot_w_ & amask;
  for (uint32_t j = 0; j < runs && n != 0; ++j) {
    uint32_t xa = xrun, wa = wrun;
    for (uint32_t i = 0; i < n;) {
      if (!xv || xt != xa >> 3) {
        t = fetch(t, xa, xw) + 1;
        xt = xa >> 3;
        xv = true;
        continue;
      }
      if (mode == kDotMac && (!wv || wt != wa >> 3)) {
        t = fetch(t, wa, ww) + 1;
        wt = wa >> 3;
        wv = true;
        continue;
      }
      const auto x = static_cast<int32_t>(static_cast<int8_t>(xw >> (8 * (xa & 7))));
      const auto w = static_cast<int32_t>(static_cast<int8_t>(ww >> (8 * (wa & 7))));
      if (mode == kDotMac) acc += static_cast<uint32_t>(x * w);
      else if (mode == kDotSum) acc += static_cast<uint32_t>(x);
      else if (x > static_cast<int32_t>(acc)) acc = static_cast<uint32_t>(x);
      last = t++;
      ++i;
      xa = (xa + xi) & amask;
      wa = (wa + wi) & amask;
    }
    // (the next run starts XO, WO after this one's start; the RTL moves the run registers)
    xrun = (xrun + xo) & amask;
    wrun = (wrun + wo) & amask;
  }
  // the unit's X and W hold the next run's start afterwards
  dot_x_ = xrun;
  dot_w_ = wrun;
  dot_acc_ = acc;
  unit_idle_ = (n == 0 || runs == 0 ? start : last) + 3;
  unit_busy_ += unit_idle_ - start;
}

// rtl/nasa_mcu_array_page.sv: page accesses wait while the array runs (a write completes in its
// first free cycle, a read in the cycle after, giving the error bits: ArBadRec if the last layer
// stopped at a bad record, never ArFault: the board's memory takes every write); the ARun write
// starts the layer.
uint64_t System::array_access(uint64_t cyc, bool write, uint32_t reg, uint32_t wdata,
                              uint32_t& rdata) {
  const uint64_t c = std::max(cyc, unit_idle_);
  if (!write) {
    rdata = arr_bad_ ? 1u << kArBadRec : 0u;
    return c + 1;
  }
  arr_[reg] = wdata;
  if (reg == kARun) {
    if (compute_starts_.size() == layer_ends_.size()) compute_starts_.push_back(c - run_origin_);
    array_run(c);
  }
  return c;
}

// The array's layer after the ARun write in cycle `start` (the page's start_q the cycle after,
// rtl/nasa_mcu_array_page.sv, busy with it): its bytes are the reference model's Conv (1x1, or
// the stem's from its tap-major weights), DwConv or Add, its cycles nasa/mac_array_model.h's,
// from start + 2; the core's next page or memory access waits until it ends.
void System::array_run(uint64_t start) {
  const uint32_t amask = cfg_.addr_bits >= 32 ? ~0u : (1u << cfg_.addr_bits) - 1;
  const uint32_t geom = arr_[kAGeom], run = arr_[kARun];
  const auto field = [](uint32_t word, uint32_t lsb, uint32_t bits) {
    return (word >> lsb) & ((1u << bits) - 1);
  };
  ArrayLayer l;
  l.out = arr_[kAOut] & amask;
  l.pix = arr_[kAPix] & 0xFFFF;
  l.cin = field(run, kArCin, 9);
  l.cout = field(run, kArCout, 9);
  l.add = field(run, kArAdd, 1) != 0;
  l.dw = !l.add && field(geom, kAgDw, 1) != 0;
  l.stem = !l.add && !l.dw && field(geom, kAgSt, 1) != 0;
  if (l.dw || l.stem) {
    l.h = field(geom, kAgIh, 8);
    l.w = field(geom, kAgIw, 8);
    l.wo = field(geom, kAgOw, 8);
    l.k = field(geom, kAgK, 3);
    l.stride = field(geom, kAgS2, 1) ? 2 : 1;
    l.pad_top = field(geom, kAgPadt, 2);
  }
  // (the input's, weights' and records' addresses are rows: the page's register, the array's
  // counters)
  const uint32_t in = arr_[kAIn] & amask & ~7u, wgt = arr_[kAWgt] & amask & ~7u,
                 prm = arr_[kAPrm] & amask & ~7u;
  // the clamp as an activation (the firmware's set_clamp() gives only these)
  const bool neg = field(run, kArNeg, 1) != 0;
  const uint32_t hi = field(run, kArHi, 8);
  if (hi > 127 || (neg && hi != 127)) {
    throw std::logic_error("controller model: the array's clamp [" +
                           std::to_string(neg ? -128 : 0) + ", " + std::to_string(hi) +
                           "] is no activation's");
  }
  Desc d;
  d.act = static_cast<uint8_t>(neg ? hw::Act::None : hi == 127 ? hw::Act::Relu : hw::Act::Relu6);
  d.q6 = static_cast<uint8_t>(hi);
  d.in_addr = in;
  d.out_addr = l.out;
  d.wgt_addr = wgt;
  d.prm_addr = prm;
  if (l.add) {  // an Add of 1 x P x 1, b at AWgt, the two records' M and S at APrm
    d.op = static_cast<uint8_t>(hw::Op::Add);
    d.h = 1;
    d.w = static_cast<uint16_t>(l.pix);
    d.cin = d.cout = 1;
    d.in2_addr = wgt;
    const uint64_t ra = main_row(prm), rb = main_row(prm + 8);
    d.m = static_cast<uint16_t>(ra >> 32);
    d.s = static_cast<uint8_t>(ra >> 48);
    d.mb = static_cast<uint16_t>(rb >> 32);
    d.sb = static_cast<uint8_t>(rb >> 48);
  } else if (!l.dw && !l.stem) {  // a 1x1 Conv over P pixels
    d.op = static_cast<uint8_t>(hw::Op::Conv);
    d.k = d.stride = 1;
    d.h = 1;
    d.w = static_cast<uint16_t>(l.pix);
    d.cin = static_cast<uint16_t>(l.cin);
    d.cout = static_cast<uint16_t>(l.cout);
  } else {  // the window paths: P / Wo output rows, the page's rows of zeros above
    if (l.wo == 0 || l.pix % l.wo != 0) {
      throw std::logic_error("controller model: the array's window layer has " +
                             std::to_string(l.pix) + " pixels, not rows of " +
                             std::to_string(l.wo));
    }
    d.op = static_cast<uint8_t>(l.dw ? hw::Op::DwConv : hw::Op::Conv);
    d.k = static_cast<uint8_t>(l.k);
    d.stride = static_cast<uint8_t>(l.stride);
    d.h = static_cast<uint16_t>(l.h);
    d.w = static_cast<uint16_t>(l.w);
    d.cin = static_cast<uint16_t>(l.stem ? 1 : l.cin);
    d.cout = static_cast<uint16_t>(l.cout);
    d.out_rows = static_cast<uint16_t>(l.pix / l.wo);
    d.pad_top = static_cast<uint8_t>(l.pad_top);
  }
  // the first record whose S is outside [1, MaxShift] stops the array at its block
  const uint32_t records = l.add ? 2 : l.cout;
  for (uint32_t c = 0; c < records && l.bad == ArrayLayer::kNoBadRecord; ++c) {
    const auto shift = static_cast<uint8_t>(main_row(prm + 8 * c) >> 48);
    if (shift < 1 || shift > hw::kMaxShift) l.bad = c;
  }
  arr_bad_ = l.bad != ArrayLayer::kNoBadRecord;
  if (l.stem || arr_bad_) {
    // past memory: the stem's weights in the reference's OHWI from the array's tap-major
    // blocks; the records, the bad ones' S made valid (the array writes none of their channels)
    const uint32_t ksq = l.k * l.k, ohwi = static_cast<uint32_t>(mem_.size()),
                   recs = ohwi + (l.stem ? ksq * l.cout : 0);
    std::vector<uint8_t> m(recs + (arr_bad_ ? 8 * records : 0));
    std::copy(mem_.begin(), mem_.end(), m.begin());
    if (l.stem) {
      for (uint32_t co = 0; co < l.cout; ++co) {
        for (uint32_t t = 0; t < ksq; ++t) {
          m[ohwi + co * ksq + t] = mem_[(wgt + ((co / 8) * ksq + t) * 8 + co % 8) & amask];
        }
      }
      d.wgt_addr = ohwi;
    }
    if (arr_bad_) {
      for (uint32_t i = 0; i < 8 * records; ++i) m[recs + i] = mem_[(prm + i) & amask];
      for (uint32_t c = l.bad; c < records; ++c) m[recs + 8 * c + 6] = 1;
      d.prm_addr = recs;
      d.s = d.sb = 1;  // (an add's: it writes nothing)
    }
    ref::execute(d, m);
    const uint32_t written = array_channels_written(l);
    for (uint32_t p = 0; p < l.pix && written != 0; ++p) {
      const uint32_t a = l.out + p * l.cout;
      std::copy_n(m.begin() + a, written, mem_.begin() + a);
    }
  } else {
    ref::execute(d, mem_);
  }
  rd_bytes_ += cfg_.mem_bytes * array_reads(l);
  wr_bytes_ += array_write_bytes(l);
  unit_idle_ = start + 2 + array_cycles(l);
  unit_busy_ += unit_idle_ - start;
  array_ += ArrayCounts{1, l.stem, arr_bad_};
}

}  // namespace nasa::mcu
