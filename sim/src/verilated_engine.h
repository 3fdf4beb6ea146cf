// Internal to sim/src: EngineSim over one Verilated model class (Vnasa_top_<cfg>).
#pragma once

#include <fmt/format.h>
#include <verilated.h>
#include <verilated_fst_c.h>
#include <verilated_syms.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "nasa/device.h"
#include "nasa/mcu_page.h"
#include "nasa/sim/bus.h"
#include "nasa/sim/context.h"
#include "nasa/sim/dram.h"
#include "nasa/sim/engine_sim.h"
#include "nasa/sim/fst.h"
#include "nasa/sim/port_bytes.h"
#include "nasa/sim/x_seed.h"

namespace nasa::sim::detail {

template <class Model>
class VerilatedEngine final : public EngineSim {
 public:
  VerilatedEngine(const hw::Config& cfg, size_t memory_bytes, const cycles::DramTiming& timing)
      : cfg_(cfg),
        ctx_(make_context()),
        dram_(cfg.mem_bytes, cfg.burst_max, timing),
        wbuf_(cfg.mem_bytes) {
    // the port structs as nasa_pkg declares them (sim/include/nasa/sim/bus.h reads their fields)
    static_assert(sizeof(decltype(Model::mem_req_o)) == (bus::MemReqL::width + 31) / 32 * 4,
                  "mem_req_t of the model differs from hw_spec.h kMemReq: rebuild the models");
    static_assert(sizeof(decltype(Model::mem_rsp_i)) == (bus::MemRspL::width + 31) / 32 * 4,
                  "mem_rsp_t of the model differs from hw_spec.h kMemRsp: rebuild the models");
    ctx_->traceEverOn(true);
    ctx_->fatalOnError(false);
    apply_x_seed(*ctx_);
    top_ = std::make_unique<Model>(ctx_.get(), "nasa_top");
    dram_.memory().assign(std::max<size_t>(memory_bytes, min_memory()), 0);
    data_bytes_ = memory_bytes;
    if (cfg_.mcu) {  // (its own accesses of the host page and its RAM are not stray)
      dram_.set_private(cfg_.mcu_page(), min_memory());
    }
    if (const char* path = std::getenv("NASA_FST"); path != nullptr && *path != '\0') {
      trace(path);
    }
    reset();
    check_identity();
  }

  ~VerilatedEngine() override {
    // Verilator 5.006: a model's assertion scopes unregister from the thread's *current* context
    // when it is destroyed; if that context is already gone the process deadlocks (see
    // nasa/sim/vbench.h). Make ours current, destroy the model, and leave none dangling.
    make_current(ctx_.get());
    if (fst_) fst_->close();
    top_->final();
    fst_.reset();
    top_.reset();
    make_current(nullptr);
  }

  const hw::Config& config() const override { return cfg_; }
  // (the board's controller: without its host page when that is past what the caller asked for)
  std::span<uint8_t> memory() override { return std::span(dram_.memory()).first(data_bytes_); }
  void load_memory(std::span<const uint8_t> image) override {
    auto& mem = dram_.memory();
    data_bytes_ = image.size();
    if (!cfg_.mcu) {
      mem.assign(image.begin(), image.end());
      return;
    }
    // the board's controller: the host page and the firmware's RAM are its own, not the image's
    const size_t pg = cfg_.mcu_page(), n = min_memory() - pg;
    std::vector<uint8_t> page(mem.begin() + static_cast<std::ptrdiff_t>(pg),
                              mem.begin() + static_cast<std::ptrdiff_t>(pg + n));
    mem.assign(image.begin(), image.end());
    if (mem.size() < min_memory()) mem.resize(min_memory(), 0);
    std::copy(page.begin(), page.end(), mem.begin() + static_cast<std::ptrdiff_t>(pg));
  }
  const Dram& dram() const override { return dram_; }
  uint64_t cycle() const override { return cycle_; }

  void reset() override {
    top_->rst_ni = 0;
    bus::CsrReq{}.put(top_->csr_req_i);
    bus::put_mem_rsp(top_->mem_rsp_i, false, false, {});
    top_->clk_i = 0;
    top_->eval();
    dump();
    dram_.reset();
    held_valid_ = false;
    for (int i = 0; i < 4; ++i) tick();
    top_->rst_ni = 1;
    dram_.reset();
    tick();
    // a controller (Mcu) writes its identification CSRs when its firmware boots: wait for it
    if (cfg_.mcu) {
      for (int i = 0; i < 100000 && csr_read(static_cast<uint32_t>(hw::Csr::Magic)) != hw::kMagic;
           ++i) {
        tick();
      }
    }
  }

