// Unit tests of the reference model: numerics, descriptor encoding and validation, every op
// against a deliberately naive implementation written here, whole programs through run(), and
// the memory-image helpers. Random cases print their seed; NASA_TEST_SCALE=n runs n times more.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "nasa/desc.h"
#include "nasa/hw_spec.h"
#include "nasa/memory_image.h"
#include "nasa/refmodel.h"

namespace nasa {
namespace {

using hw::Act;
using hw::Err;
using hw::Op;
using Tensor = std::vector<int8_t>;

uint8_t u8(Op op) { return static_cast<uint8_t>(op); }
uint8_t u8(Act a) { return static_cast<uint8_t>(a); }

int scale() {
  const char* s = std::getenv("NASA_TEST_SCALE");
  return s ? std::max(1, std::atoi(s)) : 1;
}

// ---------------------------------------------------------------------------------------------
// The naive model: straight nested loops over the math of docs/engine.md, sharing no code with
// the reference model. Rounding by floor division, int32 wrap by explicit modular reduction.

int64_t naive_requant(int64_t acc, int64_t m, int s) {
  const int64_t den = int64_t{1} << s;
  const int64_t num = acc * m + den / 2;
  int64_t q = num / den;  // C++ division truncates toward zero; make it floor
  if (num % den != 0 && num < 0) q -= 1;
  return q;
}

int64_t wrap32(int64_t v) {
  int64_t r = v % 4294967296LL;
  if (r < 0) r += 4294967296LL;
  return r >= 2147483648LL ? r - 4294967296LL : r;
}

int8_t naive_out(int64_t v, uint8_t act, uint8_t q6) {
  if (v > 127) v = 127;
  if (v < -128) v = -128;
  if (act == u8(Act::Relu) && v < 0) v = 0;
  if (act == u8(Act::Relu6)) {
    if (v < 0) v = 0;
    if (v > q6) v = q6;
  }
  return static_cast<int8_t>(v);
}

int out_size(int n, int stride) { return (n + stride - 1) / stride; }

struct Act6 {
  uint8_t act = 0, q6 = 0;
};

Tensor naive_conv(const Tensor& x, int H, int W, int Cin, const Tensor& w, int Cout, int k,
                  int stride, const std::vector<ParamRecord>& p, Act6 a) {
  const int Ho = out_size(H, stride), Wo = out_size(W, stride), pad = (k - 1) / 2;
  Tensor y(size_t(Ho) * Wo * Cout);
  for (int oy = 0; oy < Ho; oy++)
    for (int ox = 0; ox < Wo; ox++)
      for (int co = 0; co < Cout; co++) {
        int64_t acc = p[co].bias;
        for (int ky = 0; ky < k; ky++)
          for (int kx = 0; kx < k; kx++)
            for (int ci = 0; ci < Cin; ci++) {
              const int iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              acc += int64_t{x[(size_t(iy) * W + ix) * Cin + ci]} *
                     w[((size_t(co) * k + ky) * k + kx) * Cin + ci];
            }
        y[(size_t(oy) * Wo + ox) * Cout + co] =
            naive_out(naive_requant(wrap32(acc), p[co].m, p[co].s), a.act, a.q6);
      }
  return y;
}

Tensor naive_dwconv(const Tensor& x, int H, int W, int C, const Tensor& w, int k, int stride,
                    const std::vector<ParamRecord>& p, Act6 a) {
  const int Ho = out_size(H, stride), Wo = out_size(W, stride), pad = (k - 1) / 2;
  Tensor y(size_t(Ho) * Wo * C);
  for (int c = 0; c < C; c++)
    for (int oy = 0; oy < Ho; oy++)
      for (int ox = 0; ox < Wo; ox++) {
        int64_t acc = p[c].bias;
        for (int ky = 0; ky < k; ky++)
          for (int kx = 0; kx < k; kx++) {
            const int iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
              acc += int64_t{x[(size_t(iy) * W + ix) * C + c]} * w[(size_t(ky) * k + kx) * C + c];
          }
        y[(size_t(oy) * Wo + ox) * C + c] =
            naive_out(naive_requant(wrap32(acc), p[c].m, p[c].s), a.act, a.q6);
      }
  return y;
}

Tensor naive_fc(const Tensor& x, const Tensor& w, int Cout, const std::vector<ParamRecord>& p,
                Act6 a) {
  const size_t n = x.size();
  Tensor y(Cout);
  for (int co = 0; co < Cout; co++) {
    int64_t acc = p[co].bias;
    for (size_t i = 0; i < n; i++) acc += int64_t{x[i]} * w[co * n + i];
    y[co] = naive_out(naive_requant(wrap32(acc), p[co].m, p[co].s), a.act, a.q6);
  }
  return y;
}

// Max pool (is_max) or average pool, 3x3 window.
Tensor naive_pool(bool is_max, const Tensor& x, int H, int W, int C, int stride, int m, int s,
                  Act6 a) {
  const int Ho = out_size(H, stride), Wo = out_size(W, stride);
  Tensor y(size_t(Ho) * Wo * C);
  for (int oy = 0; oy < Ho; oy++)
    for (int ox = 0; ox < Wo; ox++)
      for (int c = 0; c < C; c++) {
        int64_t best = -1000, sum = 0;
        for (int ky = 0; ky < 3; ky++)
          for (int kx = 0; kx < 3; kx++) {
            const int iy = oy * stride - 1 + ky, ix = ox * stride - 1 + kx;
            const bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
            const int v = inside ? x[(size_t(iy) * W + ix) * C + c] : 0;
            sum += v;
            if (inside) best = std::max<int64_t>(best, v);
          }
        y[(size_t(oy) * Wo + ox) * C + c] =
            naive_out(is_max ? best : naive_requant(sum, m, s), a.act, a.q6);
      }
  return y;
}

Tensor naive_add(const Tensor& x, const Tensor& x2, int m, int s, int mb, int sb, Act6 a) {
  Tensor y(x.size());
  for (size_t i = 0; i < x.size(); i++)
    y[i] = naive_out(naive_requant(x[i], m, s) + naive_requant(x2[i], mb, sb), a.act, a.q6);
  return y;
}

Tensor naive_gap(const Tensor& x, int H, int W, int C, int m, int s, Act6 a) {
  Tensor y(C);
  for (int c = 0; c < C; c++) {
    int64_t sum = 0;
    for (int i = 0; i < H * W; i++) sum += x[size_t(i) * C + c];
    y[c] = naive_out(naive_requant(sum, m, s), a.act, a.q6);
  }
  return y;
}

// ---------------------------------------------------------------------------------------------
// Random data.

struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t seed) : g(seed) {}
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g); }
  bool chance(double p) { return std::bernoulli_distribution(p)(g); }
  Tensor tensor(size_t n) {
    Tensor t(n);
    for (auto& v : t) v = static_cast<int8_t>(uniform(-128, 127));
    return t;
  }
  // A shift that keeps typical outputs of an accumulator of magnitude ~amp*m inside int8, with
  // some cases far off so both saturation directions are exercised.
  uint8_t shift_for(double amp, int m) {
    int s = 1;
    while (s < 47 && amp * m / double(int64_t{1} << s) > 64.0) s++;
    if (chance(0.15)) s += uniform(-6, 0);
    return static_cast<uint8_t>(std::clamp(s, 1, 47));
  }
  std::vector<ParamRecord> params(int n, double amp) {
    std::vector<ParamRecord> p(n);
    for (auto& r : p) {
      r.m = static_cast<uint16_t>(chance(0.05) ? uniform(0, 3) : uniform(1, 65535));
      r.s = shift_for(amp, r.m);
      r.bias =
          chance(0.1) ? uniform(-2147483647, 2147483647) : uniform(-4 * int(amp), 4 * int(amp));
    }
    return p;
  }
  Act6 act() {
    return Act6{static_cast<uint8_t>(uniform(0, 2)), static_cast<uint8_t>(uniform(0, 127))};
  }
};

// A memory image with an arena that places tensors at unaligned addresses with gaps.
struct Image {
  std::vector<uint8_t> mem;
  Arena arena;
  explicit Image(size_t bytes = 1 << 20) : mem(bytes, 0xA5), arena(0x100, bytes) {}
  uint32_t put(const Tensor& t, Rng& r) {
    const uint32_t a = arena.alloc(t.size() + uint64_t(r.uniform(0, 7)));
    write_bytes(mem, a, t);
    return a;
  }
  uint32_t put(const std::vector<ParamRecord>& p, Rng& r) {
    const uint32_t a = arena.alloc(p.size() * hw::kParamBytes + uint64_t(r.uniform(0, 7)));
    write_params(mem, a, p);
    return a;
  }
  uint32_t out(uint64_t n, Rng& r) { return arena.alloc(n + uint64_t(r.uniform(0, 7))); }
  Tensor read(uint32_t a, uint64_t n) const { return read_i8(mem, a, n); }
};

