// Bit-exact reference executor (docs/engine.md). Written for speed: per layer, operands are widened
// once to int16 so the inner reductions map onto multiply-add vector instructions, and every
// per-MAC index is a precomputed pointer offset. Inner loops use fixed-size blocks so GCC
// vectorizes them at -O2 (cheap cost model: no epilogue) as well as at -O3.
#include "nasa/refmodel.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "nasa/cycle_model.h"

namespace nasa::ref {
namespace {

using hw::Op;

// Longest reduction summed in one int32 block: 65536 * 128 * 128 = 2^30, so no signed overflow;
// blocks are then combined in uint32, which is the engine's two's-complement wrap-around.
constexpr size_t kChunk = 65536;

inline int64_t requant_wide(int64_t acc, uint32_t m, uint32_t s) {
  return (acc * static_cast<int64_t>(m) + (int64_t{1} << (s - 1))) >> s;
}

// Saturation to int8 and the activation clamp, folded into one interval (q6 <= 127 is validated).
struct Clamp {
  int64_t lo = -128, hi = 127;
};

Clamp clamp_of(uint8_t act, uint8_t q6) {
  switch (static_cast<hw::Act>(act)) {
    case hw::Act::Relu:
      return {0, 127};
    case hw::Act::Relu6:
      return {0, std::min<int64_t>(q6, 127)};
    default:
      return {};
  }
}

// Two independent selects compile to conditional moves; a nested ?: becomes a branch, which
// mispredicts on every other output when activations saturate or ReLU clips (3x slower).
template <typename T>
inline T clamp_to(T v, T lo, T hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

inline int8_t clamp8(int64_t v, Clamp c) { return static_cast<int8_t>(clamp_to(v, c.lo, c.hi)); }

// Per-output-channel record, decoded once per layer.
struct Param {
  uint32_t bias;  // two's-complement bits of the int32 bias
  uint32_t m, s;
};

inline uint32_t le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

void load_params(const uint8_t* prm, uint32_t n, std::vector<Param>& out) {
  out.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t* r = prm + size_t{hw::kParamBytes} * i;
    out[i] = Param{le32(r), uint32_t{r[4]} | uint32_t{r[5]} << 8, r[6]};
    if (out[i].s < 1 || out[i].s > hw::kMaxShift) {
      throw std::invalid_argument("per-channel record " + std::to_string(i) +
                                  " has shift S=" + std::to_string(out[i].s) + " (expected 1..47)");
    }
  }
}

// One output row: bias added into the int32 accumulators (wrapping), requantized and clamped.
// Everything the loop needs is a local: int8 stores may alias any memory, so the compiler would
// otherwise reload members and thread-local pointers on every element.
void finish_row(const uint32_t* acc, const Param* p, size_t n, Clamp c, int8_t* out) {
  const int64_t lo = c.lo, hi = c.hi;
  for (size_t i = 0; i < n; ++i) {
    const int64_t v = requant_wide(static_cast<int32_t>(acc[i] + p[i].bias), p[i].m, p[i].s);
    out[i] = static_cast<int8_t>(clamp_to(v, lo, hi));
  }
}

// Same with one (M, S) for all lanes and no bias (pools, Gap).
void finish_row(const uint32_t* acc, uint32_t m, uint32_t s, size_t n, Clamp c, int8_t* out) {
  const int64_t lo = c.lo, hi = c.hi;
  for (size_t i = 0; i < n; ++i) {
    const int64_t v = requant_wide(static_cast<int32_t>(acc[i]), m, s);
    out[i] = static_cast<int8_t>(clamp_to(v, lo, hi));
  }
}

// Dot product of int8 values held as T (int16 where the operand was widened once for reuse,
// int8 where each weight is read once, as in Fc), n <= kChunk.
template <class T>
inline int32_t dot_block(const T* a, const T* b, size_t n) {
  constexpr size_t kB = 32;
  const size_t nb = n - n % kB;
  int32_t s = 0;
  for (size_t i = 0; i < nb; i += kB) {
    int32_t t = 0;
    for (size_t j = 0; j < kB; ++j) t += int32_t{a[i + j]} * int32_t{b[i + j]};
    s += t;
  }
  for (size_t i = nb; i < n; ++i) s += int32_t{a[i]} * int32_t{b[i]};
  return s;
}

// Any length: int32 blocks that cannot overflow, summed with the engine's uint32 wrap-around.
template <class T>
inline uint32_t dot(const T* a, const T* b, size_t n) {
  uint32_t s = 0;
  for (size_t i = 0; i < n; i += kChunk) {
    s += static_cast<uint32_t>(dot_block(a + i, b + i, std::min(kChunk, n - i)));
  }
  return s;
}

// Four dot products sharing the left operand (rows b, b + n, b + 2n, b + 3n), n <= kChunk: the
// shared loads and fewer horizontal sums matter for short reductions (1x1 convolutions).
inline void dot16x4_block(const int16_t* a, const int16_t* b, size_t n, uint32_t* out) {
  constexpr size_t kB = 32;
  const size_t nb = n - n % kB;
  const int16_t *b0 = b, *b1 = b + n, *b2 = b + 2 * n, *b3 = b + 3 * n;
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (size_t i = 0; i < nb; i += kB) {
    int32_t t0 = 0, t1 = 0, t2 = 0, t3 = 0;
    for (size_t j = 0; j < kB; ++j) {
      const int32_t x = a[i + j];
      t0 += x * b0[i + j];
      t1 += x * b1[i + j];
      t2 += x * b2[i + j];
      t3 += x * b3[i + j];
    }
    s0 += t0;
    s1 += t1;
    s2 += t2;
    s3 += t3;
  }
  for (size_t i = nb; i < n; ++i) {
    const int32_t x = a[i];
    s0 += x * b0[i];
    s1 += x * b1[i];
    s2 += x * b2[i];
    s3 += x * b3[i];
  }
  out[0] = static_cast<uint32_t>(s0);
  out[1] = static_cast<uint32_t>(s1);
  out[2] = static_cast<uint32_t>(s2);
  out[3] = static_cast<uint32_t>(s3);
}

// out[r] = a . w[r] for `rows` consecutive rows of length n (the weights of successive channels).
void dot_rows(const int16_t* a, const int16_t* w, size_t n, size_t rows, uint32_t* out) {
  size_t r = 0;
  if (n <= kChunk) {
    for (; r + 4 <= rows; r += 4) dot16x4_block(a, w + r * n, n, out + r);
  }
  for (; r < rows; ++r) out[r] = dot(a, w + r * n, n);
}

void widen(const int8_t* __restrict src, size_t n, int16_t* __restrict dst) {
  constexpr size_t kB = 16;
  const size_t nb = n - n % kB;
  for (size_t i = 0; i < nb; i += kB) {
    for (size_t j = 0; j < kB; ++j) dst[i + j] = src[i + j];
  }
  for (size_t i = nb; i < n; ++i) dst[i] = src[i];
}

// acc[c] += x[c] * w[c] over one pixel's channels (depthwise taps).
inline void mac_lanes(uint32_t* __restrict acc, const int8_t* __restrict x,
                      const int8_t* __restrict w, size_t n) {
  constexpr size_t kB = 16;
  const size_t nb = n - n % kB;
  for (size_t c = 0; c < nb; c += kB) {
    for (size_t j = 0; j < kB; ++j) {
      acc[c + j] += static_cast<uint32_t>(int32_t{x[c + j]} * int32_t{w[c + j]});
    }
  }
  for (size_t c = nb; c < n; ++c) acc[c] += static_cast<uint32_t>(int32_t{x[c]} * int32_t{w[c]});
}

inline void add_lanes(uint32_t* __restrict acc, const int8_t* __restrict x, size_t n) {
  constexpr size_t kB = 16;
  const size_t nb = n - n % kB;
  for (size_t c = 0; c < nb; c += kB) {
    for (size_t j = 0; j < kB; ++j) acc[c + j] += static_cast<uint32_t>(int32_t{x[c + j]});
  }
  for (size_t c = nb; c < n; ++c) acc[c] += static_cast<uint32_t>(int32_t{x[c]});
}

inline void max_lanes(int8_t* __restrict m, const int8_t* __restrict x, size_t n) {
  constexpr size_t kB = 16;
  const size_t nb = n - n % kB;
  for (size_t c = 0; c < nb; c += kB) {
    for (size_t j = 0; j < kB; ++j) m[c + j] = m[c + j] > x[c + j] ? m[c + j] : x[c + j];
  }
  for (size_t c = nb; c < n; ++c) m[c] = m[c] > x[c] ? m[c] : x[c];
}

// Buffers reused across layers (per thread, so parallel searches stay independent).
struct Scratch {
  std::vector<int16_t> in16, wgt16, patch;
  std::vector<uint32_t> acc;
  std::vector<Param> params;
  std::vector<int8_t> out;
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

// Geometry of a windowed op (conv, depthwise, pools) along one axis.
struct Axis {
  int32_t size, out, k, stride, pad;
  // Taps [lo, hi) of output `o` fall inside the image; there is always at least one.
  int32_t start(int32_t o) const { return o * stride - pad; }
  int32_t lo(int32_t o) const { return std::max(0, -start(o)); }
  int32_t hi(int32_t o) const { return std::min(k, size - start(o)); }
};

struct Geometry {
  Axis y, x;
  size_t c;
};

Geometry geometry(const Desc& d, const Shape& s, int32_t k) {
  const int32_t stride = d.stride == 2 ? 2 : 1;
  const int32_t pad = (k - 1) / 2;
  const auto pad_y = static_cast<int32_t>(top_pad(d));  // a row band's own top padding
  return Geometry{Axis{d.h, static_cast<int32_t>(s.ho), k, stride, pad_y},
                  Axis{d.w, static_cast<int32_t>(s.wo), k, stride, pad}, d.cin};
}

struct Tensors {
  const int8_t *in, *in2, *wgt;
  const uint8_t* prm;
};

// The activation of a Conv/DwConv's own results: with a folded residual it applies after the add
// (add_into), and the layer's results are only saturated to int8.
Clamp own_clamp(const Desc& d) { return has_residual(d) ? Clamp{} : clamp_of(d.act, d.q6); }

void conv(const Desc& d, const Shape& s, const Tensors& t, Scratch& sc, int8_t* out) {
  const Geometry g = geometry(d, s, d.k);
  const size_t cin = g.c, cout = d.cout, k = d.k, kred = s.kred, row = k * cin;
  const Clamp cl = own_clamp(d);
  load_params(t.prm, d.cout, sc.params);
  sc.wgt16.resize(cout * kred);
  widen(t.wgt, cout * kred, sc.wgt16.data());
  sc.in16.resize(s.in_bytes);
  widen(t.in, s.in_bytes, sc.in16.data());
  sc.patch.resize(kred);
  sc.acc.resize(cout);
  const int16_t* w16 = sc.wgt16.data();
  const int16_t* in16 = sc.in16.data();
  const Param* prm = sc.params.data();
  uint32_t* acc = sc.acc.data();
  for (int32_t oy = 0; oy < g.y.out; ++oy) {
    const int32_t iy0 = g.y.start(oy), ky_lo = g.y.lo(oy), ky_hi = g.y.hi(oy);
    for (int32_t ox = 0; ox < g.x.out; ++ox) {
      const int32_t ix0 = g.x.start(ox), kx_lo = g.x.lo(ox), kx_hi = g.x.hi(ox);
      // The k*k*Cin patch in OHWI order, zeros at padding taps; a 1x1 patch is the pixel itself.
      const int16_t* patch;
      if (k == 1) {
        patch = in16 + (size_t(iy0) * g.x.size + size_t(ix0)) * cin;
      } else {
        int16_t* p = sc.patch.data();
        for (int32_t ky = 0; ky < int32_t(k); ++ky) {
          int16_t* prow = p + ky * row;
          if (ky < ky_lo || ky >= ky_hi) {
            std::fill(prow, prow + row, int16_t{0});
            continue;
          }
          const int16_t* src = in16 + (size_t(iy0 + ky) * g.x.size + size_t(ix0 + kx_lo)) * cin;
          std::fill(prow, prow + kx_lo * cin, int16_t{0});
          std::copy(src, src + (kx_hi - kx_lo) * cin, prow + kx_lo * cin);
          std::fill(prow + kx_hi * cin, prow + row, int16_t{0});
        }
        patch = p;
      }
      dot_rows(patch, w16, kred, cout, acc);
      finish_row(acc, prm, cout, cl, out + (size_t(oy) * g.x.out + size_t(ox)) * cout);
    }
  }
}

void dwconv(const Desc& d, const Shape& s, const Tensors& t, Scratch& sc, int8_t* out) {
  const Geometry g = geometry(d, s, d.k);
  const size_t c = g.c, k = d.k;
  const Clamp cl = own_clamp(d);
  load_params(t.prm, d.cout, sc.params);
  sc.acc.resize(c);
  uint32_t* acc = sc.acc.data();
  const Param* prm = sc.params.data();
  for (int32_t oy = 0; oy < g.y.out; ++oy) {
    const int32_t iy0 = g.y.start(oy), ky_lo = g.y.lo(oy), ky_hi = g.y.hi(oy);
    for (int32_t ox = 0; ox < g.x.out; ++ox) {
      const int32_t ix0 = g.x.start(ox), kx_lo = g.x.lo(ox), kx_hi = g.x.hi(ox);
      std::fill(acc, acc + c, 0u);
      for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
        for (int32_t kx = kx_lo; kx < kx_hi; ++kx) {
          const int8_t* x = t.in + (size_t(iy0 + ky) * g.x.size + size_t(ix0 + kx)) * c;
          mac_lanes(acc, x, t.wgt + (size_t(ky) * k + size_t(kx)) * c, c);
        }
      }
      finish_row(acc, prm, c, cl, out + (size_t(oy) * g.x.out + size_t(ox)) * c);
    }
  }
}

void fc(const Desc& d, const Shape& s, const Tensors& t, Scratch& sc, int8_t* out) {
  const Clamp cl = clamp_of(d.act, d.q6);
  load_params(t.prm, d.cout, sc.params);
  sc.acc.resize(d.cout);
  for (size_t co = 0; co < d.cout; ++co) sc.acc[co] = dot(t.in, t.wgt + co * s.kred, s.kred);
  finish_row(sc.acc.data(), sc.params.data(), d.cout, cl, out);
}

void pool(const Desc& d, const Shape& s, const Tensors& t, Scratch& sc, int8_t* out) {
  const Geometry g = geometry(d, s, 3);
  const size_t c = g.c;
  const bool is_max = d.op == static_cast<uint8_t>(Op::MaxPool);
  const Clamp cl = clamp_of(d.act, d.q6);
  sc.acc.resize(c);
  uint32_t* sum = sc.acc.data();
  for (int32_t oy = 0; oy < g.y.out; ++oy) {
    const int32_t iy0 = g.y.start(oy), ky_lo = g.y.lo(oy), ky_hi = g.y.hi(oy);
    for (int32_t ox = 0; ox < g.x.out; ++ox) {
      const int32_t ix0 = g.x.start(ox), kx_lo = g.x.lo(ox), kx_hi = g.x.hi(ox);
      int8_t* o = out + (size_t(oy) * g.x.out + size_t(ox)) * c;
      auto pixel = [&](int32_t ky, int32_t kx) {
        return t.in + (size_t(iy0 + ky) * g.x.size + size_t(ix0 + kx)) * c;
      };
      if (is_max) {
        // Max over in-image taps only: start from the first one (there always is one).
        std::copy(pixel(ky_lo, kx_lo), pixel(ky_lo, kx_lo) + c, o);
        for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
          for (int32_t kx = kx_lo; kx < kx_hi; ++kx) max_lanes(o, pixel(ky, kx), c);
        }
        const int8_t lo = static_cast<int8_t>(cl.lo), hi = static_cast<int8_t>(cl.hi);
        for (size_t ch = 0; ch < c; ++ch) o[ch] = clamp_to(o[ch], lo, hi);
      } else {
        // Padding taps add zero, so summing the in-image taps is the zero-padded sum.
        std::fill(sum, sum + c, 0u);
        for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
          for (int32_t kx = kx_lo; kx < kx_hi; ++kx) add_lanes(sum, pixel(ky, kx), c);
        }
        finish_row(sum, d.m, d.s, c, cl, o);
      }
    }
  }
}

