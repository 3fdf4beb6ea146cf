// Bytes to and from a Verilator port of any width, for the unit benches and the engine harness.
// Byte i is bits [8i+7:8i]; Verilator keeps wide ports as 32-bit words, least significant first,
// so on a little-endian host the byte image is the storage itself.
#pragma once

#include <verilated.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

namespace nasa::sim {

static_assert(std::endian::native == std::endian::little,
              "port byte packing assumes a little-endian host");

// Copies min(bytes, port size) bytes; the rest of a port is zeroed on write.
template <class T>
requires std::is_integral_v<T>
void to_port(std::span<const uint8_t> in, T& port) {
  T v = 0;
  // (memcpy from an empty span's null pointer is undefined even for 0 bytes)
  if (!in.empty()) std::memcpy(&v, in.data(), std::min(in.size(), sizeof(T)));
  port = v;
}
template <std::size_t N>
void to_port(std::span<const uint8_t> in, VlWide<N>& port) {
  std::memset(port.data(), 0, N * sizeof(EData));
  if (!in.empty()) std::memcpy(port.data(), in.data(), std::min(in.size(), N * sizeof(EData)));
}
template <class T>
requires std::is_integral_v<T>
void from_port(const T& port, std::span<uint8_t> out) {
  if (!out.empty()) std::memcpy(out.data(), &port, std::min(out.size(), sizeof(T)));
}
template <std::size_t N>
void from_port(const VlWide<N>& port, std::span<uint8_t> out) {
  if (!out.empty()) std::memcpy(out.data(), port.data(), std::min(out.size(), N * sizeof(EData)));
}
// Port bytes as a vector of `n` bytes.
template <class P>
std::vector<uint8_t> port_bytes(const P& port, size_t n) {
  std::vector<uint8_t> v(n, 0);
  from_port(port, v);
  return v;
}

}  // namespace nasa::sim
