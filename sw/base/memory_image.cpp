// Little-endian, bounds-checked access to a memory image, and the Arena bump allocator.
#include "nasa/memory_image.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace nasa {
namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

void store_le(std::span<uint8_t> mem, uint64_t addr, uint64_t v, unsigned bytes) {
  check_range(mem.size(), addr, bytes);
  for (unsigned i = 0; i < bytes; ++i) mem[addr + i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t load_le(std::span<const uint8_t> mem, uint64_t addr, unsigned bytes) {
  check_range(mem.size(), addr, bytes);
  uint64_t v = 0;
  for (unsigned i = 0; i < bytes; ++i) v |= uint64_t{mem[addr + i]} << (8 * i);
  return v;
}

}  // namespace

void check_range(size_t mem_size, uint64_t addr, uint64_t size) {
  if (addr > mem_size || size > mem_size - addr) {
    throw std::out_of_range("memory access of " + std::to_string(size) + " bytes at " + hex(addr) +
                            " is outside the memory image of " + std::to_string(mem_size) +
                            " bytes (" + hex(mem_size) + ")");
  }
}

void write_u8(std::span<uint8_t> mem, uint64_t addr, uint8_t v) { store_le(mem, addr, v, 1); }
void write_u16(std::span<uint8_t> mem, uint64_t addr, uint16_t v) { store_le(mem, addr, v, 2); }
void write_u32(std::span<uint8_t> mem, uint64_t addr, uint32_t v) { store_le(mem, addr, v, 4); }
void write_i32(std::span<uint8_t> mem, uint64_t addr, int32_t v) {
  store_le(mem, addr, static_cast<uint32_t>(v), 4);
}
uint8_t read_u8(std::span<const uint8_t> mem, uint64_t addr) {
  return static_cast<uint8_t>(load_le(mem, addr, 1));
}
uint16_t read_u16(std::span<const uint8_t> mem, uint64_t addr) {
  return static_cast<uint16_t>(load_le(mem, addr, 2));
}
uint32_t read_u32(std::span<const uint8_t> mem, uint64_t addr) {
  return static_cast<uint32_t>(load_le(mem, addr, 4));
}
int32_t read_i32(std::span<const uint8_t> mem, uint64_t addr) {
  return static_cast<int32_t>(read_u32(mem, addr));
}

void write_bytes(std::span<uint8_t> mem, uint64_t addr, std::span<const uint8_t> bytes) {
  check_range(mem.size(), addr, bytes.size());
  std::copy(bytes.begin(), bytes.end(), mem.begin() + static_cast<ptrdiff_t>(addr));
}

void write_bytes(std::span<uint8_t> mem, uint64_t addr, std::span<const int8_t> bytes) {
  // int8 and uint8 share the object representation; this view only reinterprets it.
  write_bytes(
      mem, addr,
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

std::vector<uint8_t> read_bytes(std::span<const uint8_t> mem, uint64_t addr, uint64_t size) {
  check_range(mem.size(), addr, size);
  const auto first = mem.begin() + static_cast<ptrdiff_t>(addr);
  return std::vector<uint8_t>(first, first + static_cast<ptrdiff_t>(size));
}

std::vector<int8_t> read_i8(std::span<const uint8_t> mem, uint64_t addr, uint64_t size) {
  check_range(mem.size(), addr, size);
  std::vector<int8_t> out(size);
  for (uint64_t i = 0; i < size; ++i) out[i] = static_cast<int8_t>(mem[addr + i]);
  return out;
}

void write_param(std::span<uint8_t> mem, uint64_t addr, const ParamRecord& p) {
  check_range(mem.size(), addr, hw::kParamBytes);
  write_i32(mem, addr, p.bias);
  write_u16(mem, addr + 4, p.m);
  write_u8(mem, addr + 6, p.s);
  write_u8(mem, addr + 7, 0);
}

void write_params(std::span<uint8_t> mem, uint64_t addr, std::span<const ParamRecord> params) {
  check_range(mem.size(), addr, uint64_t{hw::kParamBytes} * params.size());
  for (size_t i = 0; i < params.size(); ++i)
    write_param(mem, addr + hw::kParamBytes * i, params[i]);
}

ParamRecord read_param(std::span<const uint8_t> mem, uint64_t addr) {
  check_range(mem.size(), addr, hw::kParamBytes);
  return ParamRecord{read_i32(mem, addr), read_u16(mem, addr + 4), read_u8(mem, addr + 6)};
}

void write_desc(std::span<uint8_t> mem, uint64_t addr, const Desc& d) {
  check_range(mem.size(), addr, hw::kDescBytes);
  const auto words = encode(d);
  for (uint32_t i = 0; i < hw::kDescWords; ++i) write_u32(mem, addr + 4 * i, words[i]);
}

Desc read_desc(std::span<const uint8_t> mem, uint64_t addr) {
  check_range(mem.size(), addr, hw::kDescBytes);
  std::array<uint32_t, hw::kDescWords> words{};
  for (uint32_t i = 0; i < hw::kDescWords; ++i) words[i] = read_u32(mem, addr + 4 * i);
  return decode(words);
}

Arena::Arena(uint64_t base, uint64_t limit) : base_(base), limit_(limit), top_(base) {
  if (limit < base) {
    throw std::invalid_argument("arena limit " + hex(limit) + " is below its base " + hex(base));
  }
}

uint32_t Arena::alloc(uint64_t size, uint64_t align) {
  if (align == 0 || (align & (align - 1)) != 0) {
    throw std::invalid_argument("arena alignment " + std::to_string(align) +
                                " is not a power of two");
  }
  const uint64_t addr = (top_ + align - 1) & ~(align - 1);
  if (addr < top_ || addr > limit_ || size > limit_ - addr || addr + size > (uint64_t{1} << 32)) {
    throw std::out_of_range("arena [" + hex(base_) + ", " + hex(limit_) + ") cannot fit " +
                            std::to_string(size) + " bytes aligned to " + std::to_string(align) +
                            " at " + hex(addr) + " (" + std::to_string(limit_ - top_) +
                            " bytes left)");
  }
  top_ = addr + size;
  return static_cast<uint32_t>(addr);
}

}  // namespace nasa