uint64_t random_seed(int i) { return 0x5EED0000u + uint64_t(i); }

// ---------------------------------------------------------------------------------------------
// Requant and activation.

TEST(Requant, RoundsHalfUp) {
  EXPECT_EQ(ref::requant(1, 1, 1), 1);    // 0.5 -> 1
  EXPECT_EQ(ref::requant(-1, 1, 1), 0);   // -0.5 -> 0 (half up, not away from zero)
  EXPECT_EQ(ref::requant(3, 1, 1), 2);    // 1.5 -> 2
  EXPECT_EQ(ref::requant(-3, 1, 1), -1);  // -1.5 -> -1
  EXPECT_EQ(ref::requant(5, 1, 2), 1);    // 1.25 -> 1
  EXPECT_EQ(ref::requant(6, 1, 2), 2);    // 1.5 -> 2
  EXPECT_EQ(ref::requant(-6, 1, 2), -1);  // -1.5 -> -1
  EXPECT_EQ(ref::requant(-7, 1, 2), -2);  // -1.75 -> -2
  EXPECT_EQ(ref::requant(-5, 1, 2), -1);  // -1.25 -> -1
}

TEST(Requant, ShiftOneSaturatesBothWays) {
  EXPECT_EQ(ref::requant(253, 1, 1), 127);    // 126.5 -> 127
  EXPECT_EQ(ref::requant(254, 1, 1), 127);    // exactly 127
  EXPECT_EQ(ref::requant(255, 1, 1), 127);    // 127.5 -> 128 -> saturated
  EXPECT_EQ(ref::requant(-256, 1, 1), -128);  // exactly -128
  EXPECT_EQ(ref::requant(-257, 1, 1), -128);  // -128.5 -> -128
  EXPECT_EQ(ref::requant(-258, 1, 1), -128);  // -129 -> saturated
  EXPECT_EQ(ref::requant(100000, 3, 1), 127);
  EXPECT_EQ(ref::requant(-100000, 3, 1), -128);
}

TEST(Requant, ShiftFortySevenAndLargeMultiplier) {
  EXPECT_EQ(ref::requant(2147483647, 65535, 47), 1);
  EXPECT_EQ(ref::requant(-2147483648LL, 65535, 47), -1);
  EXPECT_EQ(ref::requant(0, 65535, 47), 0);
  EXPECT_EQ(ref::requant(1000, 65535, 20), 62);    // 62.4990 -> 62
  EXPECT_EQ(ref::requant(-1000, 65535, 20), -62);  // -62.4990 -> -62
  EXPECT_EQ(ref::requant(2147483647, 65535, 30), 127);
  EXPECT_EQ(ref::requant(-2147483648LL, 65535, 30), -128);
}

TEST(Requant, ZeroMultiplierGivesZero) {
  for (int s = 1; s <= 47; s++) {
    EXPECT_EQ(ref::requant(2147483647, 0, s), 0);
    EXPECT_EQ(ref::requant(-2147483648LL, 0, s), 0);
  }
}

TEST(Requant, AgreesWithFloorDivisionOnRandomValues) {
  const uint64_t seed = random_seed(1);
  SCOPED_TRACE("seed " + std::to_string(seed));
  Rng r(seed);
  for (int i = 0; i < 200000 * scale(); i++) {
    const int64_t acc =
        r.chance(0.5) ? r.uniform(-300000, 300000) : int64_t(int32_t(r.g()));  // full int32 range
    const uint32_t m = uint32_t(r.uniform(0, 65535)), s = uint32_t(r.uniform(1, 47));
    const int64_t want = std::clamp<int64_t>(naive_requant(acc, m, int(s)), -128, 127);
    ASSERT_EQ(ref::requant(acc, m, s), want) << "acc=" << acc << " M=" << m << " S=" << s;
  }
}

TEST(Requant, RejectsIllegalShift) {
  EXPECT_THROW(ref::requant(1, 1, 0), std::invalid_argument);
  EXPECT_THROW(ref::requant(1, 1, 48), std::invalid_argument);
}

TEST(Activate, NoneSaturatesOnly) {
  EXPECT_EQ(ref::activate(1000, u8(Act::None), 0), 127);
  EXPECT_EQ(ref::activate(-1000, u8(Act::None), 0), -128);
  EXPECT_EQ(ref::activate(-5, u8(Act::None), 0), -5);
  EXPECT_EQ(ref::activate(127, u8(Act::None), 0), 127);
  EXPECT_EQ(ref::activate(-128, u8(Act::None), 0), -128);
}

TEST(Activate, ReluClampsToZeroAnd127) {
  EXPECT_EQ(ref::activate(-1, u8(Act::Relu), 0), 0);
  EXPECT_EQ(ref::activate(-1000, u8(Act::Relu), 0), 0);
  EXPECT_EQ(ref::activate(0, u8(Act::Relu), 0), 0);
  EXPECT_EQ(ref::activate(77, u8(Act::Relu), 0), 77);
  EXPECT_EQ(ref::activate(1000, u8(Act::Relu), 0), 127);
}

TEST(Activate, Relu6ClampsToQ6) {
  for (int q6 : {0, 1, 6, 48, 100, 126, 127}) {
    SCOPED_TRACE("q6 " + std::to_string(q6));
    const auto q = static_cast<uint8_t>(q6);
    EXPECT_EQ(ref::activate(-50, u8(Act::Relu6), q), 0);
    EXPECT_EQ(ref::activate(q6, u8(Act::Relu6), q), q6);
    EXPECT_EQ(ref::activate(q6 + 1, u8(Act::Relu6), q), q6);
    EXPECT_EQ(ref::activate(100000, u8(Act::Relu6), q), q6);
    if (q6 > 0) {
      EXPECT_EQ(ref::activate(q6 - 1, u8(Act::Relu6), q), q6 - 1);
    }
  }
}

