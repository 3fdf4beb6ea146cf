#include "nasa/device.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include "nasa/backend.h"
#include "nasa/batch_model.h"
#include "nasa/memory_image.h"
#include "nasa/refmodel.h"

namespace nasa::device {

namespace {

// The identification CSRs of a configuration, as the hardware reports them.
std::array<uint32_t, 6> identity_of(const hw::Config& c) {
  return {hw::kMagic, c.hw_shape(), c.hw_mem(), c.in_buf_bytes, c.kred_max, c.hw_batch()};
}

std::string describe(const hw::Config& c) {
  return fmt::format("{}x{} PEs, {}-byte port, {} B input buffer, KredMax {}, {} nodes / {} layers "
                     "/ {} choices",
                     c.rows, c.cols, c.mem_bytes, c.in_buf_bytes, c.kred_max, c.node_cap,
                     c.max_layers, c.max_choices);
}

}  // namespace

void check_identity(const std::function<uint32_t(uint32_t)>& read_csr, const hw::Config& cfg,
                    std::string_view target) {
  using hw::Csr;
  std::array<uint32_t, 6> got{};
  const std::array<Csr, 6> regs = {Csr::Magic,  Csr::HwShape,   Csr::HwMem,
                                   Csr::HwInBuf, Csr::HwKredMax, Csr::HwBatch};
  for (size_t i = 0; i < regs.size(); ++i) got[i] = read_csr(static_cast<uint32_t>(regs[i]));
  if (got == identity_of(cfg)) return;
  if (got[0] != hw::kMagic) {
    throw std::runtime_error(fmt::format(
        "{} target: CSR Magic reads 0x{:08X}, not 0x{:08X} ('NASA'): not a NASA accelerator "
        "(wrong port, or the bitstream is not loaded)",
        target, got[0], hw::kMagic));
  }
  const hw::Config* match = nullptr;
  for (const hw::Config& c : hw::kConfigs) {
    if (got == identity_of(c)) match = &c;
  }
  if (match) {
    throw std::runtime_error(fmt::format(
        "{} target is configuration `{}` ({}), but the host is set up for `{}`: pass --config {}",
        target, match->name, describe(*match), cfg.name, match->name));
  }
  throw std::runtime_error(fmt::format(
      "{} target is none of the known configurations (HwShape 0x{:08X}, HwMem 0x{:08X}, HwInBuf "
      "{}, HwKredMax {}, HwBatch 0x{:08X}); the host is set up for `{}` ({}): host and bitstream "
      "come from different versions",
      target, got[1], got[2], got[3], got[4], got[5], cfg.name, describe(cfg)));
}

void check_identity(Device& d, const hw::Config& cfg) {
  check_identity([&d](uint32_t a) { return d.read_csr(a); }, cfg, d.name());
}

uint64_t Device::counter(hw::Counter id) {
  const uint32_t addr =
      static_cast<uint32_t>(hw::Csr::CounterBase) + 8u * static_cast<uint32_t>(id);
  const uint64_t lo = read_csr(addr);
  const uint64_t hi = read_csr(addr + 4);
  return lo | (hi << 32);
}

WaitResult Device::run(uint32_t desc_addr, uint32_t desc_count, uint32_t win_base,
                       uint32_t win_limit, uint64_t timeout_cycles, uint32_t scratch_base) {
  write_csr(static_cast<uint32_t>(hw::Csr::DescAddr), desc_addr);
  write_csr(static_cast<uint32_t>(hw::Csr::DescCount), desc_count);
  write_csr(static_cast<uint32_t>(hw::Csr::WinBase), win_base);
  write_csr(static_cast<uint32_t>(hw::Csr::WinLimit), win_limit);
  if (config().scratch_bytes != 0) {
    write_csr(static_cast<uint32_t>(hw::Csr::ScratchBase), scratch_base);
  }
  start();
  return wait(timeout_cycles);
}

WaitResult Device::run_batch(uint32_t win_base, uint32_t win_limit, uint64_t timeout_cycles) {
  write_csr(static_cast<uint32_t>(hw::Csr::WinBase), win_base);
  write_csr(static_cast<uint32_t>(hw::Csr::WinLimit), win_limit);
  write_csr(static_cast<uint32_t>(hw::Csr::Ctrl), hw::kCtrlClear);
  write_csr(static_cast<uint32_t>(hw::Csr::Ctrl), hw::kCtrlBatch);
  return wait(timeout_cycles);
}

std::vector<uint32_t> Device::read_table(hw::Table t, uint32_t count) {
  write_csr(static_cast<uint32_t>(hw::Csr::TblAddr), hw::tbl_addr(static_cast<uint32_t>(t), 0));
  std::vector<uint32_t> out(count);
  for (auto& v : out) v = read_csr(static_cast<uint32_t>(hw::Csr::TblData));
  return out;
}

void Device::write_table(hw::Table t, std::span<const uint32_t> values) {
  write_csr(static_cast<uint32_t>(hw::Csr::TblAddr), hw::tbl_addr(static_cast<uint32_t>(t), 0));
  for (uint32_t v : values) write_csr(static_cast<uint32_t>(hw::Csr::TblData), v);
}

void HostMemoryDevice::write_memory(uint64_t addr, std::span<const uint8_t> bytes) {
  check_range(mem_.size(), addr, bytes.size());
  std::copy(bytes.begin(), bytes.end(), mem_.begin() + static_cast<std::ptrdiff_t>(addr));
}

void HostMemoryDevice::read_memory(uint64_t addr, std::span<uint8_t> out) {
  check_range(mem_.size(), addr, out.size());
  std::copy_n(mem_.begin() + static_cast<std::ptrdiff_t>(addr), out.size(), out.begin());
}

namespace {

// CSR semantics of rtl/nasa_csr.sv; the run itself is nasa::ref::run.
class RefDevice final : public HostMemoryDevice {
 public:
  RefDevice(const hw::Config& cfg, uint64_t memory_bytes)
      : HostMemoryDevice(memory_bytes), cfg_(cfg) {}