// out[i] = act(requant(a[i], M, S) + requant(b[i], Mb, Sb)) over n bytes: a residual add, as its
// own layer (Add) or folded into a Conv/DwConv's results (Res; a is then `out` itself).
void add_into(const Desc& d, const int8_t* a, const int8_t* b, size_t n, int8_t* out) {
  const Clamp cl = clamp_of(d.act, d.q6);
  // Each input's rescaled value depends on its byte only: two 256-entry tables.
  int32_t ta[256], tb[256];
  for (int v = -128; v < 128; ++v) {
    ta[v + 128] = static_cast<int32_t>(requant_wide(v, d.m, d.s));
    tb[v + 128] = static_cast<int32_t>(requant_wide(v, d.mb, d.sb));
  }
  const int32_t lo = static_cast<int32_t>(cl.lo), hi = static_cast<int32_t>(cl.hi);
  for (size_t i = 0; i < n; ++i) {
    const int32_t v = ta[a[i] + 128] + tb[b[i] + 128];
    out[i] = static_cast<int8_t>(clamp_to(v, lo, hi));
  }
}

void gap(const Desc& d, const Tensors& t, Scratch& sc, int8_t* out) {
  const size_t c = d.cin, pixels = size_t{d.h} * d.w;
  const Clamp cl = clamp_of(d.act, d.q6);
  sc.acc.assign(c, 0u);
  for (size_t p = 0; p < pixels; ++p) add_lanes(sc.acc.data(), t.in + p * c, c);
  finish_row(sc.acc.data(), d.m, d.s, c, cl, out);
}