  void tick() override {
    // (an $error raises the error flag of the thread's current context: make it ours)
    make_current(ctx_.get());
    // Inputs of this cycle: the DRAM model's registered outputs and whatever CSR request the
    // caller set. Settle the low phase, sample the handshakes, then the rising edge.
    const bool rsp_valid = dram_.rsp_valid();
    bus::put_mem_rsp(top_->mem_rsp_i, dram_.req_ready(), rsp_valid,
                     rsp_valid ? dram_.rsp_data() : std::span<const uint8_t>{});
    top_->clk_i = 0;
    top_->eval();
    dump();

    MemRequest req;
    const bus::MemReq port = bus::MemReq::get(top_->mem_req_o);
    const bool req_valid = port.valid && top_->rst_ni;
    if (req_valid) {
      req.write = port.we;
      req.addr = port.addr;
      req.beats = port.len + 1;
      if (req.write) {
        bus::MemReq::wdata(top_->mem_req_o, wbuf_);
        req.wdata = wbuf_;
        req.wstrb = bus::MemReq::wstrb(top_->mem_req_o, cfg_.mem_bytes);
      }
    }
    const bool rsp_ready = port.rsp_ready && top_->rst_ni;
    check_held(req_valid, req);
    // layer completions of a run, by busy cycle (the cycle model's clock: cycle 0 is the first)
    if (recording_) {
      if (top_->layer_end_o) layer_ends_.push_back(busy_cycles_);
      if (top_->busy_o) ++busy_cycles_;
    }

    top_->clk_i = 1;
    top_->eval();
    dump();
    const bool accepted = dram_.clock(req_valid ? &req : nullptr, rsp_ready);
    if (req_valid && !accepted) hold(req);
    ++cycle_;
    if (ctx_->gotError()) {
      throw std::runtime_error(
          fmt::format("Verilated model stopped with an error at cycle {}", cycle_));
    }
  }

  // The board's controller (Mcu): the host page's CSRs in its memory (nasa/mcu_page.h), the
  // others through the port.
  void csr_write(uint32_t addr, uint32_t value) override {
    if (cfg_.mcu && !device::McuPage::live(addr)) {
      page_.write(page_port_, addr, value, top_->busy_o != 0);
      return;
    }
    port_write(addr, value);
  }
  uint32_t csr_read(uint32_t addr) override {
    if (cfg_.mcu && !device::McuPage::live(addr)) return page_.read(page_port_, addr);
    return port_read(addr);
  }

  void port_write(uint32_t addr, uint32_t value) {
    bus::CsrReq{.valid = true, .we = true, .addr = addr & 0xFFFu, .wdata = value}.put(
        top_->csr_req_i);
    tick();
    bus::CsrReq{}.put(top_->csr_req_i);
  }

  uint32_t port_read(uint32_t addr) {
    bus::CsrReq{.valid = true, .addr = addr & 0xFFFu}.put(top_->csr_req_i);
    tick();
    bus::CsrReq{}.put(top_->csr_req_i);
    const bus::CsrRsp rsp = bus::CsrRsp::get(top_->csr_rsp_o);
    if (!rsp.valid) {
      throw std::runtime_error(fmt::format(
          "CSR read of {:#05x}: csr_rsp_o.valid was not set the cycle after the request", addr));
    }
    return rsp.rdata;
  }

  uint64_t counter(hw::Counter id) override {
    const uint32_t addr =
        static_cast<uint32_t>(hw::Csr::CounterBase) + 8u * static_cast<uint32_t>(id);
    const uint64_t lo = csr_read(addr);
    const uint64_t hi = csr_read(addr + 4);
    return lo | (hi << 32);
  }

  RunStatus run(uint32_t desc_addr, uint32_t desc_count, uint32_t win_base, uint32_t win_limit,
                uint64_t max_cycles, uint32_t scratch_base) override {
    csr_write(static_cast<uint32_t>(hw::Csr::Ctrl), hw::kCtrlClear);
    csr_write(static_cast<uint32_t>(hw::Csr::DescAddr), desc_addr);
    csr_write(static_cast<uint32_t>(hw::Csr::DescCount), desc_count);
    csr_write(static_cast<uint32_t>(hw::Csr::WinBase), win_base);
    csr_write(static_cast<uint32_t>(hw::Csr::WinLimit), win_limit);
    csr_write(static_cast<uint32_t>(hw::Csr::ScratchBase), scratch_base);
    return run_started(hw::kCtrlStart, win_base, win_limit, max_cycles);
  }

