// The board's core (up5k) on the host: rtl/nasa_mcu.sv's memory map and live CSRs, the host
// page's CSRs and tables in main memory (nasa/mcu_page.h), around the ISS (nasa/mcu_iss.h) running
// the firmware (fpga/fw/), with main memory behind the sim/ DRAM model's timing. Runs are
// cycle-exact to the RTL, so this is the configuration's cycle model; its results are the
// firmware's (tests compare them with the reference model).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "nasa/cycle_model.h"
#include "nasa/dram_bus.h"
#include "nasa/hw_spec.h"
#include "nasa/mcu_iss.h"
#include "nasa/mcu_page.h"

namespace nasa::mcu {

// The firmware images (words at kRomBase), built from fpga/fw/ with the project: for the RV32IM
// core with the dot unit (Core::Multicycle, Unit::Dot; rtl/nasa_mcu.sv's Array = 0), and the same
// source for RV32I (the bit-serial core, Core::Serial: software multiplies).
std::span<const uint32_t> firmware();
std::span<const uint32_t> firmware_rv32i();
// The RV32I image for the board's controller, with the MAC array (Unit::Array; rtl/nasa_mcu.sv's
// Array = 1): the 1x1 Convs, DwConvs, stems, residual adds and FCs the array takes on it, the
// rest in software.
std::span<const uint32_t> firmware_array();

// The unit beside the core (rtl/nasa_mcu.sv's parameter Array): the dot-product unit
// (nasa_mcu_dot, MMIO page PageDot), or the MAC array (nasa_mcu_array_page, page PageArray).
enum class Unit { Dot, Array };

// The main memory a System needs to hold `data_bytes` of the host's: at least the address space,
// with the host page and the firmware's RAM at its top.
inline uint64_t memory_bytes(const hw::Config& cfg, uint64_t data_bytes) {
  return std::max(data_bytes, uint64_t{1} << cfg.addr_bits);
}

struct RunInfo {
  bool done = false;  // the firmware wrote FINISH (false: max_cycles passed first)
  uint64_t cycles = 0;
  std::vector<uint64_t> layer_ends;  // the run's cycle of each LAYER_END write (from 0)
  // for each layer, the cycle of its first dot-unit start (its LAYER_END's when it has none):
  // what comes before is the firmware's set-up of the layer (reading, checking, addressing)
  std::vector<uint64_t> compute_starts;
  // for each layer, the cycles its unit (the dot unit or the MAC array) was busy: from each
  // start (the ACC or ARun write) to the cycle it was idle again
  std::vector<uint64_t> unit_cycles;
};

// What the MAC array ran (Unit::Array): layers, the stems among them, and those it stopped at a
// record's bad shift (ArBadRec).
struct ArrayCounts {
  uint64_t runs = 0, stems = 0, bad_records = 0;
  ArrayCounts& operator+=(const ArrayCounts& o) {
    runs += o.runs;
    stems += o.stems;
    bad_records += o.bad_records;
    return *this;
  }
};

class System final : Bus {
 public:
  // `mem`: main memory (the device's; the firmware reads and writes it in place), at least the
  // address space with the host page and the firmware's RAM at its top (2^AddrBits bytes).
  // `rom` and `core`: the firmware image and the core that runs it; `unit` the unit beside it.
  // The default is the board (firmware_array(), Core::Serial, Unit::Array); the controller with
  // the dot unit: firmware() and Core::Multicycle (or firmware_rv32i() and Core::Serial), Dot.
  System(const hw::Config& cfg, std::span<uint8_t> mem, const cycles::DramTiming& dram,
         std::span<const uint32_t> rom = firmware_array(), Core core = Core::Serial,
         Unit unit = Unit::Array);

  // Host CSR accesses as the host makes them (device::McuPage: the live CSRs as rtl/nasa_mcu.sv
  // answers them on its port, the others in the host page).
  void write_csr(uint32_t addr, uint32_t value);
  uint32_t read_csr(uint32_t addr);
  // The CSR port alone (rtl/nasa_mcu.sv: the live CSRs; others read 0, writes ignored).
  void port_write(uint32_t addr, uint32_t value);
  uint32_t port_read(uint32_t addr) const;

  // After a CTRL write that started a run: the firmware runs it to FINISH (or a trap: Fault).
  RunInfo run(uint64_t max_cycles);
  // A program as the host starts one: DESC_ADDR, DESC_COUNT, the window and CTRL START
  // written, then run(max_cycles).
  RunInfo run_program(uint32_t desc_addr, uint32_t desc_count, uint32_t win_base,
                      uint32_t win_limit, uint64_t max_cycles);
  bool busy() const { return busy_; }
  // What the MAC array ran since construction
  const ArrayCounts& array_counts() const { return array_; }
  uint64_t counter(hw::Counter c) const;

 private:
  uint64_t access(uint64_t cyc, bool write, uint32_t addr, uint32_t wdata, uint32_t strb,
                  uint32_t& rdata) override;
  void boot();  // the firmware from its reset entry to its GO read
  uint64_t fetch(uint64_t cyc, uint32_t addr, uint64_t& row);
  uint64_t dot_access(uint64_t cyc, bool write, uint32_t reg, uint32_t wdata, uint32_t& rdata);
  void dot_run(uint64_t start, uint32_t acc);
  uint64_t array_access(uint64_t cyc, bool write, uint32_t reg, uint32_t wdata, uint32_t& rdata);
  void array_run(uint64_t start);
  uint64_t main_row(uint32_t addr) const;
  void main_write(uint32_t addr, uint32_t data, uint32_t strb);
  void dram_until(uint64_t cyc);  // idle DRAM clocks up to (not including) cycle `cyc`
  uint64_t accept(uint64_t cyc);
  void finish(uint32_t code);

  hw::Config cfg_;
  std::span<uint8_t> mem_;
  cycles::DramBus dram_;
  uint64_t dram_cyc_ = 0;
  Iss iss_;
  device::McuPage page_;
  device::McuPage::Port page_port_;
  // control registers and counters
  bool busy_ = false, done_ = false, error_ = false;
  uint32_t go_ = 0, err_code_ = 0;
  uint64_t cycles_ = 0, rd_bytes_ = 0, wr_bytes_ = 0;
  std::span<const uint32_t> rom_;
  Unit unit_;
  // the dot-product unit's registers, the MAC array's page; the first cycle the unit is idle again
  uint32_t dot_x_ = 0, dot_w_ = 0, dot_shape_ = 0, dot_xstr_ = 0, dot_wstr_ = 0, dot_acc_ = 0;
  uint32_t arr_[8] = {};
  bool arr_bad_ = false;  // the last layer stopped at a bad record (the ARun read's ArBadRec)
  ArrayCounts array_;
  uint64_t unit_idle_ = 0;
  uint64_t run_origin_ = 0;  // ISS cycle of the run's cycle 0
  bool finished_ = false;
  std::vector<uint64_t> layer_ends_, compute_starts_, unit_cycles_;
  uint64_t unit_busy_ = 0;  // the unit's busy cycles since the last LAYER_END
};

}  // namespace nasa::mcu