void check_in_memory(size_t mem_size, const Desc& d, const char* what, uint32_t addr,
                     uint64_t size) {
  if (addr > mem_size || size > mem_size - addr) {
    throw std::out_of_range(op_name(d.op) + " " + what + " [" + std::to_string(addr) + ", +" +
                            std::to_string(size) + ") lies outside the memory of " +
                            std::to_string(mem_size) + " bytes");
  }
}

// Limits loose enough that only structural faults (not capacity) are reported by validate().
constexpr hw::Config kUnbounded{
    "unbounded", 1, 1, 1, 0xFFFFFFFFu, 0xFFFFFFFFu, 1, hw::kNodeCap, hw::kMaxLayers, hw::kMaxChoices,
    hw::kMaxCands, 1, 32, 16, 2, 0, 0};

}  // namespace

int8_t requant(int64_t acc, uint32_t m, uint32_t s) {
  if (s < 1 || s > hw::kMaxShift || m > 0xFFFF) {
    throw std::invalid_argument("requant: M=" + std::to_string(m) + " S=" + std::to_string(s) +
                                " (expected M < 65536 and 1 <= S <= 47)");
  }
  constexpr int64_t kLimit = int64_t{1} << 47;  // keeps acc * M + round inside int64
  if (acc >= kLimit || acc < -kLimit) {
    throw std::invalid_argument("requant: accumulator " + std::to_string(acc) +
                                " is outside [-2^47, 2^47)");
  }
  return clamp8(requant_wide(acc, m, s), Clamp{});
}

