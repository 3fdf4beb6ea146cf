// Building and inspecting the engine's byte-addressed memory: little-endian scalars, per-channel
// parameter records, descriptors, and a bump allocator for laying tensors out in an image.
// Every access is bounds-checked and throws std::out_of_range naming the address and size.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nasa/desc.h"

namespace nasa {

// Per-output-channel record as stored in memory (hw::kParamBytes bytes, see hw_spec.h).
struct ParamRecord {
  int32_t bias = 0;
  uint16_t m = 0;
  uint8_t s = 0;
  bool operator==(const ParamRecord&) const = default;
};

// Throws std::out_of_range unless [addr, addr + size) lies inside a memory of `mem_size` bytes.
void check_range(size_t mem_size, uint64_t addr, uint64_t size);

void write_u8(std::span<uint8_t> mem, uint64_t addr, uint8_t v);
void write_u16(std::span<uint8_t> mem, uint64_t addr, uint16_t v);
void write_u32(std::span<uint8_t> mem, uint64_t addr, uint32_t v);
void write_i32(std::span<uint8_t> mem, uint64_t addr, int32_t v);
uint8_t read_u8(std::span<const uint8_t> mem, uint64_t addr);
uint16_t read_u16(std::span<const uint8_t> mem, uint64_t addr);
uint32_t read_u32(std::span<const uint8_t> mem, uint64_t addr);
int32_t read_i32(std::span<const uint8_t> mem, uint64_t addr);

// Raw byte blocks (tensors).
void write_bytes(std::span<uint8_t> mem, uint64_t addr, std::span<const uint8_t> bytes);
void write_bytes(std::span<uint8_t> mem, uint64_t addr, std::span<const int8_t> bytes);
std::vector<uint8_t> read_bytes(std::span<const uint8_t> mem, uint64_t addr, uint64_t size);
std::vector<int8_t> read_i8(std::span<const uint8_t> mem, uint64_t addr, uint64_t size);

// Parameter records, back to back from `addr` (the reserved byte is written as zero).
void write_param(std::span<uint8_t> mem, uint64_t addr, const ParamRecord& p);
void write_params(std::span<uint8_t> mem, uint64_t addr, std::span<const ParamRecord> params);
ParamRecord read_param(std::span<const uint8_t> mem, uint64_t addr);

// Descriptors as hw::kDescBytes little-endian bytes.
void write_desc(std::span<uint8_t> mem, uint64_t addr, const Desc& d);
Desc read_desc(std::span<const uint8_t> mem, uint64_t addr);

// Bump allocator over the address range [base, limit): hands out aligned, non-overlapping blocks.
class Arena {
 public:
  Arena(uint64_t base, uint64_t limit);
  // Returns the address of a fresh block of `size` bytes aligned to `align` (a power of two);
  // throws std::out_of_range when it does not fit, std::invalid_argument on a bad alignment.
  uint32_t alloc(uint64_t size, uint64_t align = 1);
  uint64_t base() const { return base_; }
  uint64_t limit() const { return limit_; }
  uint64_t top() const { return top_; }  // first address not yet handed out
  uint64_t used() const { return top_ - base_; }
  void reset() { top_ = base_; }

 private:
  uint64_t base_, limit_, top_;
};

}  // namespace nasa