  void load_scratch(uint32_t scratch_base) override { copy_scratch(scratch_base, true); }
  void store_scratch(uint32_t scratch_base) override { copy_scratch(scratch_base, false); }

  RunStatus run_batch(uint64_t max_cycles) override {
    csr_write(static_cast<uint32_t>(hw::Csr::Ctrl), hw::kCtrlClear);
    return run_started(hw::kCtrlBatch, csr_read(static_cast<uint32_t>(hw::Csr::WinBase)),
                       csr_read(static_cast<uint32_t>(hw::Csr::WinLimit)), max_cycles);
  }

 private:
  RunStatus run_started(uint32_t ctrl, uint32_t win_base, uint32_t win_limit, uint64_t max_cycles) {
    dram_.set_window(win_base, win_limit);
    const uint64_t rd0 = dram_.bytes_read(), wr0 = dram_.bytes_written();
    const uint64_t srd0 = dram_.stray_read_beats(), swr0 = dram_.stray_write_bytes();
    protocol_errors_ = 0;
    first_protocol_error_.clear();
    csr_write(static_cast<uint32_t>(hw::Csr::Ctrl), ctrl);
    const uint64_t start = cycle_;
    run_start_ = start;
    layer_ends_.clear();
    busy_cycles_ = 0;
    recording_ = true;
    RunStatus st;
    while (!(top_->done_o || top_->error_o)) {
      if (cycle_ - start >= max_cycles) {
        st.timeout = true;
        break;
      }
      tick();
      if (!poll_.empty() && (cycle_ - start) % 2 == 0 && !(top_->done_o || top_->error_o)) {
        csr_read(poll_[poll_next_++ % poll_.size()]);
      }
      if (progress_ && (cycle_ - start) % kProgressCycles == 0) {
        progress_(cycle_ - start, csr_read(static_cast<uint32_t>(hw::Csr::LayersDone)));
      }
    }
    st.cycles = cycle_ - start;
    st.done = !st.timeout;
    recording_ = false;
    // (the board's controller: what its firmware moves after FINISH, on its way back to wait for
    // the next run, is its own, not the run's: its counters stop at FINISH too)
    const uint64_t rd_end = dram_.bytes_read(), wr_end = dram_.bytes_written();
    st.layer_ends = layer_ends_;
    // Let in-flight traffic finish so nothing leaks into the next run; writes issued here are
    // still applied to memory, so the caller's comparison sees them.
    const uint64_t drain_limit = cycle_ + 64 + 4 * uint64_t{dram_.timing().latency} +
                                 uint64_t{cfg_.burst_max} * 16 * cfg_.mem_bytes;
    int quiet = 0;
    while (cycle_ < drain_limit && quiet < 8) {
      tick();
      quiet = dram_.idle() && !bus::MemReq::get(top_->mem_req_o).valid ? quiet + 1 : 0;
    }
    st.drained = quiet >= 8;
    st.status = csr_read(static_cast<uint32_t>(hw::Csr::Status));
    st.err_code = csr_read(static_cast<uint32_t>(hw::Csr::ErrCode));
    st.err_index = csr_read(static_cast<uint32_t>(hw::Csr::ErrIndex));
    st.layers_done = csr_read(static_cast<uint32_t>(hw::Csr::LayersDone));
    st.dram_bytes_read = (cfg_.mcu ? rd_end : dram_.bytes_read()) - rd0;
    st.dram_bytes_written = (cfg_.mcu ? wr_end : dram_.bytes_written()) - wr0;
    st.stray_read_beats = dram_.stray_read_beats() - srd0;
    st.stray_write_bytes = dram_.stray_write_bytes() - swr0;
    st.first_stray_addr = dram_.first_stray_addr();
    st.protocol_errors = protocol_errors_;
    st.first_protocol_error = first_protocol_error_;
    return st;
  }

 public:
  void set_progress(ProgressFn fn) override { progress_ = std::move(fn); }
  void set_host_poll(std::vector<uint32_t> csrs) override {
    poll_ = std::move(csrs);
    poll_next_ = 0;
  }

  void trace(const std::string& path) override {
    if (fst_) {
      fst_->close();
      fst_.reset();
    }
    if (path.empty()) return;
    fst_ = open_fst(*top_, path);
  }