int8_t activate(int32_t v, uint8_t act, uint8_t q6) {
  if (act > static_cast<uint8_t>(hw::Act::Relu6)) {
    throw std::invalid_argument("activate: unknown activation " + std::to_string(act));
  }
  return clamp8(v, clamp_of(act, q6));
}

void execute(const Desc& d, std::span<uint8_t> mem) {
  const hw::Err e = validate(d, kUnbounded, 0, 0xFFFFFFFFu);
  if (e != hw::Err::None && e != hw::Err::Window && e != hw::Err::Oversize) {
    throw std::invalid_argument("execute: invalid " + op_name(d.op) + " descriptor (" +
                                err_name(e) + ")");
  }
  if (is_packed(d)) {  // image by image (docs/engine.md "Packed images")
    Desc one = d;
    one.images = 0;
    for (uint32_t i = 0; i < d.images; ++i) {
      one.in_addr = d.in_addr + i * d.in_stride;
      one.out_addr = d.out_addr + i * d.out_stride;
      execute(one, mem);
    }
    return;
  }
  const Shape s = shape_of(d);
  const Op op = static_cast<Op>(d.op);
  check_in_memory(mem.size(), d, "input", d.in_addr, s.in_bytes);
  if (op == Op::Add) check_in_memory(mem.size(), d, "second input", d.in2_addr, s.in_bytes);
  if (has_residual(d)) check_in_memory(mem.size(), d, "residual", d.in2_addr, s.out_bytes);
  if (s.wgt_bytes) check_in_memory(mem.size(), d, "weights", d.wgt_addr, s.wgt_bytes);
  if (s.prm_bytes) check_in_memory(mem.size(), d, "parameters", d.prm_addr, s.prm_bytes);
  check_in_memory(mem.size(), d, "output", d.out_addr, s.out_bytes);

  // Pointers are formed only for the tensors the op has (the others may be any address).
  const auto* base = reinterpret_cast<const int8_t*>(mem.data());
  const Tensors t{base + d.in_addr, op == Op::Add || has_residual(d) ? base + d.in2_addr : nullptr,
                  s.wgt_bytes ? base + d.wgt_addr : nullptr,
                  s.prm_bytes ? mem.data() + d.prm_addr : nullptr};
  // The layer reads all of its inputs before it writes: results go to scratch first.
  Scratch& sc = scratch();
  sc.out.resize(s.out_bytes);
  int8_t* out = sc.out.data();
  switch (op) {
    case Op::Conv:
      conv(d, s, t, sc, out);
      break;
    case Op::DwConv:
      dwconv(d, s, t, sc, out);
      break;
    case Op::Fc:
      fc(d, s, t, sc, out);
      break;
    case Op::MaxPool:
    case Op::AvgPool:
      pool(d, s, t, sc, out);
      break;
    case Op::Add:
      add_into(d, t.in, t.in2, s.in_bytes, out);
      break;
    case Op::Gap:
      gap(d, t, sc, out);
      break;
  }
  if (has_residual(d)) add_into(d, out, t.in2, s.out_bytes, out);
  std::memcpy(mem.data() + d.out_addr, out, s.out_bytes);
}