  std::string name() const override { return "ref"; }
  const hw::Config& config() const override { return cfg_; }

  void write_csr(uint32_t addr, uint32_t value) override {
    if (batch::write_csr(cfg_, regs_, tbl_addr_, addr, value)) return;
    switch (static_cast<hw::Csr>(addr)) {
      case hw::Csr::Ctrl:
        if (value & hw::kCtrlClear) {
          done_ = false;
          result_.err = hw::Err::None;
        }
        if (value & hw::kCtrlBatch) {
          start_batch();
        } else if (value & hw::kCtrlStart) {
          start();
        }
        break;
      case hw::Csr::DescAddr:
        desc_addr_ = value;
        break;
      case hw::Csr::DescCount:
        desc_count_ = value;
        break;
      case hw::Csr::WinBase:
        win_base_ = cfg_.clamp_window(value);
        break;
      case hw::Csr::WinLimit:
        win_limit_ = cfg_.clamp_window(value);
        break;
      case hw::Csr::ScratchBase:
        scratch_base_ = cfg_.scratch_window(value);
        break;
      default:
        break;  // read-only registers ignore writes, as in the RTL
    }
  }

  uint32_t read_csr(uint32_t addr) override {
    if (uint32_t v = 0; batch::read_csr(cfg_, regs_, tables_, tbl_addr_, addr, v)) return v;
    const auto base = static_cast<uint32_t>(hw::Csr::CounterBase);
    if (addr >= base && addr < base + 8u * hw::kNumCounters) {
      const uint64_t v = result_.counters[(addr - base) / 8];
      return static_cast<uint32_t>((addr - base) % 8 == 0 ? v : v >> 32);
    }
    switch (static_cast<hw::Csr>(addr)) {
      case hw::Csr::Status:
        return (done_ ? hw::kStatusDone : 0u) |
               (done_ && result_.err != hw::Err::None ? hw::kStatusError : 0u);
      case hw::Csr::ErrCode:
        return static_cast<uint32_t>(result_.err);
      case hw::Csr::ErrIndex:
        return result_.err_index;
      case hw::Csr::DescAddr:
        return desc_addr_;
      case hw::Csr::DescCount:
        return desc_count_;
      case hw::Csr::WinBase:
        return win_base_;
      case hw::Csr::WinLimit:
        return win_limit_;
      case hw::Csr::ScratchBase:
        return scratch_base_;
      case hw::Csr::HwShape:
        return cfg_.hw_shape();
      case hw::Csr::HwMem:
        return cfg_.hw_mem();
      case hw::Csr::HwInBuf:
        return cfg_.in_buf_bytes;
      case hw::Csr::HwKredMax:
        return cfg_.kred_max;
      case hw::Csr::Magic:
        return hw::kMagic;
      case hw::Csr::LayersDone:
        return result_.layers_done;
      default:
        return 0;
    }
  }

  void check_window() const {
    if (win_limit_ > mem_.size()) {
      throw std::out_of_range(
          fmt::format("ref device: window [{:#x}, {:#x}) extends past the {:#x}-byte memory",
                      win_base_, win_limit_, mem_.size()));
    }
  }

  void start() override {
    check_window();
    result_ = ref::run(mem_, cfg_, desc_addr_, desc_count_, win_base_, win_limit_, scratch_base_);
    done_ = true;
  }

  void start_batch() {
    check_window();
    const batch::RunResult b =
        batch::run(mem_, cfg_, regs_, win_base_, win_limit_, scratch_base_, tables_);
    result_ = ref::RunResult{};
    result_.err = b.err;
    result_.err_index = b.err_index;
    result_.layers_done = b.layers_done;
    result_.counters = b.counters;
    profile_ = b.profile;
    done_ = true;
  }

  std::optional<batch::Profile> batch_profile() const override { return profile_; }

  WaitResult wait(uint64_t /*timeout_cycles*/) override {
    // The reference model runs to completion inside start().
    WaitResult w;
    w.done = done_;
    w.err = result_.err;
    w.err_index = result_.err_index;
    w.layers_done = result_.layers_done;
    return w;
  }

 private:
  hw::Config cfg_;
  uint32_t desc_addr_ = 0, desc_count_ = 0, win_base_ = 0, win_limit_ = 0, scratch_base_ = 0;
  bool done_ = false;
  ref::RunResult result_;
  batch::Regs regs_;
  batch::Tables tables_;
  std::optional<batch::Profile> profile_;  // of the last batch run
  uint32_t tbl_addr_ = 0;
};

}  // namespace

// (registered as backend "ref" of the engine's configurations: nasa/backend.h)
std::unique_ptr<Device> make_engine_ref_device(const hw::Config& cfg, uint64_t memory_bytes) {
  return std::make_unique<RefDevice>(cfg, memory_bytes);
}

std::unique_ptr<Device> make_ref_device(const hw::Config& cfg, uint64_t memory_bytes) {
  return make_device("ref", cfg, memory_bytes);
}

}  // namespace nasa::device
