// The RTL's bus structs (nasa_pkg::csr_req_t, csr_rsp_t, mem_req_t, mem_rsp_t, byte_req_t,
// byte_rsp_t; generated from hw_spec.h by sw/tools/gen_pkg.cpp) as Verilator sees them at a
// model's ports: one packed vector, the struct's last member at bit 0. Each struct here gives the
// position of every field and reads or writes the whole struct from or to a port of any width
// (CData ... QData, VlWide<N>), so benches and harnesses speak in fields, never in bit offsets.
#pragma once

#include <verilated.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

#include "nasa/hw_spec.h"
#include "nasa/sim/port_bytes.h"

namespace nasa::sim::bus {

// Bits [lsb, lsb + width) of a port, width <= 32.
template <class P>
uint32_t get_bits(const P& port, uint32_t lsb, uint32_t width) {
  uint64_t v = 0;
  if constexpr (std::is_integral_v<P>) {
    v = static_cast<uint64_t>(port) >> lsb;
  } else {
    const uint32_t w = lsb / 32, sh = lsb % 32;
    v = port[w] >> sh;
    if (sh + width > 32) v |= static_cast<uint64_t>(port[w + 1]) << (32 - sh);
  }
  return static_cast<uint32_t>(v & ((uint64_t{1} << width) - 1));
}
template <class P>
void set_bits(P& port, uint32_t lsb, uint32_t width, uint32_t value) {
  const uint64_t mask = (uint64_t{1} << width) - 1, val = value & mask;
  if constexpr (std::is_integral_v<P>) {
    port = static_cast<P>((static_cast<uint64_t>(port) & ~(mask << lsb)) | val << lsb);
  } else {
    const uint32_t w = lsb / 32, sh = lsb % 32;
    const uint64_t cur = port[w] | (sh + width > 32 ? static_cast<uint64_t>(port[w + 1]) << 32 : 0);
    const uint64_t next = (cur & ~(mask << sh)) | val << sh;
    port[w] = static_cast<uint32_t>(next);
    if (sh + width > 32) port[w + 1] = static_cast<uint32_t>(next >> 32);
  }
}

// A field's name as a template argument (its position and width are then constants).
template <size_t N>
struct Name {
  char s[N]{};
  consteval Name(const char (&v)[N]) { std::copy_n(v, N, s); }
  constexpr std::string_view view() const { return {s, N - 1}; }
};

// A bus struct's fields, from the tables nasa_pkg's structs are generated from (hw_spec.h).
template <const auto& Fields>
struct Layout {
  static constexpr uint32_t width = hw::bus_width(Fields);
  template <Name F>
  static constexpr uint32_t lsb = hw::bus_lsb(Fields, F.view());
  template <Name F>
  static constexpr uint32_t bits = hw::bus_field_width(Fields, F.view());
  // A field of at most 32 bits.
  template <Name F, class P>
  static uint32_t get(const P& port) {
    static_assert(bits<F> <= 32);
    return get_bits(port, lsb<F>, bits<F>);
  }
  template <Name F, class P>
  static void set(P& port, uint32_t value) {
    static_assert(bits<F> <= 32);
    set_bits(port, lsb<F>, bits<F>, value);
  }
};
using CsrReqL = Layout<hw::kCsrReq>;
using CsrRspL = Layout<hw::kCsrRsp>;
using MemReqL = Layout<hw::kMemReq>;
using MemRspL = Layout<hw::kMemRsp>;
using ByteReqL = Layout<hw::kByteReq>;
using ByteRspL = Layout<hw::kByteRsp>;
static_assert(MemReqL::lsb<"wdata"> == 0 && MemRspL::lsb<"rdata"> == 0,
              "the memory port's data fields must be the structs' last members");

struct CsrReq {
  bool valid = false, we = false;
  uint32_t addr = 0, wdata = 0;
  template <class P>
  void put(P& port) const {
    CsrReqL::set<"valid">(port, valid);
    CsrReqL::set<"we">(port, we);
    CsrReqL::set<"addr">(port, addr);
    CsrReqL::set<"wdata">(port, wdata);
  }
  template <class P>
  static CsrReq get(const P& port) {
    return {CsrReqL::get<"valid">(port) != 0, CsrReqL::get<"we">(port) != 0,
            CsrReqL::get<"addr">(port), CsrReqL::get<"wdata">(port)};
  }
};

struct ByteReq {
  bool valid = false, we = false;
  uint32_t addr = 0;
  uint8_t wdata = 0;
  template <class P>
  static ByteReq get(const P& port) {
    return {ByteReqL::get<"valid">(port) != 0, ByteReqL::get<"we">(port) != 0,
            ByteReqL::get<"addr">(port), static_cast<uint8_t>(ByteReqL::get<"wdata">(port))};
  }
};

// A response of the CSR bus or the byte port: {ready, valid, rdata}.
template <const auto& Fields, class Data>
struct Rsp {
  using L = Layout<Fields>;
  bool ready = false, valid = false;
  Data rdata = 0;
  template <class P>
  void put(P& port) const {
    L::template set<"ready">(port, ready);
    L::template set<"valid">(port, valid);
    L::template set<"rdata">(port, rdata);
  }
  template <class P>
  static Rsp get(const P& port) {
    return {L::template get<"ready">(port) != 0, L::template get<"valid">(port) != 0,
            static_cast<Data>(L::template get<"rdata">(port))};
  }
};
using CsrRsp = Rsp<hw::kCsrRsp, uint32_t>;
using ByteRsp = Rsp<hw::kByteRsp, uint8_t>;

// Memory port request: the control fields here, the data fields with wdata() / wstrb().
struct MemReq {
  bool valid = false, we = false, rsp_ready = false;
  uint32_t addr = 0, len = 0;
  template <class P>
  static MemReq get(const P& port) {
    return {MemReqL::get<"valid">(port) != 0, MemReqL::get<"we">(port) != 0,
            MemReqL::get<"rsp_ready">(port) != 0, MemReqL::get<"addr">(port),
            MemReqL::get<"len">(port)};
  }
  // The first out.size() bytes of the write data (at bit 0).
  template <class P>
  static void wdata(const P& port, std::span<uint8_t> out) {
    from_port(port, out);
  }
  // The strobes of the first `bytes` (<= 64) byte lanes.
  template <class P>
  static uint64_t wstrb(const P& port, uint32_t bytes) {
    uint64_t s = 0;
    for (uint32_t i = 0; i < bytes; i += 32) {
      s |= uint64_t{get_bits(port, MemReqL::lsb<"wstrb"> + i, std::min(bytes - i, 32u))} << i;
    }
    return s;
  }
};

// Memory port response: ready, valid, and the read data at bit 0 (bytes beyond `rdata` zero).
template <class P>
void put_mem_rsp(P& port, bool ready, bool valid, std::span<const uint8_t> rdata) {
  to_port(rdata, port);
  MemRspL::set<"valid">(port, valid);
  MemRspL::set<"ready">(port, ready);
}

}  // namespace nasa::sim::bus