RunResult run(std::span<uint8_t> mem, const hw::Config& cfg, uint32_t desc_addr, uint32_t count,
              uint32_t win_base, uint32_t win_limit, uint32_t scratch_base) {
  // the window as the engine's CSRs hold it: clamped to the address space
  win_base = cfg.clamp_window(win_base);
  win_limit = cfg.clamp_window(win_limit);
  if (win_base < win_limit && win_limit > mem.size()) {
    throw std::out_of_range("memory window [" + std::to_string(win_base) + ", " +
                            std::to_string(win_limit) + ") extends past the memory of " +
                            std::to_string(mem.size()) + " bytes");
  }
  RunResult r;
  cycles::DramTiming dram = cycles::default_dram(cfg);
  dram.scratch_base = cfg.scratch_window(scratch_base);
  const ScratchWindow sw{cfg, scratch_base};
  auto stop = [&](hw::Err e, uint32_t i) {
    r.err = e;
    r.err_index = i;
  };
  if (count == 0) stop(hw::Err::EmptyProgram, 0);
  std::vector<Desc> done;
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t at = uint64_t{desc_addr} + uint64_t{hw::kDescBytes} * i;
    if (at < win_base || at + hw::kDescBytes > win_limit || sw.overlaps(at, hw::kDescBytes)) {
      stop(hw::Err::Window, i);
      break;
    }
    std::array<uint32_t, hw::kDescWords> words{};
    for (uint32_t j = 0; j < hw::kDescWords; ++j) words[j] = le32(mem.data() + at + 4 * j);
    const Desc d = decode(words);
    if (const hw::Err e = validate(d, cfg, win_base, win_limit, scratch_base);
        e != hw::Err::None) {
      stop(e, i);
      break;
    }
    // The engine finds a bad record only when it reaches it; the reference checks them all first.
    const Shape s = shape_of(d);
    bool bad_record = false;
    for (uint64_t off = 6; off < s.prm_bytes; off += hw::kParamBytes) {
      const uint8_t sh = mem[d.prm_addr + off];
      bad_record |= sh < 1 || sh > hw::kMaxShift;
    }
    if (bad_record) {
      stop(hw::Err::BadQuant, i);
      break;
    }
    execute(d, mem);
    ++r.layers_done;
    done.push_back(d);
  }
  // Timing of the layers that completed (an erroneous run's partial timing is not modeled);
  // the memo replays each distinct layer and pair of consecutive layers once.
  if (r.err == hw::Err::None) {
    cycles::LayerMemo memo(cfg, dram);
    memo.add_program(done, desc_addr, r.counters);
  }
  return r;
}

}  // namespace nasa::ref
