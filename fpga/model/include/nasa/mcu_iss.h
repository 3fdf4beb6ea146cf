// Instruction-set simulator of rtl/nasa_mcu_cpu.sv, the RV32I + Zmmul controller of the board's
// core (up5k): executes the same instructions with the same cycle timing (docs/fpga.md), so
// the firmware can be tested on the host and its runs timed exactly. Core::Serial replays
// rtl/nasa_mcu_cpu_serial.sv instead (RV32I, bit-serial; not on the board yet).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nasa/hw_spec.h"

namespace nasa::mcu {

inline constexpr uint32_t kRomBase = hw::mcu::region_base(hw::mcu::kRegionRom);

// The core's data bus: every load or store that is not a ROM read.
class Bus {
 public:
  virtual ~Bus() = default;
  // An access the core presents from cycle `cyc` on (its first memory cycle); returns the cycle
  // in which it completes (>= cyc: a store is accepted, a load's data are valid) and, for a load,
  // the aligned word in `rdata`. `strb`: the byte lanes of a store.
  virtual uint64_t access(uint64_t cyc, bool write, uint32_t addr, uint32_t wdata, uint32_t strb,
                          uint32_t& rdata) = 0;
};

// The core whose timing (and instruction set) the ISS replays.
enum class Core {
  Multicycle,  // rtl/nasa_mcu_cpu.sv: RV32I + Zmmul, the board's
  Serial,      // rtl/nasa_mcu_cpu_serial.sv: RV32I (mul* illegal), two bits a step
};

class Iss {
 public:
  // `rom`: the words at kRomBase (the firmware image).
  Iss(std::span<const uint32_t> rom, Bus& bus, Core core = Core::Multicycle);

  void reset();
  // Executes one instruction; false when the core is (or just became) stopped by a trap.
  bool step();
  // Steps until the cycle count reaches `until` or a trap; returns false on a trap.
  bool run_until(uint64_t until);

  uint32_t reg(int i) const { return x_[i]; }
  uint32_t pc() const { return pc_; }
  // The cycle in which the next instruction is decoded (0: the first instruction's).
  uint64_t cycle() const { return cyc_; }
  bool trapped() const { return trapped_; }
  uint32_t trap_pc() const { return trap_pc_; }
  uint64_t retired() const { return retired_; }

  // Cycle timing of rtl/nasa_mcu_cpu.sv (cycles from an instruction's decode to the next's).
  // kRedirectCycles: branches (SBr) and jalr (SFetch): the next instruction is fetched late.
  // kMulCycles: mul and mulh* alike (radix-2 Booth on the multiply unit's own adder, no DSP).
  static constexpr uint64_t kAluCycles = 2, kRedirectCycles = 3, kShiftCycles = 3, kMulCycles = 36,
                            kRomLoadCycles = 4;
  // Core::Serial (rtl/nasa_mcu_cpu_serial.sv): SDec and SRun take kSerialOneRegCycles for
  // instructions that read rs1 or no register, kSerialTwoRegCycles for those that read rs1 and
  // rs2 (a pair a cycle from each); slt(i)(u), branches and jalr one more (SFin); a load's or a
  // shift's result is written back in kSerialWriteBackCycles, after SPre's shifts (a load: 4 x
  // its byte offset; srl/sra: half the amount, rounded down); a ROM load's SMem takes 2 cycles.
  static constexpr uint64_t kSerialOneRegCycles = 17, kSerialTwoRegCycles = 33,
                            kSerialWriteBackCycles = 16;

 private:
  uint32_t rom_word(uint32_t addr) const;
  uint32_t in_rom(uint32_t addr) const;
  std::vector<uint32_t> rom_;
  Bus& bus_;
  Core core_;
  uint32_t x_[32] = {};
  uint32_t pc_ = kRomBase;
  uint64_t cyc_ = 0, retired_ = 0;
  bool trapped_ = false;
  uint32_t trap_pc_ = 0;
};

}  // namespace nasa::mcu
