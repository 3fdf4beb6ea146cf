// RV32IM instruction-set simulator with rtl/nasa_mcu_cpu.sv's timing (or, Core::Serial,
// rtl/nasa_mcu_cpu_serial.sv's). Every branch of step() names the RTL state sequence it stands
// for; keep them in step (tb/rtlunit_mcu_cpu.cpp and rtlunit_mcu_cpu_serial.cpp run them in
// lockstep).
#include "nasa/mcu_iss.h"

#include <stdexcept>

namespace nasa::mcu {
namespace {

int32_t sx(uint32_t v, int bits) {
  const uint32_t m = 1u << (bits - 1);
  return static_cast<int32_t>((v ^ m) - m);
}

}  // namespace

Iss::Iss(std::span<const uint32_t> rom, Bus& bus, Core core) : bus_(bus), core_(core) {
  // the ROM's size is a power of two (the RTL's address wraps inside it)
  size_t n = 1;
  while (n < rom.size()) n <<= 1;
  rom_.assign(n, 0);
  std::copy(rom.begin(), rom.end(), rom_.begin());
  reset();
}

void Iss::reset() {
  for (uint32_t& r : x_) r = 0;
  pc_ = kRomBase;
  cyc_ = 0;
  retired_ = 0;
  trapped_ = false;
  trap_pc_ = 0;
}

uint32_t Iss::rom_word(uint32_t addr) const { return rom_[(addr >> 2) & (rom_.size() - 1)]; }

// The RTL's PC is the ROM's word index: an address wraps inside the ROM, its low bits drop.
uint32_t Iss::in_rom(uint32_t addr) const {
  return kRomBase | (addr & static_cast<uint32_t>(rom_.size() * 4 - 1) & ~3u);
}

bool Iss::run_until(uint64_t until) {
  while (!trapped_ && cyc_ < until) step();
  return !trapped_;
}

bool Iss::step() {
  if (trapped_) return false;
  const uint32_t ir = rom_word(pc_);
  const uint32_t opc = ir & 0x7F, rd = (ir >> 7) & 31, f3 = (ir >> 12) & 7, rs1 = (ir >> 15) & 31,
                 rs2 = (ir >> 20) & 31, f7 = ir >> 25;
  const uint32_t a = x_[rs1], b = x_[rs2];
  const uint32_t imm_i = static_cast<uint32_t>(sx(ir >> 20, 12));
  const uint32_t imm_s = static_cast<uint32_t>(sx(((ir >> 25) << 5) | ((ir >> 7) & 31), 12));
  const uint32_t imm_b = static_cast<uint32_t>(
      sx(((ir >> 31) << 12) | (((ir >> 7) & 1) << 11) | (((ir >> 25) & 63) << 5) |
             (((ir >> 8) & 15) << 1),
         13));
  const uint32_t imm_u = ir & 0xFFFFF000u;
  const uint32_t imm_j = static_cast<uint32_t>(
      sx(((ir >> 31) << 20) | (((ir >> 12) & 255) << 12) | (((ir >> 20) & 1) << 11) |
             (((ir >> 21) & 1023) << 1),
         21));
  // an illegal word: SDec and one cycle (SExe, the serial core's first SRun); a misaligned
  // access stops when its address is complete (`run` below). Then STrap.
  auto trap = [&](uint64_t cycles = 2) {
    trapped_ = true;
    trap_pc_ = pc_;
    cyc_ += cycles;
    return false;
  };
  auto wr = [&](uint32_t v) {
    if (rd != 0) x_[rd] = v;
  };
  uint32_t next = pc_ + 4;
  // SDec, SExe; the serial core: SDec, SRun (a pair a cycle of rs1 or none, or of rs1 and rs2)
  const bool serial = core_ == Core::Serial;
  const bool two = opc == 0x33 || opc == 0x63 || opc == 0x23;
  const uint64_t run = serial ? (two ? kSerialTwoRegCycles : kSerialOneRegCycles) : kAluCycles;
  const uint64_t redirect = serial ? run + 1 : kRedirectCycles;  // SBr/SFetch; serial: SFin
  // a shift's cycles: SMd a bit a cycle; serial: SPre (right shifts), SWb
  auto shift_cycles = [&](uint32_t sh, bool left) {
    return serial ? run + (left ? 0 : sh >> 1) + kSerialWriteBackCycles : kShiftCycles + sh;
  };
  uint64_t cycles = run;
  switch (opc) {
    case 0x37:  // lui
      wr(imm_u);
      break;
    case 0x17:  // auipc
      wr(pc_ + imm_u);
      break;
    case 0x6F:  // jal
      wr(in_rom(pc_ + 4));
      next = pc_ + imm_j;
      break;
    case 0x67:  // jalr
      if (f3 != 0) return trap();
      wr(in_rom(pc_ + 4));
      next = a + imm_i;
      cycles = redirect;  // the target fetched
      break;
    case 0x63: {  // branches
      bool take = false;
      switch (f3) {
        case 0: take = a == b; break;
        case 1: take = a != b; break;
        case 4: take = static_cast<int32_t>(a) < static_cast<int32_t>(b); break;
        case 5: take = static_cast<int32_t>(a) >= static_cast<int32_t>(b); break;
        case 6: take = a < b; break;
        case 7: take = a >= b; break;
        default: return trap();
      }
      if (take) next = pc_ + imm_b;
      cycles = redirect;  // taken or not
      break;
    }
    case 0x03:    // loads
    case 0x23: {  // stores
      const bool store = opc == 0x23;
      if (store ? f3 > 2 : (f3 == 3 || f3 > 5)) return trap();
      const uint32_t ea = a + (store ? imm_s : imm_i);
      const uint32_t size = f3 & 3;
      if ((size == 1 && (ea & 1)) || (size == 2 && (ea & 3))) return trap(run);
      const uint32_t off = ea & 3, word = ea & ~3u;
      if (store) {
        const uint32_t data = size == 0 ? (b & 0xFF) * 0x01010101u
                              : size == 1 ? (b & 0xFFFF) * 0x00010001u
                                          : b;
        const uint32_t strb = (size == 0 ? 1u : size == 1 ? 3u : 15u) << off;
        uint32_t dummy = 0;
        const uint64_t done = bus_.access(cyc_ + run, true, word, data, strb, dummy);
        cycles = done - cyc_ + 1;  // SMem until done
      } else {
        uint32_t w = 0;
        // serial: SPre shifts the word to the offset, SWb writes it back
        const uint64_t wb = serial ? 4 * off + kSerialWriteBackCycles : 0;
        if ((ea >> 28) == (kRomBase >> 28)) {
          w = rom_word(ea);
          cycles = kRomLoadCycles - kAluCycles + run + wb;  // SMem: the address, the word
        } else {
          const uint64_t done = bus_.access(cyc_ + run, false, word, 0, 0, w);
          cycles = done - cyc_ + 1 + wb;  // SMem until done
        }
        const uint32_t sh = w >> (8 * off);
        switch (f3) {
          case 0: wr(static_cast<uint32_t>(sx(sh & 0xFF, 8))); break;
          case 1: wr(static_cast<uint32_t>(sx(sh & 0xFFFF, 16))); break;
          case 4: wr(sh & 0xFF); break;
          case 5: wr(sh & 0xFFFF); break;
          default: wr(sh); break;
        }
      }
      break;
    }
    case 0x13: {  // register-immediate
      const uint32_t sh = imm_i & 31;
      if (f3 == 1 || f3 == 5) cycles = shift_cycles(sh, f3 == 1);
      if (serial && (f3 == 2 || f3 == 3)) cycles = run + 1;  // SFin: the low pair
      switch (f3) {
        case 0: wr(a + imm_i); break;
        case 1:
          if (f7 != 0) return trap();
          wr(a << sh);
          break;
        case 2: wr(static_cast<int32_t>(a) < static_cast<int32_t>(imm_i) ? 1 : 0); break;
        case 3: wr(a < imm_i ? 1 : 0); break;
        case 4: wr(a ^ imm_i); break;
        case 5:
          if (f7 == 0) wr(a >> sh);
          else if (f7 == 0x20) wr(static_cast<uint32_t>(static_cast<int32_t>(a) >> sh));
          else return trap();
          break;
        case 6: wr(a | imm_i); break;
        default: wr(a & imm_i); break;
      }
      break;
    }
    case 0x33: {  // register-register
      if (f7 == 0x01) {  // Zmmul: SMd (div/rem are illegal; the serial core has no mul*)
        if (serial) return trap();
        const auto sa = static_cast<int64_t>(static_cast<int32_t>(a));
        const auto sb = static_cast<int64_t>(static_cast<int32_t>(b));
        switch (f3) {
          case 0: wr(a * b); break;
          case 1: wr(static_cast<uint32_t>(static_cast<uint64_t>(sa * sb) >> 32)); break;
          case 2: wr(static_cast<uint32_t>(static_cast<uint64_t>(sa * static_cast<int64_t>(b)) >> 32)); break;
          case 3: wr(static_cast<uint32_t>((uint64_t{a} * b) >> 32)); break;
          default: return trap();
        }
        cycles = kMulCycles;
        break;
      }
      if (f7 != 0 && !(f7 == 0x20 && (f3 == 0 || f3 == 5))) return trap();
      const uint32_t sh = b & 31;
      if (f3 == 1 || f3 == 5) cycles = shift_cycles(sh, f3 == 1);
      if (serial && (f3 == 2 || f3 == 3)) cycles = run + 1;
      switch (f3) {
        case 0: wr(f7 ? a - b : a + b); break;
        case 1: wr(a << sh); break;
        case 2: wr(static_cast<int32_t>(a) < static_cast<int32_t>(b) ? 1 : 0); break;
        case 3: wr(a < b ? 1 : 0); break;
        case 4: wr(a ^ b); break;
        case 5: wr(f7 ? static_cast<uint32_t>(static_cast<int32_t>(a) >> sh) : a >> sh); break;
        case 6: wr(a | b); break;
        default: wr(a & b); break;
      }
      break;
    }
    case 0x0F:  // fence: a no-op on one in-order core
      break;
    default:
      return trap();
  }
  pc_ = in_rom(next);
  cyc_ += cycles;
  ++retired_;
  return true;
}

}  // namespace nasa::mcu
