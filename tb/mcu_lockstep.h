// The lockstep bench of the board's controller cores against the ISS (nasa::mcu::Iss): random
// RV32I (+ Zmmul) programs (every ALU op and immediate form, branches and jumps, mul/mulh* with
// special operands where the core has them, loads and stores of every size against a RAM with a
// random latency per access, ROM data reads, illegal and misaligned instructions) must retire
// every instruction in the same cycle, leave the same memory and registers, and trap at the same
// instruction. Used by tb/rtlunit_mcu_cpu.cpp (rtl/nasa_mcu_cpu.sv) and
// tb/rtlunit_mcu_cpu_serial.cpp (rtl/nasa_mcu_cpu_serial.sv); include after the Verilated
// model's header.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "nasa/mcu_iss.h"
#include "nasa/sim/vbench.h"

namespace mcu_lockstep {

using nasa::mcu::kRomBase;

constexpr uint32_t kRamBase = 0x2000'0000u, kRamWords = 256;

// RAM behind the data bus, with a deterministic random latency for the n-th access.
struct Ram {
  std::vector<uint32_t> words = std::vector<uint32_t>(kRamWords, 0);
  uint64_t seed = 0;
  uint32_t latency(uint64_t n) const {
    std::mt19937_64 r(seed ^ (n * 0x9E3779B97F4A7C15ull));
    const uint32_t k = static_cast<uint32_t>(r() % 8);
    return k < 4 ? 0 : k;  // half the accesses complete in their first cycle
  }
  uint32_t& at(uint32_t addr) { return words[(addr >> 2) % kRamWords]; }
  void write(uint32_t addr, uint32_t data, uint32_t strb) {
    uint32_t& w = at(addr);
    for (int i = 0; i < 4; ++i) {
      if ((strb >> i) & 1) w = (w & ~(0xFFu << (8 * i))) | (data & (0xFFu << (8 * i)));
    }
  }
};

struct IssBus : nasa::mcu::Bus {
  Ram ram;
  uint64_t n = 0;
  uint64_t access(uint64_t cyc, bool write, uint32_t addr, uint32_t wdata, uint32_t strb,
                  uint32_t& rdata) override {
    const uint64_t done = cyc + ram.latency(n++);
    if (write)
      ram.write(addr, wdata, strb);
    else
      rdata = ram.at(addr);
    return done;
  }
};

// ---- a tiny assembler ----
inline uint32_t r_type(uint32_t f7, uint32_t rs2, uint32_t rs1, uint32_t f3, uint32_t rd,
                       uint32_t op) {
  return f7 << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op;
}
inline uint32_t i_type(int32_t imm, uint32_t rs1, uint32_t f3, uint32_t rd, uint32_t op) {
  return (static_cast<uint32_t>(imm) & 0xFFF) << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op;
}
inline uint32_t s_type(int32_t imm, uint32_t rs2, uint32_t rs1, uint32_t f3) {
  const auto u = static_cast<uint32_t>(imm);
  return ((u >> 5) & 127) << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | (u & 31) << 7 | 0x23;
}
inline uint32_t b_type(int32_t off, uint32_t rs2, uint32_t rs1, uint32_t f3) {
  const auto u = static_cast<uint32_t>(off);
  return ((u >> 12) & 1) << 31 | ((u >> 5) & 63) << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 |
         ((u >> 1) & 15) << 8 | ((u >> 11) & 1) << 7 | 0x63;
}
inline uint32_t j_type(int32_t off, uint32_t rd) {
  const auto u = static_cast<uint32_t>(off);
  return ((u >> 20) & 1) << 31 | ((u >> 1) & 1023) << 21 | ((u >> 11) & 1) << 20 |
         ((u >> 12) & 255) << 12 | rd << 7 | 0x6F;
}
inline uint32_t lui(uint32_t rd, uint32_t imm20) { return imm20 << 12 | rd << 7 | 0x37; }

// A random program: x1 = RAM base, x2 = ROM base are never written; the rest get random values,
// then random instructions (forward branches and jumps only), then every register is stored.
inline std::vector<uint32_t> random_program(std::mt19937& g, size_t n, bool allow_trap,
                                            bool has_mul = true) {
  std::vector<uint32_t> p;
  auto pick = [&](uint32_t lo, uint32_t hi) { return lo + g() % (hi - lo + 1); };
  p.push_back(lui(1, kRamBase >> 12));
  p.push_back(lui(2, kRomBase >> 12));
  for (uint32_t r = 3; r < 32; ++r) {
    p.push_back(lui(r, g() & 0xFFFFF));
    p.push_back(i_type(static_cast<int32_t>(g() % 4096) - 2048, r, 0, r, 0x13));
  }
  const size_t body = p.size();
  const size_t end = body + n;
  for (size_t i = body; i < end; ++i) {
    const uint32_t rd = pick(3, 31), rs1 = pick(0, 31), rs2 = pick(0, 31);
    const uint32_t kind = pick(0, 99);
    const auto left = static_cast<int32_t>(end - i);
    if (kind < 25) {  // register-register (incl. M)
      static const uint32_t f7s[] = {0, 0, 0, 1, 1, 0x20};
      uint32_t f7 = f7s[pick(0, 5)], f3 = pick(0, 7);
      if (f7 == 0x20) f3 = pick(0, 1) ? 0 : 5;
      if (f7 == 1 && !has_mul) f7 = 0;  // (RV32I: mul* are illegal)
      if (f7 == 1) f3 = pick(0, 3);     // Zmmul: no div/rem
      p.push_back(r_type(f7, rs2, rs1, f3, rd, 0x33));
    } else if (kind < 45) {  // register-immediate
      const uint32_t f3 = pick(0, 7);
      int32_t imm = static_cast<int32_t>(pick(0, 4095)) - 2048;
      if (f3 == 1) imm &= 31;
      if (f3 == 5) imm = (imm & 31) | (pick(0, 1) ? 0x400 : 0);
      p.push_back(i_type(imm, rs1, f3, rd, 0x13));
    } else if (kind < 50) {
      p.push_back(pick(0, 1) ? lui(rd, g() & 0xFFFFF) : ((g() & 0xFFFFF) << 12 | rd << 7 | 0x17));
    } else if (kind < 62) {  // loads from RAM (aligned to their size)
      static const uint32_t f3s[] = {0, 1, 2, 4, 5};
      const uint32_t f3 = f3s[pick(0, 4)];
      const uint32_t align = (f3 & 3) == 0 ? 1 : (f3 & 3) == 1 ? 2 : 4;
      const int32_t off = static_cast<int32_t>(pick(0, kRamWords * 4 / align - 1) * align);
      p.push_back(i_type(off, 1, f3, rd, 0x03));
    } else if (kind < 66) {  // loads from the ROM (program words and beyond)
      p.push_back(i_type(static_cast<int32_t>(pick(0, 511) * 4), 2, 2, rd, 0x03));
    } else if (kind < 78) {  // stores
      const uint32_t f3 = pick(0, 2);
      const uint32_t align = 1u << f3;
      const int32_t off = static_cast<int32_t>(pick(0, kRamWords * 4 / align - 1) * align);
      p.push_back(s_type(off, rs2, 1, f3));
    } else if (kind < 90 && left > 2) {  // forward branch
      static const uint32_t f3s[] = {0, 1, 4, 5, 6, 7};
      const auto off =
          static_cast<int32_t>(pick(1, static_cast<uint32_t>(std::min(left - 1, 12))) * 4);
      p.push_back(b_type(off, rs2, rs1, f3s[pick(0, 5)]));
    } else if (kind < 94 && left > 2) {  // forward jump: jal, or jalr to x2 (ROM base) + target
      const auto k = static_cast<int32_t>(pick(1, static_cast<uint32_t>(std::min(left - 1, 8))));
      if (pick(0, 1)) {
        p.push_back(j_type(k * 4, rd));
      } else {
        p.push_back(i_type((static_cast<int32_t>(i) + k) * 4, 2, 0, rd, 0x67));
      }
    } else if (kind < 96 && allow_trap) {  // an illegal word or a misaligned access
      // ecall, div/rem (or any M op without Zmmul), misaligned load
      const uint32_t which = pick(0, 2);
      p.push_back(which == 0   ? 0x00000073u
                  : which == 1 ? r_type(1, rs2, rs1, pick(has_mul ? 4 : 0, 7), rd, 0x33)
                               : i_type(static_cast<int32_t>(pick(0, 15) * 4 + 1), 1, 2, rd, 0x03));
    } else {
      p.push_back(0x0000000F);  // fence
    }
  }
  for (uint32_t r = 0; r < 32; ++r) p.push_back(s_type(static_cast<int32_t>(r * 4), r, 1, 2));
  p.push_back(0);  // illegal: stop
  return p;
}

struct RtlRun {
  std::vector<uint64_t> retire_cycles;  // the cycle after each retirement (the ISS's cycle())
  std::vector<uint32_t> ram;
  bool trapped = false;
  uint32_t trap_pc = 0;
};

template <class V>
RtlRun run_rtl(const std::vector<uint32_t>& rom, uint64_t seed, uint64_t max_cycles) {
  nasa::sim::Bench<V> top("mcu_cpu", seed);
  Ram ram;
  ram.seed = seed;
  std::vector<uint32_t> romv(4096, 0);
  std::copy(rom.begin(), rom.end(), romv.begin());
  uint32_t rom_q = 0;
  auto edge = [&] { top.tick(); };
  top->restart_i = 0;
  top.reset(1);
  RtlRun r;
  uint64_t n = 0, busy_until = 0;
  bool in_access = false;
  // cycle 0 is the first SDec: the cycle after SBoot
  rom_q = romv[top->rom_addr_o & 4095];
  top->rom_data_i = rom_q;
  top.settle();
  edge();
  for (uint64_t cyc = 0; cyc < max_cycles && !top->trap_o; ++cyc) {
    // ROM: the word at last cycle's address
    top->rom_data_i = rom_q;
    top->bus_done_i = 0;
    top.settle();
    if (top->bus_req_o) {
      if (!in_access) {
        in_access = true;
        busy_until = cyc + ram.latency(n++);
      }
      if (cyc == busy_until) {
        top->bus_done_i = 1;
        if (top->bus_we_o)
          ram.write(top->bus_addr_o, top->bus_wdata_o, top->bus_wstrb_o);
        else
          top->bus_rdata_i = ram.at(top->bus_addr_o);
        in_access = false;
      }
    }
    top.settle();
    if (top->retire_o) r.retire_cycles.push_back(cyc + 1);
    rom_q = romv[top->rom_addr_o & 4095];
    edge();
  }
  top.settle();
  r.trapped = top->trap_o;
  r.trap_pc = top->trap_pc_o;
  r.ram = ram.words;
  return r;
}

template <class V>
void check(const std::vector<uint32_t>& prog, uint64_t seed, const std::string& what,
           nasa::mcu::Core core) {
  IssBus bus;
  bus.ram.seed = seed;
  std::vector<uint32_t> rom(4096, 0);  // the RTL's ROM size (addresses wrap inside it)
  std::copy(prog.begin(), prog.end(), rom.begin());
  nasa::mcu::Iss iss(rom, bus, core);
  std::vector<uint64_t> iss_cycles;
  while (iss.step() && iss.retired() < 100000) iss_cycles.push_back(iss.cycle());
  const RtlRun rtl = run_rtl<V>(prog, seed, iss.cycle() + 200);
  if (rtl.retire_cycles.size() != iss_cycles.size()) {
    // where they part: the ISS's view of the first instruction the two disagree on
    size_t i = 0;
    while (i < rtl.retire_cycles.size() && i < iss_cycles.size() &&
           rtl.retire_cycles[i] == iss_cycles[i]) {
      ++i;
    }
    IssBus b2;
    b2.ram.seed = seed;
    nasa::mcu::Iss again(rom, b2, core);
    std::string trace;
    for (size_t k = 0; k < i; ++k) {
      if (k + 4 >= i) {
        trace += fmt::format("\n  [{}] pc {:#x} word {:#010x} -> cycle {} (RTL {})", k, again.pc(),
                             rom[((again.pc() - kRomBase) / 4) % 4096], iss_cycles[k],
                             rtl.retire_cycles[k]);
      }
      again.step();
    }
    ADD_FAILURE() << what << ": instruction " << i << " at pc " << std::hex << again.pc()
                  << " (word " << rom[((again.pc() - kRomBase) / 4) % 4096] << ")" << std::dec
                  << " retires at cycle " << (i < iss_cycles.size() ? iss_cycles[i] : 0)
                  << " on the ISS, " << (i < rtl.retire_cycles.size() ? rtl.retire_cycles[i] : 0)
                  << " on the RTL (RTL trapped " << rtl.trapped << " at " << std::hex << rtl.trap_pc
                  << ")" << trace;
  }
  ASSERT_EQ(rtl.retire_cycles.size(), iss_cycles.size()) << what << ": instructions retired";
  for (size_t i = 0; i < iss_cycles.size(); ++i) {
    ASSERT_EQ(rtl.retire_cycles[i], iss_cycles[i]) << what << ": instruction " << i;
  }
  EXPECT_EQ(rtl.ram, bus.ram.words) << what << ": memory";
  EXPECT_TRUE(rtl.trapped) << what;
  EXPECT_TRUE(iss.trapped()) << what;
  EXPECT_EQ(rtl.trap_pc, iss.trap_pc()) << what << ": trap address";
}

// NASA_MCU_PROGRAMS: random programs per test (default 300; a hundred for the trapping ones).
inline int programs(int fallback) {
  const char* v = std::getenv("NASA_MCU_PROGRAMS");
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

}  // namespace mcu_lockstep
