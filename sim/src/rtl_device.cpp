#include "nasa/sim/rtl_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include "nasa/backend.h"
#include "nasa/memory_image.h"
#include "nasa/sim/engine_sim.h"

namespace nasa::sim {
namespace {

class RtlDevice final : public device::Device {
 public:
  RtlDevice(const hw::Config& cfg, uint64_t memory_bytes, const cycles::DramTiming& dram,
            std::vector<uint32_t> host_poll)
      : engine_(EngineSim::create(cfg, memory_bytes, dram)) {
    engine_->set_host_poll(std::move(host_poll));
  }

  std::string name() const override { return "rtl"; }
  const hw::Config& config() const override { return engine_->config(); }
  uint64_t memory_size() const override { return engine_->memory().size(); }

  void write_memory(uint64_t addr, std::span<const uint8_t> bytes) override {
    auto mem = engine_->memory();
    check_range(mem.size(), addr, bytes.size());
    std::copy(bytes.begin(), bytes.end(), mem.begin() + static_cast<std::ptrdiff_t>(addr));
  }
  void read_memory(uint64_t addr, std::span<uint8_t> out) override {
    auto mem = engine_->memory();
    check_range(mem.size(), addr, out.size());
    std::copy_n(mem.begin() + static_cast<std::ptrdiff_t>(addr), out.size(), out.begin());
  }

  void write_csr(uint32_t addr, uint32_t value) override {
    if (addr == static_cast<uint32_t>(hw::Csr::Ctrl) &&
        (value & (hw::kCtrlStart | hw::kCtrlBatch))) {
      pending_ = true;
      batch_ = (value & hw::kCtrlBatch) != 0;
      return;
    }
    engine_->csr_write(addr, value);
  }
  uint32_t read_csr(uint32_t addr) override { return engine_->csr_read(addr); }
  void set_progress(ProgressFn fn) override { engine_->set_progress(std::move(fn)); }

  void start() override {
    // The harness runs a program from its CSR values; the run happens in wait().
    pending_ = true;
    batch_ = false;
  }

  device::WaitResult wait(uint64_t timeout_cycles) override {
    device::WaitResult w;
    if (!pending_) {
      const uint32_t st = engine_->csr_read(static_cast<uint32_t>(hw::Csr::Status));
      w.done = (st & hw::kStatusDone) != 0;
      w.err = static_cast<hw::Err>(engine_->csr_read(static_cast<uint32_t>(hw::Csr::ErrCode)));
      return w;
    }
    pending_ = false;
    auto csr = [&](hw::Csr c) { return engine_->csr_read(static_cast<uint32_t>(c)); };
    // (the on-chip scratch's window holds memory's bytes before the run and gives its own back
    // after it, so this device's memory reads as the reference device's: EngineSim::load_scratch)
    const uint32_t scratch =
        engine_->config().scratch_bytes != 0 ? csr(hw::Csr::ScratchBase) : 0;
    engine_->load_scratch(scratch);
    const RunStatus st =
        batch_ ? engine_->run_batch(timeout_cycles)
               : engine_->run(csr(hw::Csr::DescAddr), csr(hw::Csr::DescCount),
                              csr(hw::Csr::WinBase), csr(hw::Csr::WinLimit), timeout_cycles,
                              scratch);
    engine_->store_scratch(scratch);
    w.done = st.done;
    w.timeout = st.timeout;
    w.err = static_cast<hw::Err>(st.err_code);
    w.err_index = st.err_index;
    w.layers_done = st.layers_done;
    return w;
  }

 private:
  std::unique_ptr<EngineSim> engine_;
  bool pending_ = false;
  bool batch_ = false;
};

}  // namespace

std::unique_ptr<device::Device> make_rtl_device(const hw::Config& cfg, uint64_t memory_bytes,
                                                const cycles::DramTiming& dram,
                                                std::vector<uint32_t> host_poll) {
  return std::make_unique<RtlDevice>(cfg, memory_bytes, dram, std::move(host_poll));
}

namespace {
// Backend "rtl" for every configuration (the programs that link nasa_sim whole see it).
const device::BackendRegistrar kRtlBackend({"rtl", "the Verilated RTL with the sim/ DRAM model",
                                            [](const hw::Config&) { return true; },
                                            [](const hw::Config& c, uint64_t m,
                                               const device::BackendOptions&) {
                                              return make_rtl_device(c, m);
                                            }});
}  // namespace

}  // namespace nasa::sim
