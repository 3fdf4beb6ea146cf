// The one interface the runtime drives every accelerator target through (DESIGN.md section 6):
// memory and CSR access, start, and wait-for-done with a timeout. Targets: the reference model
// (make_ref_device), the Verilator RTL (sim/) and the board over UART; nasa/backend.h picks one
// by name.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nasa/batch_model.h"
#include "nasa/hw_spec.h"

namespace nasa::device {

struct WaitResult {
  bool done = false;     // the run finished (successfully or with an error code)
  bool timeout = false;  // the timeout elapsed first
  hw::Err err = hw::Err::None;
  uint32_t err_index = 0;    // descriptor that failed
  uint32_t layers_done = 0;  // descriptors completed
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;  // "ref", "rtl", ...
  virtual const hw::Config& config() const = 0;
  virtual uint64_t memory_size() const = 0;
  // Byte-addressed shared memory; an access beyond memory_size() throws std::out_of_range.
  virtual void write_memory(uint64_t addr, std::span<const uint8_t> bytes) = 0;
  virtual void read_memory(uint64_t addr, std::span<uint8_t> out) = 0;
  virtual void write_csr(uint32_t addr, uint32_t value) = 0;
  virtual uint32_t read_csr(uint32_t addr) = 0;
  // Starts the program set up in DESC_ADDR/DESC_COUNT/WIN_BASE/WIN_LIMIT.
  virtual void start() = 0;
  // Waits until the run ends or `timeout_cycles` accelerator cycles pass.
  virtual WaitResult wait(uint64_t timeout_cycles) = 0;

  // Progress of long runs: called now and then during wait() with the cycles so far and the
  // descriptors completed (targets that run instantly may never call it).
  using ProgressFn = std::function<void(uint64_t cycles, uint32_t descriptors)>;
  virtual void set_progress(ProgressFn /*fn*/) {}

  // Where the last batch run's cycles went, by fused-trie node and by opcode, on targets that
  // model it (the reference device); none on the others.
  virtual std::optional<batch::Profile> batch_profile() const { return std::nullopt; }

  uint64_t counter(hw::Counter id);
  // Programs the CSRs, starts, waits: the usual sequence. scratch_base: CSR ScratchBase (written
  // on configurations with an on-chip scratch, docs/engine.md "On-chip scratch").
  WaitResult run(uint32_t desc_addr, uint32_t desc_count, uint32_t win_base, uint32_t win_limit,
                 uint64_t timeout_cycles, uint32_t scratch_base = 0);
  // Starts a batch run (CTRL bit 2, docs/fusion.md) with the batch CSRs and tables already
  // programmed and waits for it.
  WaitResult run_batch(uint32_t win_base, uint32_t win_limit, uint64_t timeout_cycles);
  // Batch tables: `count` entries of table `t` from index 0 (TBL_ADDR/TBL_DATA streaming).
  std::vector<uint32_t> read_table(hw::Table t, uint32_t count);
  void write_table(hw::Table t, std::span<const uint32_t> values);
};

// A device whose memory is a byte array on the host (the reference and board models): bounds-
// checked memory access, the memory itself for the model.
class HostMemoryDevice : public Device {
 public:
  explicit HostMemoryDevice(uint64_t memory_bytes) : mem_(memory_bytes) {}
  uint64_t memory_size() const override { return mem_.size(); }
  void write_memory(uint64_t addr, std::span<const uint8_t> bytes) override;
  void read_memory(uint64_t addr, std::span<uint8_t> out) override;

 protected:
  std::vector<uint8_t> mem_;
};

// Reads the identification CSRs (Magic, HwShape, HwMem, HwInBuf, HwKredMax, HwBatch) through
// `read_csr` and throws std::runtime_error unless they are `cfg`'s: the message names `target`,
// what it is instead (a known configuration or none) and which --config to pass.
void check_identity(const std::function<uint32_t(uint32_t)>& read_csr, const hw::Config& cfg,
                    std::string_view target);
// The same through a Device (target: its name()).
void check_identity(Device& d, const hw::Config& cfg);

// Backend "ref" (nasa/backend.h): the bit-exact reference model with the target's own cycle
// model behind the CSRs: the engine's cycle model, or for the board's configuration (Mcu) the
// board's cycle-exact model when the board library is linked (else it throws, saying so).
std::unique_ptr<Device> make_ref_device(const hw::Config& cfg, uint64_t memory_bytes);

}  // namespace nasa::device