TEST(Activate, RejectsUnknownActivation) {
  EXPECT_THROW(ref::activate(0, 3, 0), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Descriptor encoding.

// Setters by table name, written independently of desc.cpp's mapping.
const std::map<std::string, std::function<void(Desc&, uint32_t)>>& setters() {
  static const std::map<std::string, std::function<void(Desc&, uint32_t)>> s = {
      {"Op", [](Desc& d, uint32_t v) { d.op = uint8_t(v); }},
      {"Act", [](Desc& d, uint32_t v) { d.act = uint8_t(v); }},
      {"K", [](Desc& d, uint32_t v) { d.k = uint8_t(v); }},
      {"Stride", [](Desc& d, uint32_t v) { d.stride = uint8_t(v); }},
      {"H", [](Desc& d, uint32_t v) { d.h = uint16_t(v); }},
      {"W", [](Desc& d, uint32_t v) { d.w = uint16_t(v); }},
      {"Cin", [](Desc& d, uint32_t v) { d.cin = uint16_t(v); }},
      {"Cout", [](Desc& d, uint32_t v) { d.cout = uint16_t(v); }},
      {"InAddr", [](Desc& d, uint32_t v) { d.in_addr = v; }},
      {"In2Addr", [](Desc& d, uint32_t v) { d.in2_addr = v; }},
      {"OutAddr", [](Desc& d, uint32_t v) { d.out_addr = v; }},
      {"WgtAddr", [](Desc& d, uint32_t v) { d.wgt_addr = v; }},
      {"PrmAddr", [](Desc& d, uint32_t v) { d.prm_addr = v; }},
      {"M", [](Desc& d, uint32_t v) { d.m = uint16_t(v); }},
      {"S", [](Desc& d, uint32_t v) { d.s = uint8_t(v); }},
      {"Q6", [](Desc& d, uint32_t v) { d.q6 = uint8_t(v); }},
      {"Mb", [](Desc& d, uint32_t v) { d.mb = uint16_t(v); }},
      {"Sb", [](Desc& d, uint32_t v) { d.sb = uint8_t(v); }},
      {"Patch", [](Desc& d, uint32_t v) { d.patch = uint8_t(v); }},
      {"OutRows", [](Desc& d, uint32_t v) { d.out_rows = uint16_t(v); }},
      {"PadTop", [](Desc& d, uint32_t v) { d.pad_top = uint8_t(v); }},
      {"Res", [](Desc& d, uint32_t v) { d.res = uint8_t(v & 1); }},
      {"Images", [](Desc& d, uint32_t v) { d.images = uint8_t(v); }},
      {"InStride", [](Desc& d, uint32_t v) { d.in_stride = v; }},
      {"OutStride", [](Desc& d, uint32_t v) { d.out_stride = v; }},
  };
  return s;
}

TEST(Encode, EveryFieldLandsWhereTheTableSays) {
  Desc zero;
  zero.k = 0;
  zero.stride = 0;
  const auto blank = encode(zero);
  for (uint32_t w : blank) EXPECT_EQ(w, 0u);
#define CHECK_FIELD(n, word, lsb, width)                                        \
  {                                                                             \
    SCOPED_TRACE(#n);                                                           \
    ASSERT_TRUE(setters().count(#n)) << "test lacks a setter for field " #n;    \
    Desc d = zero;                                                              \
    const uint32_t mask = (width) == 32 ? 0xFFFFFFFFu : ((1u << (width)) - 1u); \
    setters().at(#n)(d, 0xFFFFFFFFu);                                           \
    const auto words = encode(d);                                               \
    for (uint32_t i = 0; i < hw::kDescWords; i++)                               \
      EXPECT_EQ(words[i], i == (word) ? mask << (lsb) : 0u) << "word " << i;    \
    const Desc back = decode(words);                                            \
    EXPECT_EQ(encode(back), words);                                             \
  }
  NASA_DESC_FIELDS(CHECK_FIELD)
#undef CHECK_FIELD
}

TEST(Encode, RandomRoundTrip) {
  const uint64_t seed = random_seed(2);
  SCOPED_TRACE("seed " + std::to_string(seed));
  Rng r(seed);
  for (int i = 0; i < 1000; i++) {
    // Random words: decoding then encoding keeps every field bit (bits outside fields drop).
    std::array<uint32_t, hw::kDescWords> words{};
    for (auto& w : words) w = uint32_t(r.g());
    const auto again = encode(decode(words));
    EXPECT_EQ(encode(decode(again)), again);
    EXPECT_EQ(again[3], words[3]);  // a full-word field
    Desc e;
    for (const auto& [name, set] : setters()) set(e, uint32_t(r.g()));
    const Desc f = decode(encode(e));
    EXPECT_EQ(encode(f), encode(e));
    EXPECT_EQ(f.op, e.op);
    EXPECT_EQ(f.act, e.act);
    EXPECT_EQ(f.k, e.k);
    EXPECT_EQ(f.stride, e.stride);
    EXPECT_EQ(f.h, e.h);
    EXPECT_EQ(f.w, e.w);
    EXPECT_EQ(f.cin, e.cin);
    EXPECT_EQ(f.cout, e.cout);
    EXPECT_EQ(f.in_addr, e.in_addr);
    EXPECT_EQ(f.in2_addr, e.in2_addr);
    EXPECT_EQ(f.out_addr, e.out_addr);
    EXPECT_EQ(f.wgt_addr, e.wgt_addr);
    EXPECT_EQ(f.prm_addr, e.prm_addr);
    EXPECT_EQ(f.m, e.m);
    EXPECT_EQ(f.s, e.s);
    EXPECT_EQ(f.q6, e.q6);
    EXPECT_EQ(f.mb, e.mb);
    EXPECT_EQ(f.sb, e.sb);
    EXPECT_EQ(f.out_rows, e.out_rows);
    EXPECT_EQ(f.pad_top, e.pad_top);
    EXPECT_EQ(f.res, e.res);
    EXPECT_EQ(f.images, e.images);
    EXPECT_EQ(f.in_stride, e.in_stride);
    EXPECT_EQ(f.out_stride, e.out_stride);
  }
}

TEST(Encode, DescriptorBytesAreLittleEndian) {
  std::vector<uint8_t> mem(256, 0);
  Desc d;
  d.op = u8(Op::Conv);
  d.act = 2;
  d.k = 3;
  d.stride = 2;
  d.in_addr = 0x11223344;
  write_desc(mem, 64, d);
  EXPECT_EQ(mem[64], 1);  // op in the low byte of word 0
  EXPECT_EQ(mem[65], 2);
  EXPECT_EQ(mem[66], 3);
  EXPECT_EQ(mem[67], 2);
  EXPECT_EQ(mem[64 + 12], 0x44);  // word 3 = InAddr
  EXPECT_EQ(mem[64 + 15], 0x11);
  EXPECT_EQ(encode(read_desc(mem, 64)), encode(d));
}

TEST(Names, OpAndErrorNames) {
  EXPECT_EQ(op_name(u8(Op::Conv)), "Conv");
  EXPECT_EQ(op_name(u8(Op::Gap)), "Gap");
  EXPECT_NE(op_name(0).find('0'), std::string::npos);
  EXPECT_EQ(err_name(Err::Window), "Window");
  EXPECT_EQ(err_name(Err::EmptyProgram), "EmptyProgram");
}

TEST(Names, ConfigByName) {
  EXPECT_EQ(config_by_name("sim").rows, 16u);
  EXPECT_EQ(config_by_name("fpga").in_buf_bytes, 2048u);
  try {
    config_by_name("huge");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("huge"), std::string::npos) << msg;
    for (const auto& c : hw::kConfigs) EXPECT_NE(msg.find(c.name), std::string::npos) << msg;
  }
}

// ---------------------------------------------------------------------------------------------
// Shapes and validation.

TEST(Shape, StridedOddSizesRoundUp) {
  Desc d;
  d.op = u8(Op::Conv);
  d.k = 3;
  d.stride = 2;
  d.h = 7;
  d.w = 5;
  d.cin = 3;
  d.cout = 8;
  const Shape s = shape_of(d);
  EXPECT_EQ(s.ho, 4u);
  EXPECT_EQ(s.wo, 3u);
  EXPECT_EQ(s.in_bytes, 7u * 5 * 3);
  EXPECT_EQ(s.out_bytes, 4u * 3 * 8);
  EXPECT_EQ(s.wgt_bytes, 8u * 9 * 3);
  EXPECT_EQ(s.prm_bytes, 8u * 8);
  EXPECT_EQ(s.kred, 27u);
  EXPECT_EQ(s.macs, 4u * 3 * 8 * 27);
}

TEST(Shape, FcGapAddAndPools) {
  Desc d;
  d.h = 3;
  d.w = 4;
  d.cin = 5;
  d.cout = 6;
  d.op = u8(Op::Fc);
  Shape s = shape_of(d);
  EXPECT_EQ(s.out_bytes, 6u);
  EXPECT_EQ(s.wgt_bytes, 6u * 60);
  EXPECT_EQ(s.macs, 6u * 60);
  d.op = u8(Op::Gap);
  d.cout = 5;
  s = shape_of(d);
  EXPECT_EQ(s.out_bytes, 5u);
  EXPECT_EQ(s.wgt_bytes + s.prm_bytes + s.macs, 0u);
  d.op = u8(Op::Add);
  d.stride = 2;  // not an Add field: ignored
  s = shape_of(d);
  EXPECT_EQ(s.out_bytes, 60u);
  d.op = u8(Op::DwConv);
  d.k = 5;
  s = shape_of(d);
  EXPECT_EQ(s.wgt_bytes, 25u * 5);
  EXPECT_EQ(s.out_bytes, 2u * 2 * 5);
  EXPECT_EQ(s.macs, 2u * 2 * 5 * 25);
  d.op = u8(Op::MaxPool);
  d.k = 3;
  s = shape_of(d);
  EXPECT_EQ(s.out_bytes, 2u * 2 * 5);
  EXPECT_EQ(s.macs, 0u);
}

class Validate : public ::testing::Test {
 protected:
  const hw::Config& cfg = config_by_name("sim");
  uint32_t base = 0x1000, limit = 0x100000;
  Desc conv() const {
    Desc d;
    d.op = u8(Op::Conv);
    d.k = 3;
    d.h = d.w = 8;
    d.cin = d.cout = 16;
    d.in_addr = 0x1000;
    d.wgt_addr = 0x2000;
    d.prm_addr = 0x3000;
    d.out_addr = 0x4000;
    return d;
  }
  Desc of(Op op) const {
    Desc d = conv();
    d.op = u8(op);
    d.in2_addr = 0x5000;
    d.s = d.sb = 8;
    return d;
  }
  Err check(const Desc& d) const { return validate(d, cfg, base, limit); }
  // `op` with its tensors far apart and a window over all memory (the capacity checks)
  Desc apart(Op op) {
    limit = 0xFFFFFFFFu;
    Desc d = of(op);
    d.in_addr = 0x100000;
    d.in2_addr = 0x200000;
    d.out_addr = 0x300000;
    return d;
  }
};

TEST_F(Validate, AcceptsEveryOpInItsBaseForm) {
  for (Op op : {Op::Conv, Op::DwConv, Op::Fc, Op::MaxPool, Op::AvgPool, Op::Add, Op::Gap}) {
    SCOPED_TRACE(op_name(u8(op)));
    EXPECT_EQ(check(of(op)), Err::None);
  }
}

TEST_F(Validate, BadOpcode) {
  for (int op : {0, 8, 255}) {
    Desc d = conv();
    d.op = uint8_t(op);
    d.act = 9;  // also bad, but the opcode comes first
    EXPECT_EQ(check(d), Err::BadOpcode) << op;
  }
}

TEST_F(Validate, BadAct) {
  Desc d = conv();
  d.act = 3;
  d.stride = 3;  // also bad, reported later
  EXPECT_EQ(check(d), Err::BadAct);
}

TEST_F(Validate, BadStride) {
  for (Op op : {Op::Conv, Op::DwConv, Op::MaxPool, Op::AvgPool}) {
    for (int st : {0, 3, 255}) {
      Desc d = of(op);
      d.stride = uint8_t(st);
      d.k = 4;  // also bad, reported later
      EXPECT_EQ(check(d), Err::BadStride) << op_name(d.op) << " stride " << st;
    }
  }
  for (Op op : {Op::Fc, Op::Add, Op::Gap}) {  // stride is not a field of these
    Desc d = of(op);
    d.stride = 7;
    EXPECT_EQ(check(d), Err::None) << op_name(d.op);
  }
}

TEST_F(Validate, BadKernel) {
  for (Op op : {Op::Conv, Op::DwConv}) {
    for (int k : {0, 2, 4, 9, 255}) {
      Desc d = of(op);
      d.k = uint8_t(k);
      d.h = 0;  // also bad, reported later
      EXPECT_EQ(check(d), Err::BadKernel) << op_name(d.op) << " k " << k;
    }
  }
  for (Op op : {Op::MaxPool, Op::AvgPool}) {
    for (int k : {1, 5, 7}) {
      Desc d = of(op);
      d.k = uint8_t(k);
      EXPECT_EQ(check(d), Err::BadKernel) << op_name(d.op) << " k " << k;
    }
  }
  for (Op op : {Op::Fc, Op::Add, Op::Gap}) {  // k is not a field of these
    Desc d = of(op);
    d.k = 0;
    EXPECT_EQ(check(d), Err::None) << op_name(d.op);
  }
}

TEST_F(Validate, ZeroDim) {
  for (int which = 0; which < 4; which++) {
    Desc d = conv();
    (which == 0 ? d.h : which == 1 ? d.w : which == 2 ? d.cin : d.cout) = 0;
    d.op = u8(Op::DwConv);  // a zero Cin or Cout is also a channel mismatch, reported later
    EXPECT_EQ(check(d), Err::ZeroDim) << which;
  }
}

TEST_F(Validate, BadChannels) {
  for (Op op : {Op::DwConv, Op::MaxPool, Op::AvgPool, Op::Add, Op::Gap}) {
    Desc d = of(op);
    d.cout = 17;
    EXPECT_EQ(check(d), Err::BadChannels) << op_name(d.op);
  }
  for (Op op : {Op::Conv, Op::Fc}) {
    Desc d = of(op);
    d.cout = 17;
    EXPECT_EQ(check(d), Err::None) << op_name(d.op);
  }
}

TEST_F(Validate, BadBand) {
  for (Op op : {Op::Conv, Op::DwConv, Op::MaxPool, Op::AvgPool}) {
    Desc d = of(op);
    d.k = 3;
    d.stride = 2;
    d.h = 9;  // ceil(9/2) = 5 output rows
    d.out_rows = 5;
    d.pad_top = 1;
    EXPECT_EQ(check(d), Err::None) << op_name(d.op);
    EXPECT_EQ(shape_of(d).ho, 5u);
    d.out_rows = 2;
    d.pad_top = 0;
    EXPECT_EQ(check(d), Err::None) << op_name(d.op);
    EXPECT_EQ(shape_of(d).ho, 2u);
    EXPECT_EQ(top_pad(d), 0u);
    d.out_rows = 6;
    d.s = 0;  // bad quant as well (pools), reported later
    EXPECT_EQ(check(d), Err::BadBand) << op_name(d.op);
    d.out_rows = 1;
    d.pad_top = 2;
    EXPECT_EQ(check(d), Err::BadBand) << op_name(d.op);
  }
  for (Op op : {Op::Fc, Op::Add, Op::Gap}) {
    Desc d = of(op);
    d.out_rows = 1;
    EXPECT_EQ(check(d), Err::BadBand) << op_name(d.op);
  }
  Desc d = of(Op::Conv);  // a 1x1 conv has no padding: PadTop 0 only
  d.k = 1;
  d.out_rows = 1;
  d.pad_top = 1;
  EXPECT_EQ(check(d), Err::BadBand);
  d.pad_top = 0;
  EXPECT_EQ(check(d), Err::None);
}

TEST_F(Validate, BadResidual) {
  for (Op op : {Op::Conv, Op::DwConv}) {
    Desc d = of(op);
    d.res = 1;
    EXPECT_EQ(check(d), Err::None) << op_name(d.op);
    d.stride = 2;
    d.s = 0;  // bad quant as well, reported later
    EXPECT_EQ(check(d), Err::BadResidual) << op_name(d.op);
    d.stride = 1;
    EXPECT_EQ(check(d), Err::BadQuant) << op_name(d.op);  // Res takes the add's S and Sb
    d.s = 8;
    d.sb = 48;
    EXPECT_EQ(check(d), Err::BadQuant) << op_name(d.op);
  }
  for (Op op : {Op::Fc, Op::MaxPool, Op::AvgPool, Op::Add, Op::Gap}) {
    Desc d = of(op);
    d.res = 1;
    EXPECT_EQ(check(d), Err::BadResidual) << op_name(d.op);
  }
  // the residual (Ho x Wo x Cout) comes first in the input buffer, port aligned, then the input
  Desc d = apart(Op::Conv);
  d.k = 1;
  d.h = 1;
  d.cin = 2;
  d.cout = 2;
  d.res = 1;
  d.w = static_cast<uint16_t>(cfg.in_buf_bytes / 4);  // residual + input fill the buffer
  EXPECT_EQ(input_buffer_need(d, cfg), cfg.in_buf_bytes);
  EXPECT_EQ(check(d), Err::None);
  d.w = static_cast<uint16_t>(cfg.in_buf_bytes / 4 + 1);
  EXPECT_EQ(check(d), Err::Oversize);
  d.w = 4;
  d.in2_addr = limit - 3;  // the residual's 4 bytes end past the window
  EXPECT_EQ(check(d), Err::Window);
}

// Packed images (docs/engine.md "Packed images"): Conv, DwConv and Fc only, not with a band or
// a residual, not on the board's controller; the inputs take Images port-aligned slots of the
// input buffer, and the window holds every image's input and output.
TEST_F(Validate, BadPack) {
  for (Op op : {Op::Conv, Op::DwConv, Op::Fc}) {
    Desc d = apart(op);
    d.images = 4;
    d.in_stride = 1024;
    d.out_stride = 1024;
    EXPECT_EQ(check(d), Err::None) << op_name(d.op);
    EXPECT_EQ(validate(d, config_by_name("up5k"), base, limit), Err::BadPack) << op_name(d.op);
    d.images = 1;  // 0 and 1: one image, any strides
    EXPECT_NE(validate(d, config_by_name("up5k"), base, limit), Err::BadPack) << op_name(d.op);
  }
  for (Op op : {Op::MaxPool, Op::AvgPool, Op::Add, Op::Gap}) {
    Desc d = of(op);
    d.images = 2;
    d.s = 0;  // bad quant as well, reported later
    EXPECT_EQ(check(d), Err::BadPack) << op_name(d.op);
  }
  Desc d = of(Op::Conv);
  d.images = 2;
  d.out_rows = 1;
  EXPECT_EQ(check(d), Err::BadPack);  // a band
  d.out_rows = 0;
  d.res = 1;
  EXPECT_EQ(check(d), Err::BadPack);  // a residual
  d.res = 0;
  // the buffer holds Images inputs, each but the last rounded up to the port width
  d = apart(Op::Conv);
  d.k = 1;
  d.h = 1;
  d.cin = d.cout = 1;
  d.w = static_cast<uint16_t>(cfg.in_buf_bytes / 4 - cfg.mem_bytes + 1);
  d.images = 4;
  d.in_stride = d.out_stride = 0x10000;
  EXPECT_EQ(input_buffer_need(d, cfg), cfg.in_buf_bytes - cfg.mem_bytes + 1);
  EXPECT_EQ(check(d), Err::None);
  d.images = 5;
  EXPECT_EQ(check(d), Err::Oversize);
  // the window: the last image's input and output (1024 bytes each)
  d = of(Op::Conv);
  d.images = 2;
  d.in_stride = limit - d.in_addr - 1024;  // the last input ends at the window's end
  d.out_stride = 0x100;
  EXPECT_EQ(check(d), Err::None);
  ++d.in_stride;
  EXPECT_EQ(check(d), Err::Window);
  d.in_stride = 0;
  d.out_stride = limit - d.out_addr - 1023;
  EXPECT_EQ(check(d), Err::Window);
  d.out_stride = limit - d.out_addr - 1024;
  EXPECT_EQ(check(d), Err::None);
  d.out_stride = 0xFFFFFFFFu;  // past 2^32: no wrap-around
  EXPECT_EQ(check(d), Err::Window);
}

TEST_F(Validate, OversizeInputBuffer) {
  limit = 0xFFFFFFFFu;
  Desc d = of(Op::MaxPool);
  d.h = static_cast<uint16_t>(cfg.in_buf_bytes / 256);
  d.w = 16;
  d.cin = d.cout = 16;  // exactly the input buffer
  d.in_addr = 0x100000;
  d.out_addr = 0x400000;
  EXPECT_EQ(check(d), Err::None);
  d.cin = d.cout = 17;
  d.act = u8(Act::Relu6);
  d.q6 = 200;  // bad quant as well, reported later
  EXPECT_EQ(check(d), Err::Oversize);
}

TEST_F(Validate, OversizeAddCountsBothInputsWithAlignment) {
  Desc d = apart(Op::Add);
  d.h = 2;
  d.cin = d.cout = 1;
  const uint32_t half = cfg.in_buf_bytes / 2;  // h*w per input; 2*half fills the buffer
  d.w = static_cast<uint16_t>(half / 2);
  EXPECT_EQ(check(d), Err::None);
  d.w = static_cast<uint16_t>(half / 2 - 4);  // aligned up to half: still fits
  EXPECT_EQ(check(d), Err::None);
  d.h = 1;
  d.w = static_cast<uint16_t>(half / 2);  // the buffer has room for four times this
  EXPECT_EQ(check(d), Err::None);
  d.h = 2;
  d.w = static_cast<uint16_t>(half / 2 + 1);  // align_up(half + 2, 32) + half + 2 > buffer
  EXPECT_EQ(check(d), Err::Oversize);
}

TEST_F(Validate, OversizeReductionLength) {
  limit = 0xFFFFFFFFu;
  Desc d = conv();
  d.k = 7;
  d.h = d.w = 1;
  d.cin = 167;  // 49 * 167 = 8183 <= 8192
  EXPECT_EQ(check(d), Err::None);
  d.cin = 168;  // 8232
  EXPECT_EQ(check(d), Err::Oversize);
  Desc f = of(Op::Fc);
  f.h = 1;
  f.w = 8;
  f.cin = 1024;  // 8192
  EXPECT_EQ(check(f), Err::None);
  f.cin = 1025;
  EXPECT_EQ(check(f), Err::Oversize);
  Desc w = of(Op::DwConv);  // a depthwise reduction is k*k, never Oversize by Cin
  w.k = 7;
  w.h = w.w = 1;
  w.cin = w.cout = 2000;
  EXPECT_EQ(check(w), Err::None);
}

TEST_F(Validate, BadQuant) {
  for (Op op : {Op::AvgPool, Op::Gap, Op::Add}) {
    for (int s : {0, 48, 255}) {
      Desc d = of(op);
      d.s = uint8_t(s);
      d.in_addr = 0;  // outside the window too, reported later
      EXPECT_EQ(check(d), Err::BadQuant) << op_name(d.op) << " S " << s;
    }
  }
  Desc a = of(Op::Add);
  a.sb = 0;
  EXPECT_EQ(check(a), Err::BadQuant);
  a.sb = 47;
  a.s = 1;
  EXPECT_EQ(check(a), Err::None);
  // Descriptor S is not used by ops with per-channel records.
  for (Op op : {Op::Conv, Op::DwConv, Op::Fc, Op::MaxPool}) {
    Desc d = of(op);
    d.s = 0;
    d.sb = 0;
    EXPECT_EQ(check(d), Err::None) << op_name(d.op);
  }
  Desc r = conv();
  r.act = u8(Act::Relu6);
  r.q6 = 127;
  EXPECT_EQ(check(r), Err::None);
  r.q6 = 128;
  EXPECT_EQ(check(r), Err::BadQuant);
  r.act = u8(Act::Relu);  // q6 matters only for Relu6
  EXPECT_EQ(check(r), Err::None);
}

TEST_F(Validate, WindowChecksEachRange) {
  // Sizes: input 1024, weights 2304, params 128, output 1024 (conv); in2 1024 (add).
  Desc d = conv();
  d.in_addr = 0x0FFF;  // one byte below the window
  d.wgt_addr = 0;
  EXPECT_EQ(check(d), Err::Window);
  d = conv();
  d.out_addr = limit - 1024;  // last byte of the output is the last byte of the window
  EXPECT_EQ(check(d), Err::None);
  d.out_addr = limit - 1023;
  EXPECT_EQ(check(d), Err::Window);
  d = conv();
  d.wgt_addr = limit - 2303;
  EXPECT_EQ(check(d), Err::Window);
  d = conv();
  d.prm_addr = limit - 127;
  EXPECT_EQ(check(d), Err::Window);
  Desc a = of(Op::Add);
  a.in2_addr = limit;
  EXPECT_EQ(check(a), Err::Window);
  // Unused address fields are not checked.
  a = of(Op::MaxPool);
  a.wgt_addr = a.prm_addr = a.in2_addr = 0xFFFFFFFFu;
  EXPECT_EQ(check(a), Err::None);
}

TEST_F(Validate, WindowCatchesAddressWrapAround) {
  limit = 0xFFFFFFFFu;
  Desc d = conv();
  d.in_addr = 0xFFFFFF00u;  // +1024 would wrap to 0x300 in 32-bit arithmetic
  EXPECT_EQ(check(d), Err::Window);
  d = conv();
  d.out_addr = 0xFFFFFFFFu;
  EXPECT_EQ(check(d), Err::Window);
  base = 0;
  limit = 0;  // an empty window holds nothing
  EXPECT_EQ(check(conv()), Err::Window);
}

// ---------------------------------------------------------------------------------------------
// Ops against the naive model.

struct OpCase {
  int h = 1, w = 1, cin = 1, cout = 1, k = 1, stride = 1;
  Act6 a;
};

std::string describe(const OpCase& c) {
  return "h=" + std::to_string(c.h) + " w=" + std::to_string(c.w) +
         " cin=" + std::to_string(c.cin) + " cout=" + std::to_string(c.cout) +
         " k=" + std::to_string(c.k) + " stride=" + std::to_string(c.stride) +
         " act=" + std::to_string(c.a.act) + " q6=" + std::to_string(c.a.q6);
}

Desc base_desc(Op op, const OpCase& c) {
  Desc d;
  d.op = u8(op);
  d.act = c.a.act;
  d.q6 = c.a.q6;
  d.k = uint8_t(c.k);
  d.stride = uint8_t(c.stride);
  d.h = uint16_t(c.h);
  d.w = uint16_t(c.w);
  d.cin = uint16_t(c.cin);
  d.cout = uint16_t(c.cout);
  return d;
}

// Runs one layer through ref::execute and checks its output and that nothing else changed.
// `fits` = the layer is legal on the largest configuration (execute() also runs larger ones).
void expect_layer(Image& img, const Desc& d, const Tensor& want, bool fits = true) {
  if (fits) {
    ASSERT_EQ(validate(d, config_by_name("large"), 0, uint32_t(img.mem.size())), Err::None);
  }
  std::vector<uint8_t> before = img.mem;
  ref::execute(d, img.mem);
  const Tensor got = img.read(d.out_addr, want.size());
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); i++) {
    ASSERT_EQ(int(got[i]), int(want[i])) << "output byte " << i;
  }
  write_bytes(before, d.out_addr, want);
  EXPECT_TRUE(before == img.mem) << "bytes outside the output changed";
}

void check_conv(const OpCase& c, Rng& r) {
  SCOPED_TRACE(describe(c));
  Image img;
  const Tensor x = r.tensor(size_t(c.h) * c.w * c.cin);
  const Tensor w = r.tensor(size_t(c.cout) * c.k * c.k * c.cin);
  const auto p = r.params(c.cout, 128.0 * 128.0 * std::sqrt(double(c.k * c.k * c.cin)) / 2);
  Desc d = base_desc(Op::Conv, c);
  d.in_addr = img.put(x, r);
  d.wgt_addr = img.put(w, r);
  d.prm_addr = img.put(p, r);
  d.out_addr = img.out(shape_of(d).out_bytes, r);
  expect_layer(img, d, naive_conv(x, c.h, c.w, c.cin, w, c.cout, c.k, c.stride, p, c.a));
}

void check_dwconv(const OpCase& c, Rng& r) {
  SCOPED_TRACE(describe(c));
  Image img;
  const Tensor x = r.tensor(size_t(c.h) * c.w * c.cin);
  const Tensor w = r.tensor(size_t(c.k) * c.k * c.cin);
  const auto p = r.params(c.cin, 128.0 * 128.0 * c.k / 2);
  Desc d = base_desc(Op::DwConv, c);
  d.cout = d.cin;
  d.in_addr = img.put(x, r);
  d.wgt_addr = img.put(w, r);
  d.prm_addr = img.put(p, r);
  d.out_addr = img.out(shape_of(d).out_bytes, r);
  expect_layer(img, d, naive_dwconv(x, c.h, c.w, c.cin, w, c.k, c.stride, p, c.a));
}

void check_fc(const OpCase& c, Rng& r) {
  SCOPED_TRACE(describe(c));
  Image img;
  const Tensor x = r.tensor(size_t(c.h) * c.w * c.cin);
  const Tensor w = r.tensor(size_t(c.cout) * x.size());
  const auto p = r.params(c.cout, 128.0 * 128.0 * std::sqrt(double(x.size())) / 2);
  Desc d = base_desc(Op::Fc, c);
  d.in_addr = img.put(x, r);
  d.wgt_addr = img.put(w, r);
  d.prm_addr = img.put(p, r);
  d.out_addr = img.out(shape_of(d).out_bytes, r);
  expect_layer(img, d, naive_fc(x, w, c.cout, p, c.a));
}

void check_pool(bool is_max, const OpCase& c, Rng& r) {
  SCOPED_TRACE(describe(c));
  Image img;
  const Tensor x = r.tensor(size_t(c.h) * c.w * c.cin);
  Desc d = base_desc(is_max ? Op::MaxPool : Op::AvgPool, c);
  d.k = 3;
  d.cout = d.cin;
  d.m = uint16_t(r.uniform(1, 65535));
  d.s = is_max ? uint8_t(r.uniform(0, 255)) : r.shift_for(3 * 128, d.m);
  d.in_addr = img.put(x, r);
  d.out_addr = img.out(shape_of(d).out_bytes, r);
  expect_layer(img, d, naive_pool(is_max, x, c.h, c.w, c.cin, c.stride, d.m, d.s, c.a));
}

void check_add(const OpCase& c, Rng& r) {
  SCOPED_TRACE(describe(c));
  Image img;
  const Tensor x = r.tensor(size_t(c.h) * c.w * c.cin), x2 = r.tensor(x.size());
  Desc d = base_desc(Op::Add, c);
  d.cout = d.cin;
  d.m = uint16_t(r.uniform(0, 65535));
  d.mb = uint16_t(r.uniform(0, 65535));
  d.s = r.shift_for(128, d.m);
  d.sb = r.shift_for(128, d.mb);
  d.in_addr = img.put(x, r);
  d.in2_addr = img.put(x2, r);
  d.out_addr = img.out(x.size(), r);
  expect_layer(img, d, naive_add(x, x2, d.m, d.s, d.mb, d.sb, c.a));
}

void check_gap(const OpCase& c, Rng& r) {
  SCOPED_TRACE(describe(c));
  Image img;
  const Tensor x = r.tensor(size_t(c.h) * c.w * c.cin);
  Desc d = base_desc(Op::Gap, c);
  d.cout = d.cin;
  d.m = uint16_t(r.uniform(1, 65535));
  d.s = r.shift_for(128.0 * std::sqrt(double(c.h * c.w)), d.m);
  d.in_addr = img.put(x, r);
  d.out_addr = img.out(uint64_t(c.cin), r);
  expect_layer(img, d, naive_gap(x, c.h, c.w, c.cin, d.m, d.s, c.a));
}

OpCase random_case(Rng& r, bool conv_kernel, int max_hw, int max_c) {
  OpCase c;
  c.h = r.uniform(1, max_hw);
  c.w = r.uniform(1, max_hw);
  c.cin = r.chance(0.1) ? 1 : r.uniform(1, max_c);
  c.cout = r.chance(0.1) ? 1 : r.uniform(1, max_c);
  const int ks[] = {1, 3, 5, 7};
  c.k = conv_kernel ? ks[r.uniform(0, 3)] : 3;
  c.stride = r.uniform(1, 2);
  c.a = r.act();
  return c;
}

template <typename Check>
void random_cases(int salt, int n, bool conv_kernel, int max_hw, int max_c, Check check) {
  for (int i = 0; i < n * scale(); i++) {
    const uint64_t seed = random_seed(1000 * salt + i);
    SCOPED_TRACE("seed " + std::to_string(seed));
    Rng r(seed);
    check(random_case(r, conv_kernel, max_hw, max_c), r);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// Directed shapes every windowed op must handle.
std::vector<OpCase> edge_cases(bool conv_kernel) {
  std::vector<OpCase> v;
  for (int k : conv_kernel ? std::vector<int>{1, 3, 5, 7} : std::vector<int>{3}) {
    v.push_back({1, 1, 5, 4, k, 1, {}});          // 1x1 spatial
    v.push_back({1, 1, 5, 4, k, 2, {}});          // 1x1 spatial, stride 2
    v.push_back({2, 3, 3, 2, k, 1, {1, 0}});      // kernel larger than the input
    v.push_back({7, 5, 1, 3, k, 2, {2, 6}});      // stride 2 with odd sizes, Cin = 1
    v.push_back({6, 9, 33, 35, k, 2, {2, 127}});  // stride 2, odd and even, > one 32-block
    v.push_back({4, 4, 1, 1, k, 1, {2, 0}});      // ReLU6 with q6 = 0
  }
  return v;
}

TEST(Conv, RandomShapesMatchNaive) {
  random_cases(1, 150, true, 12, 40, [](const OpCase& c, Rng& r) { check_conv(c, r); });
}

TEST(Conv, EdgeShapes) {
  Rng r(7);
  for (const OpCase& c : edge_cases(true)) check_conv(c, r);
}

TEST(DwConv, RandomShapesMatchNaive) {
  random_cases(2, 150, true, 14, 40, [](const OpCase& c, Rng& r) { check_dwconv(c, r); });
}

TEST(DwConv, EdgeShapes) {
  Rng r(8);
  for (const OpCase& c : edge_cases(true)) check_dwconv(c, r);
}

TEST(Fc, RandomShapesMatchNaive) {
  random_cases(3, 100, false, 6, 70, [](const OpCase& c, Rng& r) { check_fc(c, r); });
}

TEST(Fc, LongReductionAndOneByOne) {
  Rng r(9);
  check_fc({1, 1, 1, 1, 1, 1, {}}, r);
  check_fc({1, 1, 1000, 10, 1, 1, {}}, r);
  check_fc({4, 4, 512, 3, 1, 1, {1, 0}}, r);  // 8192 = KredMax
}

TEST(MaxPool, RandomShapesMatchNaive) {
  random_cases(4, 150, false, 14, 40, [](const OpCase& c, Rng& r) { check_pool(true, c, r); });
}

TEST(MaxPool, EdgeShapes) {
  Rng r(10);
  for (const OpCase& c : edge_cases(false)) check_pool(true, c, r);
}

TEST(MaxPool, PaddingIsIgnoredForNegativeInputs) {
  // All inputs negative: a zero-padding tap would wrongly win the max at the borders.
  Image img;
  Rng r(11);
  Tensor x(5 * 5 * 2);
  for (auto& v : x) v = int8_t(r.uniform(-128, -1));
  Desc d = base_desc(Op::MaxPool, {5, 5, 2, 2, 3, 2, {}});
  d.in_addr = img.put(x, r);
  d.out_addr = img.out(shape_of(d).out_bytes, r);
  const Tensor want = naive_pool(true, x, 5, 5, 2, 2, 0, 0, {});
  for (int8_t v : want) EXPECT_LT(v, 0);
  expect_layer(img, d, want);
}

TEST(AvgPool, RandomShapesMatchNaive) {
  random_cases(5, 150, false, 14, 40, [](const OpCase& c, Rng& r) { check_pool(false, c, r); });
}

TEST(AvgPool, EdgeShapes) {
  Rng r(12);
  for (const OpCase& c : edge_cases(false)) check_pool(false, c, r);
}

TEST(AvgPool, PaddingCountsAsZero) {
  // A 1x1 image: the window holds one pixel (90) and eight zero padding taps. The divide-by-9
  // requant (M = 7282, S = 16) gives 10; averaging the in-image taps only would give 90.
  Image img;
  Rng r(13);
  Desc d = base_desc(Op::AvgPool, {1, 1, 1, 1, 3, 1, {}});
  d.m = 7282;
  d.s = 16;
  d.in_addr = img.put(Tensor{90}, r);
  d.out_addr = img.out(1, r);
  expect_layer(img, d, Tensor{10});
}

TEST(Add, RandomShapesMatchNaive) {
  random_cases(6, 150, false, 14, 40, [](const OpCase& c, Rng& r) { check_add(c, r); });
}

TEST(Add, SumsUnsaturatedRescaledInputs) {
  // requant(127, 4, 1) = 254 and requant(-128, 3, 1) = -192: each alone saturates, the sum
  // 62 does not. Saturating before the add would give 127 + -128 = -1.
  Image img;
  Rng r(14);
  Desc d = base_desc(Op::Add, {1, 1, 2, 2, 1, 1, {}});
  d.m = 4;
  d.s = 1;
  d.mb = 3;
  d.sb = 1;
  d.in_addr = img.put(Tensor{127, 100}, r);
  d.in2_addr = img.put(Tensor{-128, 100}, r);
  d.out_addr = img.out(2, r);
  expect_layer(img, d, Tensor{62, 127});
  d.act = u8(Act::Relu6);
  d.q6 = 50;
  expect_layer(img, d, Tensor{50, 50});
}

TEST(Add, OutputMayAliasAnInput) {
  Image img;
  Rng r(15);
  const Tensor x = r.tensor(300), x2 = r.tensor(300);
  Desc d = base_desc(Op::Add, {10, 10, 3, 3, 1, 1, {}});
  d.m = 1000;
  d.s = 10;
  d.mb = 3000;
  d.sb = 12;
  d.in_addr = img.put(x, r);
  d.in2_addr = img.put(x2, r);
  d.out_addr = d.in_addr;
  expect_layer(img, d, naive_add(x, x2, d.m, d.s, d.mb, d.sb, {}));
}

TEST(Gap, RandomShapesMatchNaive) {
  random_cases(7, 150, false, 16, 40, [](const OpCase& c, Rng& r) { check_gap(c, r); });
}

TEST(Gap, LargeSpatialSum) {
  Rng r(16);
  check_gap({64, 64, 16, 16, 1, 1, {}}, r);  // 4096 pixels, sums up to 2^19
}

TEST(Conv, SaturatesBothWays) {
  // M = 65535 with S = 1 saturates almost every output; the sign decides which way.
  Image img;
  Rng r(17);
  const OpCase c{5, 5, 8, 6, 3, 1, {}};
  const Tensor x = r.tensor(5 * 5 * 8), w = r.tensor(6 * 9 * 8);
  std::vector<ParamRecord> p(6, ParamRecord{0, 65535, 1});
  p[1].bias = 1000000;   // saturates high
  p[2].bias = -1000000;  // saturates low
  Desc d = base_desc(Op::Conv, c);
  d.in_addr = img.put(x, r);
  d.wgt_addr = img.put(w, r);
  d.prm_addr = img.put(p, r);
  d.out_addr = img.out(5 * 5 * 6, r);
  const Tensor want = naive_conv(x, 5, 5, 8, w, 6, 3, 1, p, {});
  EXPECT_GE(std::count(want.begin(), want.end(), int8_t{127}), 25);
  EXPECT_GE(std::count(want.begin(), want.end(), int8_t{-128}), 25);
  expect_layer(img, d, want);
}

TEST(Conv, AccumulatorWrapsAroundInt32) {
  // A 1x1 image under a 3x3 kernel: only the centre tap contributes, 4 * 100 * (+-100).
  // Channel 0: INT32_MAX - 1000 + 40000 wraps negative (-64 after >> 25, +64 without wrap).
  // Channel 1: INT32_MIN + 1000 - 40000 wraps positive.
  Image img;
  Rng r(18);
  const Tensor x(4, 100);
  Tensor w(2 * 9 * 4, 100);
  std::fill(w.begin() + 36, w.end(), int8_t{-100});
  const std::vector<ParamRecord> p{{2147483647 - 1000, 1, 25}, {-2147483647 - 1 + 1000, 1, 25}};
  Desc d = base_desc(Op::Conv, {1, 1, 4, 2, 3, 1, {}});
  d.in_addr = img.put(x, r);
  d.wgt_addr = img.put(w, r);
  d.prm_addr = img.put(p, r);
  d.out_addr = img.out(2, r);
  const Tensor want = naive_conv(x, 1, 1, 4, w, 2, 3, 1, p, {});
  EXPECT_EQ(want, (Tensor{-64, 64}));
  expect_layer(img, d, want);
}

TEST(Conv, Relu6WithVariousQ6) {
  for (int q6 : {0, 1, 6, 64, 127}) {
    Rng r(19 + q6);
    check_conv({6, 6, 8, 8, 3, 1, {u8(Act::Relu6), uint8_t(q6)}}, r);
  }
}

TEST(Execute, ReductionsLongerThanOneSummationBlock) {
  // execute() takes layers beyond any configuration's KredMax; the int32 sums are split into
  // blocks of 65536 products, whose combination must still wrap like one int32 accumulator.
  Rng r(20);
  {
    Image img(1 << 20);
    const int cin = 1400;  // 7 * 7 * 1400 = 68600 products per output
    const Tensor x(size_t(7) * 7 * cin, -128), w(size_t(2) * 7 * 7 * cin, -128);
    // The centre output sums 68600 * 16384 = 1.12e9; with the bias of channel 0 that wraps.
    const std::vector<ParamRecord> p{{2147483647, 1, 24}, {-2147483647 - 1, 1, 24}};
    Desc d = base_desc(Op::Conv, {7, 7, cin, 2, 7, 1, {}});
    d.in_addr = img.put(x, r);
    d.wgt_addr = img.put(w, r);
    d.prm_addr = img.put(p, r);
    d.out_addr = img.out(shape_of(d).out_bytes, r);
    const Tensor want = naive_conv(x, 7, 7, cin, w, 2, 7, 1, p, {});
    EXPECT_EQ(want[(3 * 7 + 3) * 2], -61);  // wrapped; 127 without the wrap
    expect_layer(img, d, want, false);
  }
  {
    Image img(1 << 21);
    const Tensor x = r.tensor(70000), w = r.tensor(3 * 70000);
    const auto p = r.params(3, 128.0 * 128 * 265 / 2);
    Desc d = base_desc(Op::Fc, {1, 70000 / 16, 16, 3, 1, 1, {}});
    d.in_addr = img.put(x, r);
    d.wgt_addr = img.put(w, r);
    d.prm_addr = img.put(p, r);
    d.out_addr = img.out(3, r);
    expect_layer(img, d, naive_fc(x, w, 3, p, {}), false);
  }
}

TEST(Execute, RejectsRangesOutsideMemory) {
  std::vector<uint8_t> mem(4096);
  Desc d = base_desc(Op::MaxPool, {8, 8, 16, 16, 3, 1, {}});
  d.in_addr = 0;
  d.out_addr = 4000;  // 1024 bytes do not fit
  EXPECT_THROW(ref::execute(d, mem), std::out_of_range);
  d.out_addr = 2048;
  EXPECT_NO_THROW(ref::execute(d, mem));
  d.op = 0;
  EXPECT_THROW(ref::execute(d, mem), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Whole programs through run().

struct Program {
  Image img{1 << 20};
  std::vector<Desc> descs;
  uint32_t desc_addr = 0;
  void place() {
    desc_addr = img.arena.alloc(hw::kDescBytes * descs.size(), 4);
    for (size_t i = 0; i < descs.size(); i++) {
      write_desc(img.mem, desc_addr + hw::kDescBytes * i, descs[i]);
    }
  }
};

// conv 3x3 (8x7x5 -> 8x7x12, ReLU) -> depthwise 5x5 stride 1 (ReLU6) -> add(dw, conv).
struct ThreeLayers {
  Program p;
  Tensor x, w1, w2, want_conv, want_dw, want_add;
  std::vector<ParamRecord> p1, p2;
  explicit ThreeLayers(uint64_t seed) {
    Rng r(seed);
    const int H = 8, W = 7, C = 5, C1 = 12;
    x = r.tensor(H * W * C);
    w1 = r.tensor(C1 * 9 * C);
    w2 = r.tensor(25 * C1);
    p1 = r.params(C1, 128.0 * 128 * 7 / 2);
    p2 = r.params(C1, 128.0 * 128 * 5 / 2);
    Desc conv = base_desc(Op::Conv, {H, W, C, C1, 3, 1, {u8(Act::Relu), 0}});
    conv.in_addr = p.img.put(x, r);
    conv.wgt_addr = p.img.put(w1, r);
    conv.prm_addr = p.img.put(p1, r);
    conv.out_addr = p.img.out(H * W * C1, r);
    Desc dw = base_desc(Op::DwConv, {H, W, C1, C1, 5, 1, {u8(Act::Relu6), 100}});
    dw.in_addr = conv.out_addr;
    dw.wgt_addr = p.img.put(w2, r);
    dw.prm_addr = p.img.put(p2, r);
    dw.out_addr = p.img.out(H * W * C1, r);
    Desc add = base_desc(Op::Add, {H, W, C1, C1, 1, 1, {}});
    add.in_addr = dw.out_addr;
    add.in2_addr = conv.out_addr;
    add.m = 30000;
    add.s = 15;
    add.mb = 20000;
    add.sb = 16;
    add.out_addr = p.img.out(H * W * C1, r);
    p.descs = {conv, dw, add};
    p.place();
    want_conv = naive_conv(x, H, W, C, w1, C1, 3, 1, p1, {u8(Act::Relu), 0});
    want_dw = naive_dwconv(want_conv, H, W, C1, w2, 5, 1, p2, {u8(Act::Relu6), 100});
    want_add = naive_add(want_dw, want_conv, add.m, add.s, add.mb, add.sb, {});
  }
};

TEST(Run, ThreeLayerProgramChainsOutputs) {
  const uint64_t seed = random_seed(50);
  SCOPED_TRACE("seed " + std::to_string(seed));
  ThreeLayers t(seed);
  auto& mem = t.p.img.mem;
  std::vector<uint8_t> expected = mem;
  write_bytes(expected, t.p.descs[0].out_addr, t.want_conv);
  write_bytes(expected, t.p.descs[1].out_addr, t.want_dw);
  write_bytes(expected, t.p.descs[2].out_addr, t.want_add);
  const auto& cfg = config_by_name("sim");
  const ref::RunResult res = ref::run(mem, cfg, t.p.desc_addr, 3, 0, uint32_t(mem.size()));
  EXPECT_EQ(res.err, Err::None);
  EXPECT_EQ(res.layers_done, 3u);
  EXPECT_EQ(t.p.img.read(t.p.descs[2].out_addr, t.want_add.size()), t.want_add);
  EXPECT_TRUE(expected == mem) << "run() changed bytes other than the three outputs";
  uint64_t macs = 0;
  for (const Desc& d : t.p.descs) macs += shape_of(d).macs;
  EXPECT_EQ(res.counters[size_t(hw::Counter::Macs)], macs);
  EXPECT_GT(res.counters[size_t(hw::Counter::Cycles)], 0u);
}

TEST(Run, EmptyProgram) {
  std::vector<uint8_t> mem(1024);
  const auto r = ref::run(mem, config_by_name("sim"), 0, 0, 0, 1024);
  EXPECT_EQ(r.err, Err::EmptyProgram);
  EXPECT_EQ(r.layers_done, 0u);
}

TEST(Run, StopsAtFirstInvalidDescriptorWritingNothingMore) {
  ThreeLayers t(random_seed(51));
  auto& mem = t.p.img.mem;
  Desc bad = t.p.descs[1];
  bad.stride = 3;
  write_desc(mem, t.p.desc_addr + hw::kDescBytes, bad);
  std::vector<uint8_t> expected = mem;
  write_bytes(expected, t.p.descs[0].out_addr, t.want_conv);
  const auto r = ref::run(mem, config_by_name("sim"), t.p.desc_addr, 3, 0, uint32_t(mem.size()));
  EXPECT_EQ(r.err, Err::BadStride);
  EXPECT_EQ(r.err_index, 1u);
  EXPECT_EQ(r.layers_done, 1u);
  EXPECT_TRUE(expected == mem);
}

TEST(Run, BadPerChannelShiftIsBadQuant) {
  for (uint8_t s : {uint8_t{0}, uint8_t{48}}) {
    ThreeLayers t(random_seed(52));
    auto& mem = t.p.img.mem;
    write_u8(mem, t.p.descs[1].prm_addr + 8 * 11 + 6, s);  // last channel of the depthwise
    const auto r = ref::run(mem, config_by_name("sim"), t.p.desc_addr, 3, 0, uint32_t(mem.size()));
    EXPECT_EQ(r.err, Err::BadQuant);
    EXPECT_EQ(r.err_index, 1u);
    EXPECT_EQ(r.layers_done, 1u);
  }
}

TEST(Run, DescriptorFetchOutsideWindow) {
  ThreeLayers t(random_seed(53));
  auto& mem = t.p.img.mem;
  const auto& cfg = config_by_name("sim");
  // The window ends one byte before the end of descriptor 2.
  const uint32_t limit = t.p.desc_addr + 3 * hw::kDescBytes - 1;
  const auto r = ref::run(mem, cfg, t.p.desc_addr, 3, 0, limit);
  EXPECT_EQ(r.err, Err::Window);
  EXPECT_EQ(r.err_index, 2u);
  EXPECT_EQ(r.layers_done, 2u);
  // Descriptor 0 below the window base.
  const auto r2 = ref::run(mem, cfg, t.p.desc_addr, 3, t.p.desc_addr + 1, uint32_t(mem.size()));
  EXPECT_EQ(r2.err, Err::Window);
  EXPECT_EQ(r2.err_index, 0u);
}

TEST(Run, DataRangeOutsideWindowIsWindowError) {
  ThreeLayers t(random_seed(54));
  auto& mem = t.p.img.mem;
  // The window starts above the first layer's input.
  const uint32_t base = t.p.descs[0].in_addr + 1;
  const uint32_t desc_addr = t.p.desc_addr;
  ASSERT_GT(desc_addr, base);
  const auto r = ref::run(mem, config_by_name("sim"), desc_addr, 3, base, uint32_t(mem.size()));
  EXPECT_EQ(r.err, Err::Window);
  EXPECT_EQ(r.err_index, 0u);
  EXPECT_EQ(r.layers_done, 0u);
}

TEST(Run, ThrowsWhenTheWindowExceedsMemory) {
  std::vector<uint8_t> mem(1024);
  try {
    ref::run(mem, config_by_name("sim"), 0, 1, 0, 2048);
    FAIL() << "no exception";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("2048"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Memory image helpers.

TEST(MemoryImage, LittleEndianScalarsAndRecords) {
  std::vector<uint8_t> mem(64, 0);
  write_u32(mem, 1, 0x11223344u);
  EXPECT_EQ(mem[1], 0x44);
  EXPECT_EQ(mem[4], 0x11);
  EXPECT_EQ(read_u32(mem, 1), 0x11223344u);
  write_i32(mem, 8, -2);
  EXPECT_EQ(read_u32(mem, 8), 0xFFFFFFFEu);
  EXPECT_EQ(read_i32(mem, 8), -2);
  write_u16(mem, 20, 0xBEEF);
  EXPECT_EQ(mem[20], 0xEF);
  EXPECT_EQ(read_u16(mem, 20), 0xBEEF);
  mem.assign(64, 0xFF);
  write_param(mem, 3, ParamRecord{-5, 0x1234, 47});
  EXPECT_EQ(read_i32(mem, 3), -5);
  EXPECT_EQ(read_u16(mem, 7), 0x1234);
  EXPECT_EQ(mem[9], 47);
  EXPECT_EQ(mem[10], 0);  // reserved byte
  EXPECT_EQ(mem[11], 0xFF);
  EXPECT_EQ(read_param(mem, 3), (ParamRecord{-5, 0x1234, 47}));
}

TEST(MemoryImage, OutOfRangeNamesAddressAndSize) {
  std::vector<uint8_t> mem(16);
  EXPECT_NO_THROW(write_u32(mem, 12, 1));
  try {
    write_u32(mem, 13, 1);
    FAIL() << "no exception";
  } catch (const std::out_of_range& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("0xd"), std::string::npos) << msg;
    EXPECT_NE(msg.find("4 bytes"), std::string::npos) << msg;
  }
  EXPECT_THROW(read_bytes(mem, 0xFFFFFFFFFFFFFFFFull, 2), std::out_of_range);
  EXPECT_THROW(write_desc(mem, 0, Desc{}), std::out_of_range);
  EXPECT_THROW(read_i8(mem, 10, 7), std::out_of_range);
}

TEST(Arena, AlignsAndRefusesOverflow) {
  Arena a(0x101, 0x200);
  EXPECT_EQ(a.alloc(3), 0x101u);
  EXPECT_EQ(a.alloc(16, 16), 0x110u);
  EXPECT_EQ(a.alloc(1, 64), 0x140u);
  EXPECT_EQ(a.top(), 0x141u);
  EXPECT_THROW(a.alloc(8, 3), std::invalid_argument);
  EXPECT_THROW(a.alloc(0x100, 1), std::out_of_range);
  EXPECT_EQ(a.alloc(0x200 - 0x141), 0x141u);  // exactly fills the arena
  EXPECT_EQ(a.used(), 0x200u - 0x101u);
  EXPECT_THROW(a.alloc(1), std::out_of_range);
  a.reset();
  EXPECT_EQ(a.alloc(1), 0x101u);
  EXPECT_THROW(Arena(10, 5), std::invalid_argument);
}

}  // namespace
}  // namespace nasa
