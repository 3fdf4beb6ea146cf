// Backend "ref" of the board's configuration (Mcu = 1): the board's cycle-exact host model
// (nasa::mcu::System: the ISS running the firmware, with rtl/nasa_mcu.sv's memory map, dot unit
// and timing) behind the Device interface. Its results are the firmware's, which the cosim
// suites hold bit for bit to the reference model; its cycles are the board's.
#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "nasa/backend.h"
#include "nasa/mcu_system.h"

namespace nasa::mcu {
namespace {

class BoardModelDevice final : public device::HostMemoryDevice {
 public:
  BoardModelDevice(const hw::Config& cfg, uint64_t memory_bytes)
      // (the memory holds the host page at the top of the address space)
      : HostMemoryDevice(mcu::memory_bytes(cfg, memory_bytes)),
        cfg_(cfg),
        sys_(cfg, mem_, cycles::default_dram(cfg)) {}

  std::string name() const override { return "ref"; }
  const hw::Config& config() const override { return cfg_; }
  void write_csr(uint32_t addr, uint32_t value) override { sys_.write_csr(addr, value); }
  uint32_t read_csr(uint32_t addr) override { return sys_.read_csr(addr); }

  void start() override {
    sys_.write_csr(static_cast<uint32_t>(hw::Csr::Ctrl), hw::kCtrlClear);
    sys_.write_csr(static_cast<uint32_t>(hw::Csr::Ctrl), hw::kCtrlStart);
  }

  device::WaitResult wait(uint64_t timeout_cycles) override {
    device::WaitResult w;
    if (sys_.busy()) {
      const RunInfo r = sys_.run(timeout_cycles);
      w.timeout = !r.done;
    }
    const auto csr = [&](hw::Csr c) { return sys_.read_csr(static_cast<uint32_t>(c)); };
    w.done = (csr(hw::Csr::Status) & hw::kStatusDone) != 0;
    w.err = static_cast<hw::Err>(csr(hw::Csr::ErrCode));
    w.err_index = csr(hw::Csr::ErrIndex);
    w.layers_done = csr(hw::Csr::LayersDone);
    return w;
  }

 private:
  hw::Config cfg_;
  System sys_;
};

const device::BackendRegistrar kBoardModel(
    {"ref", "the board's cycle-exact model (firmware on the ISS, nasa::mcu::System)",
     [](const hw::Config& c) { return c.mcu == 1; },
     [](const hw::Config& c, uint64_t m, const device::BackendOptions&) {
       return std::make_unique<BoardModelDevice>(c, m);
     }});

}  // namespace
}  // namespace nasa::mcu