 private:
  // The scratch's two banks (nasa_scratch even_q / odd_q: word 2i and 2i+1 of the window at
  // entry i, each entry MemBytes bytes, byte b of the word at byte b), found by scope name.
  void copy_scratch(uint32_t scratch_base, bool into) {
    const uint64_t lo = cfg_.scratch_window(scratch_base);
    if (lo == 0) return;
    if (banks_[0] == nullptr) {
      for (const auto& [name, scope] : *ctx_->scopeNameMap()) {
        if (!std::string_view(name).ends_with(".u_engine.g_scratch.u_scratch")) continue;
        for (int b = 0; b < 2; ++b) {
          const VerilatedVar* v = scope->varFind(b == 0 ? "even_q" : "odd_q");
          if (v != nullptr) banks_[b] = static_cast<uint8_t*>(v->datap());
        }
      }
      if (banks_[0] == nullptr || banks_[1] == nullptr) {
        throw std::runtime_error("EngineSim: the Verilated model has no public scratch banks");
      }
    }
    auto& mem = dram_.memory();
    const uint64_t mb = cfg_.mem_bytes;
    const uint64_t end = std::min<uint64_t>(lo + cfg_.scratch_bytes, mem.size());
    for (uint64_t a = lo; a < end; a += mb) {
      const uint64_t w = (a - lo) / mb, n = std::min<uint64_t>(mb, end - a);
      uint8_t* e = banks_[w & 1] + (w >> 1) * mb;
      if (into) {
        std::memcpy(e, mem.data() + a, n);
      } else {
        std::memcpy(mem.data() + a, e, n);
      }
    }
  }

  // One waveform sample per evaluation, half a clock period apart.
  void dump() {
    if (fst_) fst_->dump(ctx_->time());
    ctx_->timeInc(1);
  }

  // valid/ready: a request not yet accepted stays valid and unchanged.
  void hold(const MemRequest& req) {
    held_ = req;
    held_wdata_.assign(req.wdata.begin(), req.wdata.end());
    held_valid_ = true;
  }
  void check_held(bool valid, const MemRequest& req) {
    if (!held_valid_) return;
    held_valid_ = false;
    const bool same =
        valid && req.write == held_.write && req.addr == held_.addr &&
        (req.write ? req.wstrb == held_.wstrb && std::equal(req.wdata.begin(), req.wdata.end(),
                                                            held_wdata_.begin(), held_wdata_.end())
                   : req.beats == held_.beats);
    if (!same && protocol_errors_++ == 0) {
      first_protocol_error_ = fmt::format(
          "cycle {} of the run: a {} request (addr {:#x}, len {}) waiting for ready was {}",
          cycle_ - run_start_, held_.write ? "write" : "read", held_.addr, held_.beats - 1,
          valid ? fmt::format("replaced by a {} request (addr {:#x}, len {}) before it was "
                              "accepted",
                              req.write ? "write" : "read", req.addr, req.beats - 1)
                : std::string("withdrawn"));
    }
  }

  // The model must be the configuration it was built for (else: rebuild it from hw_spec.h).
  void check_identity() {
    device::check_identity([this](uint32_t a) { return csr_read(a); }, cfg_,
                           "EngineSim (the Verilated model)");
  }

  // the board controller's memory holds its host page at the top of the address space
  size_t min_memory() const { return cfg_.mcu ? size_t{1} << cfg_.addr_bits : 0; }

  hw::Config cfg_;
  size_t data_bytes_ = 0;  // memory() (the caller's size)
  device::McuPage page_{cfg_};
  device::McuPage::Port page_port_{
      .read_word =
          [this](uint32_t a) {
            const uint8_t* b = dram_.memory().data() + a;
            return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 |
                   uint32_t{b[3]} << 24;
          },
      .write_word =
          [this](uint32_t a, uint32_t v) {
            uint8_t* b = dram_.memory().data() + a;
            for (int i = 0; i < 4; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
          },
      .read_csr = [this](uint32_t a) { return port_read(a); },
      .write_csr = [this](uint32_t a, uint32_t v) { port_write(a, v); },
  };
  static constexpr uint64_t kProgressCycles = uint64_t{1} << 22;
  ProgressFn progress_;
  std::vector<uint32_t> poll_;  // set_host_poll
  size_t poll_next_ = 0;
  std::unique_ptr<VerilatedContext> ctx_;  // declared before top_: outlives it
  std::unique_ptr<Model> top_;
  std::unique_ptr<VerilatedFstC> fst_;
  Dram dram_;
  std::vector<uint8_t> wbuf_;
  uint64_t cycle_ = 0;
  MemRequest held_;
  std::vector<uint8_t> held_wdata_;
  bool held_valid_ = false;
  uint64_t protocol_errors_ = 0, run_start_ = 0;
  bool recording_ = false;
  uint64_t busy_cycles_ = 0;
  std::vector<uint64_t> layer_ends_;
  std::string first_protocol_error_;
  std::array<uint8_t*, 2> banks_{};
};

}  // namespace nasa::sim::detail
