// rtl/nasa_mac_array.sv, the board's planned MAC array, as the board would build it (six SB_MAC16
// in 8x8 mode for the lanes, two in 16x16 mode for the requantization, simulated by Yosys's own
// model of the primitive, cells_sim.v): whole 1x1 convolutions, depthwise convolutions and stems
// (one input channel; k 1..7, stride 1 and 2, whole layers and row bands) and residual adds from a
// memory image to a memory image, byte for byte equal to the reference model's Conv, DwConv and
// Add (nasa::ref::execute), with every activation, output channel counts that leave a short last
// block, outputs at any byte offset, and a memory that makes reads wait; reading only rows of the
// layer's own tensors; with a memory that takes every request, in the cycles of its schedule's
// model (nasa::mcu::array_cycles, fpga/model: the board's model will time the array with it),
// cycle for cycle; the rows it reads and the bytes it writes as nasa::mcu::array_reads and
// array_write_bytes count them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "Vnasa_mac_array.h"
#include "nasa/desc.h"
#include "nasa/hw_spec.h"
#include "nasa/mac_array_model.h"
#include "nasa/refmodel.h"
#include "nasa/sim/memcheck.h"
#include "nasa/sim/vbench.h"

namespace {

using nasa::sim::Bench;
constexpr uint32_t kMemBytes = 1u << 17;

struct Layer {
  uint32_t in = 0, wgt = 0, prm = 0, out = 0;
  // the stem: its weights tap-major, the block's copy (the reference's are at wgt)
  uint32_t wgt_taps = 0;
  uint16_t pix = 0, cin = 0, cout = 0;
  uint8_t act = 0, q6 = 0;
  // depthwise (dw) and the stem (a Conv of one input channel): input h x w, output ho x wo
  // (pix), k x k, stride, rows of zeros above
  bool dw = false, stem = false;
  uint16_t h = 0, w = 0, ho = 0, wo = 0;
  uint8_t k = 1, stride = 1, pad_top = 0;
  bool band = false;  // a row band: ho and pad_top its own
  // the residual add: pix bytes, out = clamp(requant(a, M, S) + requant(b, Mb, Sb)), a at in, b at
  // in2, the two records at prm
  bool add = false;
  uint32_t in2 = 0;
  uint16_t m = 0, mb = 0;
  uint8_t s = 0, sb = 0;
};

// Random records (bias of every magnitude, M, S) for `n` channels at `prm`.
void random_records(nasa::sim::Random& r, std::vector<uint8_t>& mem, uint32_t prm, uint32_t n) {
  for (uint32_t c = 0; c < n; ++c) {
    uint8_t* rec = mem.data() + prm + 8 * c;
    const int bits = static_cast<int>(r.uniform(0, 32));
    const uint32_t bias = bits == 32 ? static_cast<uint32_t>(r())
                                     : (static_cast<uint32_t>(r()) & ((1u << bits) - 1)) *
                                           (r.uniform(0, 1) ? 1u : ~0u);
    for (int i = 0; i < 4; ++i) rec[i] = static_cast<uint8_t>(bias >> (8 * i));
    rec[6] = static_cast<uint8_t>(r.uniform(1, nasa::hw::kMaxShift));
    rec[7] = 0;
  }
}

// A random layer with its memory image: input, weights and records at 8-aligned addresses, the
// output at any offset.
Layer random_layer(nasa::sim::Random& r, std::vector<uint8_t>& mem, uint16_t pix, uint16_t cin,
                   uint16_t cout) {
  Layer l;
  l.pix = pix;
  l.cin = cin;
  l.cout = cout;
  l.act = static_cast<uint8_t>(r.uniform(0, 2));
  l.q6 = static_cast<uint8_t>(r.uniform(0, 127));
  l.in = 8 * static_cast<uint32_t>(r.uniform(1, 64));
  l.wgt = (l.in + uint32_t{pix} * cin + 7) & ~7u;
  l.prm = (l.wgt + uint32_t{cout} * cin + 7) & ~7u;
  l.out = l.prm + 8u * cout + static_cast<uint32_t>(r.uniform(0, 15));
  for (auto& b : mem) b = static_cast<uint8_t>(r());
  random_records(r, mem, l.prm, cout);
  return l;
}

uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// A random depthwise layer (input h x w x c, k, stride; a row band when `band`) with its memory
// image, laid out as random_layer's.
// With `stem`, a Conv of one input channel and c output channels instead.
Layer random_dw_layer(nasa::sim::Random& r, std::vector<uint8_t>& mem, uint16_t h, uint16_t w,
                      uint16_t c, uint8_t k, uint8_t stride, bool band, bool stem = false) {
  Layer l;
  l.dw = !stem;
  l.stem = stem;
  l.h = h;
  l.w = w;
  l.k = k;
  l.stride = stride;
  l.cin = stem ? 1 : c;
  l.cout = c;
  l.band = band;
  l.ho = static_cast<uint16_t>(ceil_div(h, stride));
  l.wo = static_cast<uint16_t>(ceil_div(w, stride));
  l.pad_top = static_cast<uint8_t>((k - 1) / 2);
  if (band) {  // fewer output rows, its own top padding
    l.ho = static_cast<uint16_t>(r.uniform(1, l.ho));
    l.pad_top = static_cast<uint8_t>(r.uniform(0, (k - 1) / 2));
  }
  l.pix = static_cast<uint16_t>(l.ho * l.wo);
  l.act = static_cast<uint8_t>(r.uniform(0, 2));
  l.q6 = static_cast<uint8_t>(r.uniform(0, 127));
  l.in = 8 * static_cast<uint32_t>(r.uniform(1, 64));
  if (stem) l.in += static_cast<uint32_t>(r.uniform(0, 7));  // one channel: any byte
  l.wgt = (l.in + uint32_t{h} * w * l.cin + 7) & ~7u;
  const uint32_t ksq = uint32_t{k} * k;
  l.wgt_taps = (l.wgt + ksq * c + 7) & ~7u;
  l.prm = stem ? l.wgt_taps + (c + 7u) / 8 * ksq * 8 : (l.wgt + ksq * c + 7) & ~7u;
  l.out = l.prm + 8u * c + static_cast<uint32_t>(r.uniform(0, 15));
  for (auto& b : mem) b = static_cast<uint8_t>(r());
  random_records(r, mem, l.prm, c);
  if (stem) {  // the copy the stem's caller makes: blocks of 8 channels, a row of 8 a tap
    for (uint32_t co = 0; co < (c + 7u) / 8 * 8; ++co) {
      for (uint32_t t = 0; t < ksq; ++t) {
        mem[l.wgt_taps + (co / 8 * ksq + t) * 8 + co % 8] =
            co < c ? mem[l.wgt + co * ksq + t] : uint8_t{0};
      }
    }
  }
  return l;
}

std::vector<uint8_t> reference(const Layer& l, std::vector<uint8_t> mem) {
  nasa::Desc d;
  d.act = l.act;
  d.q6 = l.q6;
  d.in_addr = l.in;
  d.out_addr = l.out;
  const bool window = l.dw || l.stem;
  d.h = window ? l.h : 1;
  d.w = window ? l.w : l.pix;
  d.cin = l.add ? 1 : l.cin;
  d.cout = l.add ? 1 : l.cout;
  if (l.add) {  // (an Add of 1 x P x 1)
    d.op = static_cast<uint8_t>(nasa::hw::Op::Add);
    d.in2_addr = l.in2;
    d.m = l.m;
    d.s = l.s;
    d.mb = l.mb;
    d.sb = l.sb;
  } else {
    d.op = static_cast<uint8_t>(l.dw ? nasa::hw::Op::DwConv : nasa::hw::Op::Conv);
    d.k = l.k;
    d.stride = l.stride;
    if (l.band) {
      d.out_rows = l.ho;
      d.pad_top = l.pad_top;
    }
    d.wgt_addr = l.wgt;
    d.prm_addr = l.prm;
  }
  nasa::ref::execute(d, mem);
  return mem;
}

struct Run {
  uint64_t cycles = 0;
  bool err = false;
  bool bad = false;                     // bad_o: a record's shift outside [1, MaxShift]
  uint64_t reads = 0, write_bytes = 0;  // rows read, bytes written (strobed)
};

// Whether the memory row at `a` holds a byte of the layer's input, weights (the block's: the
// stem's tap-major copy) or records: the only rows the block may read.
bool read_inside(const Layer& l, uint32_t a) {
  const bool window = l.dw || l.stem;
  const uint64_t in_bytes = (window ? uint64_t{l.h} * l.w : uint64_t{l.pix}) * l.cin;
  const uint64_t ksq = uint64_t{l.k} * l.k;
  const uint64_t wgt_bytes = l.stem ? (l.cout + 7u) / 8 * ksq * 8
                             : l.dw ? ksq * l.cin
                                    : uint64_t{l.cin} * l.cout;
  const auto in_rows = [a](uint64_t from, uint64_t bytes) {
    return a + 8 > from && a < from + bytes;
  };
  if (l.add) return in_rows(l.in, l.pix) || in_rows(l.in2, l.pix) || in_rows(l.prm, 16);
  return in_rows(l.in, in_bytes) || in_rows(l.stem ? l.wgt_taps : l.wgt, wgt_bytes) ||
         in_rows(l.prm, 8ull * l.cout);
}

// Runs the layer on the block against `mem`; reads are taken with probability ready/8, writes
// at once except the `refuse`-th (counted from 1; 0: none), refused for one cycle.
Run run(const Layer& l, std::vector<uint8_t>& mem, int ready, nasa::sim::Random& r,
        uint64_t refuse = 0) {
  Bench<Vnasa_mac_array> b("nasa_mac_array", 1);
  b->rst_ni = 0;
  b->start_i = 0;
  b->req_ready_i = 1;
  b->rsp_valid_i = 0;
  b.tick();
  b->rst_ni = 1;
  const uint32_t row = uint32_t{l.w} * l.cin;
  const bool window = l.dw || l.stem;
  b->in_i = l.in;
  b->dw_i = l.dw;
  b->st_i = l.stem;
  b->ad_i = l.add;
  b->ih_i = static_cast<uint8_t>(l.h);
  b->iw_i = static_cast<uint8_t>(l.w);
  b->ow_i = static_cast<uint8_t>(l.wo);
  b->k_i = l.k;
  b->s2_i = l.stride == 2;
  b->padt_i = l.pad_top;
  b->rowb_i = static_cast<uint16_t>(row);
  b->wgt_i = l.add ? l.in2 : l.stem ? l.wgt_taps : l.wgt;
  b->out_i = l.out;
  b->prm_i = l.prm;
  b->pix_i = l.pix;
  b->cin_i = l.cin;
  b->cout_i = l.add ? 1 : l.cout;
  b->lo_i = l.act == 0 ? 0x80 : 0;
  b->hi_i = l.act == 2 ? l.q6 : 127;
  b->ldw_i = b->ldo_i = b->ldp_i = 1;  // (the counters load a cycle before the start)
  b.tick();
  b->ldw_i = b->ldo_i = b->ldp_i = 0;
  b->start_i = 1;
  b.tick();
  b->start_i = 0;
  Run out;
  bool rsp_next = false;
  uint64_t writes = 0;
  uint64_t rsp_data = 0;
  const uint64_t limit = 200 + 40ull * l.pix * (l.add ? 2 : l.cout * (window ? l.k * l.k : l.cin));
  while (b->busy_o && out.cycles < limit) {
    b->rsp_valid_i = rsp_next;
    b->rsp_rdata_i = rsp_data;
    rsp_next = false;
    b->req_ready_i = 1;
    b.settle();
    if (b->req_valid_o && !b->req_we_o) b->req_ready_i = static_cast<int>(r.uniform(0, 7)) < ready;
    if (b->req_valid_o && b->req_we_o && ++writes == refuse) b->req_ready_i = 0;
    b.settle();
    if (b->req_valid_o && b->req_ready_i) {
      const uint32_t a = b->req_addr_o;
      EXPECT_EQ(a % 8, 0u);
      EXPECT_LT(a, kMemBytes);
      if (b->req_we_o) {
        for (int i = 0; i < 8; ++i) {
          if ((b->req_wstrb_o >> i) & 1) {
            mem[a + i] = static_cast<uint8_t>(b->req_wdata_o >> (8 * i));
            ++out.write_bytes;
          }
        }
      } else {
        ++out.reads;
        EXPECT_TRUE(read_inside(l, a)) << "read of row " << a << " outside the layer's tensors";
        rsp_next = true;
        rsp_data = 0;
        for (int i = 0; i < 8; ++i) rsp_data |= uint64_t{mem[a + i]} << (8 * i);
      }
    }
    b.tick();
    ++out.cycles;
  }
  EXPECT_FALSE(b->busy_o) << "still busy after " << out.cycles << " cycles";
  out.err = b->err_o;
  out.bad = b->bad_o;
  return out;
}

// The layer as the board's model times it (nasa/mac_array_model.h).
nasa::mcu::ArrayLayer array_layer(const Layer& l) {
  return {.out = l.out,
          .pix = l.pix,
          .cin = l.cin,
          .cout = l.cout,
          .dw = l.dw,
          .stem = l.stem,
          .add = l.add,
          .h = l.h,
          .w = l.w,
          .wo = l.wo,
          .k = l.k,
          .stride = l.stride,
          .pad_top = l.pad_top};
}

// Runs the layer and compares the whole memory with the reference's; returns the cycles.
uint64_t check(const Layer& l, nasa::sim::Random& r, int ready, std::vector<uint8_t> mem) {
  const auto want = reference(l, mem);
  const Run got = run(l, mem, ready, r);
  EXPECT_FALSE(got.err);
  EXPECT_FALSE(got.bad);
  // (what the board's counters add for the layer: the same whether reads wait or not)
  EXPECT_EQ(got.reads, nasa::mcu::array_reads(array_layer(l)))
      << "P=" << l.pix << " C=" << l.cin << " K=" << l.cout << " dw=" << l.dw << " stem=" << l.stem
      << " k=" << int{l.k};
  EXPECT_EQ(got.write_bytes, nasa::mcu::array_write_bytes(array_layer(l)));
  if (ready == 8) {
    EXPECT_EQ(got.cycles, nasa::mcu::array_cycles(array_layer(l)))
        << "P=" << l.pix << " C=" << l.cin << " K=" << l.cout << " dw=" << l.dw
        << " k=" << int{l.k};
  }
  size_t bad = 0;
  for (size_t i = 0; i < mem.size(); ++i) {
    if (mem[i] != want[i] && bad++ < 5) {
      ADD_FAILURE() << "byte " << i << " (output byte " << static_cast<int64_t>(i) - l.out
                    << "): " << int{mem[i]} << ", reference " << int{want[i]} << "; P=" << l.pix
                    << " C=" << l.cin << " K=" << l.cout << " dw=" << l.dw << " " << l.h << "x"
                    << l.w << " k=" << int{l.k} << " s=" << int{l.stride} << " band=" << l.band
                    << " stem=" << l.stem;
    }
  }
  return got.cycles;
}

// A write the memory does not take at once (the caller broke the port's priority) latches err_o;
// the run still ends.
TEST(MacArray, ARefusedWriteIsAnError) {
  nasa::sim::Random r(nasa::sim::test_seed("MacArray.Refused", 8));
  std::vector<uint8_t> mem(kMemBytes);
  const Layer l = random_layer(r, mem, 10, 16, 6);
  auto m = mem;
  EXPECT_FALSE(run(l, m, 8, r).err);
  m = mem;
  EXPECT_TRUE(run(l, m, 8, r, 5).err);
}

TEST(MacArray, RandomLayersEqualTheReference) {
  nasa::sim::Random r(nasa::sim::test_seed("MacArray.Random", 7));
  std::vector<uint8_t> mem(kMemBytes);
  for (uint64_t t = 0; t < nasa::sim::iterations(12); ++t) {
    const auto pix = static_cast<uint16_t>(r.uniform(1, 40));
    const auto cin = static_cast<uint16_t>(8 * r.uniform(1, 8));
    const auto cout = static_cast<uint16_t>(r.uniform(1, 20));
    const Layer l = random_layer(r, mem, pix, cin, cout);
    check(l, r, t % 2 ? 8 : 5, mem);
    if (HasFailure()) return;
  }
}

// Layer shapes of fmnist-mb14's 1x1 Convs (expansions from 16 and 24 channels, projections to
// 16, 24 and 40), a memory that takes every request: exact, in nasa::mcu::array_cycles()
// (check()), and at least `floor` MACs a cycle
// (the rates measured when the block was built, less about 0.25: the lanes' 12 a step, less the
// weight loads, the short last block, and the steps the output bytes' writes take from the
// activation reads; docs/fpga.md).
TEST(MacArray, ModelShapesAreExactAndFast) {
  nasa::sim::Random r(nasa::sim::test_seed("MacArray.Shapes", 9));
  std::vector<uint8_t> mem(kMemBytes);
  struct Shape {
    uint16_t pix, cin, cout;
    double floor;
  };
  // (floors 0.2 below the rates: the writes a cycle off the odd steps cost 0.1-0.4, most 0.26-0.42)
  const Shape shapes[] = {{196, 16, 48, 10.65}, {196, 48, 16, 9.95},  {49, 24, 144, 9.95},
                          {49, 144, 24, 10.9},  {49, 240, 40, 10.45}, {49, 40, 120, 10.4}};
  for (const auto& s : shapes) {
    const Layer l = random_layer(r, mem, s.pix, s.cin, s.cout);
    const uint64_t cycles = check(l, r, 8, mem);
    if (HasFailure()) return;
    const double rate = static_cast<double>(s.pix) * s.cin * s.cout / static_cast<double>(cycles);
    RecordProperty(fmt::format("P{}_C{}_K{}", s.pix, s.cin, s.cout), fmt::format("{:.2f}", rate));
    std::printf("P=%u C=%u K=%u: %llu cycles, %.2f MACs a cycle\n", s.pix, s.cin, s.cout,
                static_cast<unsigned long long>(cycles), rate);
    EXPECT_GE(rate, s.floor) << "P=" << s.pix << " C=" << s.cin << " K=" << s.cout;
  }
}

// Random depthwise layers (`stem`: stem Convs, one input channel) on the block: every kernel size
// (1..7), both strides, whole layers and a quarter of them row bands with their own top padding,
// images from 1x1 up, 8 to 40 channels (the stem 1 to 20 output channels, a short last block,
// its input at any byte), outputs at any byte offset, every other layer with reads that wait.
void check_random_windows(nasa::sim::Random& r, bool stem) {
  std::vector<uint8_t> mem(kMemBytes);
  const uint8_t ks[] = {1, 3, 5, 7};
  for (uint64_t t = 0; t < nasa::sim::iterations(24); ++t) {
    const auto h = static_cast<uint16_t>(r.uniform(1, stem ? 16 : 12));
    const auto w = static_cast<uint16_t>(r.uniform(1, stem ? 16 : 12));
    const auto c = static_cast<uint16_t>(stem ? r.uniform(1, 20) : 8 * r.uniform(1, 5));
    const uint8_t k = ks[r.uniform(0, 3)];
    const auto stride = static_cast<uint8_t>(r.uniform(1, 2));
    const Layer l = random_dw_layer(r, mem, h, w, c, k, stride, r.uniform(0, 3) == 0, stem);
    check(l, r, t % 2 ? 8 : 5, mem);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(MacArray, RandomDepthwiseLayersEqualTheReference) {
  nasa::sim::Random r(nasa::sim::test_seed("MacArray.RandomDw", 10));
  check_random_windows(r, false);
}

TEST(MacArray, RandomStemLayersEqualTheReference) {
  nasa::sim::Random r(nasa::sim::test_seed("MacArray.RandomStem", 12));
  check_random_windows(r, true);
}

// Depthwise layer shapes of fmnist-mb14 (14x14 and 7x7 maps, expansions of 16, 24 and 40
// channels, k 3/5/7, the stride-2 layer) and its stem (28x28, 16 channels, 3x3, stride 2), a memory
// that takes every request: exact, in nasa::mcu::array_cycles() (check()), and at least `floor`
// MACs a cycle, MACs counted as the engine counts them, k * k a channel of each output pixel,
// padding taps included, and `inside` counting only the taps inside the input, those the block
// multiplies (the rates measured when the depthwise path was built, less about 0.2: 8 a step, less
// the weight loads, the output writes' cycles and the drain's 8 cycles a pixel; the first more than
// 8 where padding taps are skipped; docs/fpga.md).
TEST(MacArray, DepthwiseModelShapesAreExactAndFast) {
  nasa::sim::Random r(nasa::sim::test_seed("MacArray.DwShapes", 11));
  std::vector<uint8_t> mem(kMemBytes);
  struct Shape {
    uint16_t h, c;
    uint8_t k, stride;
    double floor, inside;
    bool stem = false;  // the stem: 1 input channel, c output channels
  };
  const Shape shapes[] = {{14, 48, 3, 1, 7.2, 6.5},       {14, 16, 5, 1, 8.8, 7.3},
                          {14, 96, 5, 2, 8.45, 7.05},     {7, 72, 3, 1, 7.05, 5.75},
                          {7, 144, 7, 1, 12.6, 7.1},      {7, 240, 5, 1, 10.15, 6.9},
                          {28, 16, 3, 2, 7.0, 6.65, true}};
  for (const auto& s : shapes) {
    Layer l = random_dw_layer(r, mem, s.h, s.h, s.c, s.k, s.stride, false, s.stem);
    l.out &= ~7u;  // the compiler's tensors are 64-byte aligned: a pixel's 8 bytes, one write
    const uint64_t cycles = check(l, r, 8, mem);
    if (HasFailure()) return;
    const double rate = static_cast<double>(l.pix) * s.c * s.k * s.k / static_cast<double>(cycles);
    uint64_t taps = 0;  // output pixels' taps inside the input
    for (uint32_t p = 0; p < l.pix; ++p) taps += nasa::mcu::array_taps(array_layer(l), p);
    const double inside = static_cast<double>(taps) * s.c / static_cast<double>(cycles);
    const auto name =
        fmt::format("{}H{}_C{}_k{}_s{}", s.stem ? "stem_" : "", s.h, s.c, s.k, s.stride);
    RecordProperty(name, fmt::format("{:.2f} ({:.2f} inside)", rate, inside));
    std::printf("%s: %llu cycles, %.2f MACs a cycle (%.2f of taps inside the input)\n",
                name.c_str(), static_cast<unsigned long long>(cycles), rate, inside);
    EXPECT_GE(rate, s.floor) << name;
    EXPECT_GE(inside, s.inside) << name;
  }
}

}  // namespace

namespace {

// A random residual add of `n` bytes: a (or in place, at the output: a Conv's folded residual),
// b and the output at 8-aligned addresses, two random records.
Layer random_add(nasa::sim::Random& r, std::vector<uint8_t>& mem, uint16_t n, bool in_place) {
  Layer l;
  l.add = true;
  l.pix = n;
  l.act = static_cast<uint8_t>(r.uniform(0, 2));
  l.q6 = static_cast<uint8_t>(r.uniform(0, 127));
  const auto after = [&](uint32_t a, uint32_t bytes) {
    return (a + bytes + 7 + 8 * static_cast<uint32_t>(r.uniform(0, 2))) & ~7u;
  };
  l.prm = 8 * static_cast<uint32_t>(r.uniform(1, 16));
  l.in2 = after(l.prm, 16);
  l.out = after(l.in2, n);
  l.in = in_place ? l.out : after(l.out, n);
  for (auto& b : mem) b = static_cast<uint8_t>(r());
  // M of every size, S over its range (the reference's int8 requantization is exact in the
  // array's terms for all of them)
  const auto quant = [&](uint16_t& m, uint8_t& s) {
    m = static_cast<uint16_t>(r() >> r.uniform(0, 15));
    s = static_cast<uint8_t>(r.chance(0.7) ? r.uniform(1, 24) : r.uniform(1, nasa::hw::kMaxShift));
  };
  quant(l.m, l.s);
  quant(l.mb, l.sb);
  for (int k = 0; k < 2; ++k) {
    uint8_t* rec = mem.data() + l.prm + 8 * k;
    const uint16_t m = k ? l.mb : l.m;
    rec[4] = static_cast<uint8_t>(m);
    rec[5] = static_cast<uint8_t>(m >> 8);
    rec[6] = k ? l.sb : l.s;
  }
  return l;
}

TEST(MacArray, RandomResidualAddsEqualTheReference) {
  nasa::sim::Random r(nasa::sim::test_seed("MacArray.Add", 12));
  std::vector<uint8_t> mem(kMemBytes);
  uint64_t total = 0, bytes = 0;
  for (uint64_t t = 0; t < nasa::sim::iterations(40); ++t) {
    const auto n = static_cast<uint16_t>(r.chance(0.3) ? r.uniform(1, 17) : r.uniform(18, 600));
    const Layer l = random_add(r, mem, n, t % 2 == 1);
    const uint64_t cycles = check(l, r, t % 3 == 0 ? 8 : static_cast<int>(r.uniform(2, 7)), mem);
    if (HasFailure()) return;
    total += cycles;
    bytes += n;
  }
  std::printf("%llu bytes in %llu cycles (%.2f a byte)\n", static_cast<unsigned long long>(bytes),
              static_cast<unsigned long long>(total), double(total) / double(bytes));
}

// A record whose S is outside [1, MaxShift] (0, or 48..255 in its byte; a second bad one after
// it, sometimes) latches bad_o and stops the layer when that record's block has its records in:
// the blocks before it written as the reference writes them, nothing else; in the model's cycles,
// reads and writes (nasa::mcu::ArrayLayer::bad). 1x1 Convs, DwConvs, stems and adds, reads that
// wait in every other layer.
TEST(MacArray, ABadRecordStopsTheLayerAtItsBlock) {
  nasa::sim::Random r(nasa::sim::test_seed("MacArray.BadRecord", 13));
  std::vector<uint8_t> mem(kMemBytes);
  const uint8_t ks[] = {1, 3, 5, 7};
  for (uint64_t t = 0; t < nasa::sim::iterations(24); ++t) {
    Layer l;
    switch (t % 4) {
      case 0:
        l = random_layer(r, mem, static_cast<uint16_t>(r.uniform(1, 20)),
                         static_cast<uint16_t>(8 * r.uniform(1, 4)),
                         static_cast<uint16_t>(r.uniform(1, 20)));
        break;
      case 3:
        l = random_add(r, mem, static_cast<uint16_t>(r.uniform(1, 40)), r.chance(0.5));
        break;
      default:
        l = random_dw_layer(
            r, mem, static_cast<uint16_t>(r.uniform(1, 10)),
            static_cast<uint16_t>(r.uniform(1, 10)),
            static_cast<uint16_t>(t % 4 == 2 ? r.uniform(1, 20) : 8 * r.uniform(1, 4)),
            ks[r.uniform(0, 3)], static_cast<uint8_t>(r.uniform(1, 2)), false, t % 4 == 2);
    }
    const uint32_t records = l.add ? 2 : l.cout;
    const auto want = reference(l, mem);  // (every record valid)
    nasa::mcu::ArrayLayer al = array_layer(l);
    al.bad = static_cast<uint32_t>(r.uniform(0, records - 1));
    const auto spoil = [&](uint32_t c) {
      mem[l.prm + 8 * c + 6] = static_cast<uint8_t>(r.chance(0.3) ? 0 : r.uniform(48, 255));
    };
    auto m = mem;
    std::swap(m, mem);
    spoil(al.bad);
    if (al.bad + 1 < records && r.chance(0.3))
      spoil(static_cast<uint32_t>(r.uniform(al.bad + 1, records - 1)));
    std::swap(m, mem);
    // what it may write: the output channels of the blocks before the bad record's
    auto expect = m;
    const uint32_t written = nasa::mcu::array_channels_written(al);
    for (uint32_t p = 0; p < l.pix; ++p) {
      for (uint32_t c = 0; c < written; ++c) {
        const uint32_t a = l.out + p * l.cout + c;
        expect[a] = want[a];
      }
    }
    const std::string what =
        fmt::format("layer {}: P={} C={} K={} dw={} stem={} add={} k={}, bad record {}", t, l.pix,
                    l.cin, l.cout, l.dw, l.stem, l.add, l.k, al.bad);
    const ::Run got = run(l, m, t % 2 ? 8 : 5, r);
    EXPECT_TRUE(got.bad) << what;
    EXPECT_FALSE(got.err) << what;
    EXPECT_EQ(got.reads, nasa::mcu::array_reads(al)) << what;
    EXPECT_EQ(got.write_bytes, nasa::mcu::array_write_bytes(al)) << what;
    if (t % 2) {
      EXPECT_EQ(got.cycles, nasa::mcu::array_cycles(al)) << what;
    }
    EXPECT_TRUE(nasa::sim::same_memory(m, expect, nasa::sim::MemoryCheck(what)));
    if (HasFailure()) return;
  }
}

}  // namespace
