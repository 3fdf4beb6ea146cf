// rtl/nasa_pw_array.sv, the pointwise path of the board's planned MAC array, as the board would
// build it (six SB_MAC16 in 8x8 mode for the lanes, two in 16x16 mode for the requantization,
// simulated by Yosys's own model of the primitive, cells_sim.v): whole 1x1 convolutions from a
// memory image to a memory image, byte for byte equal to the reference model's Conv
// (nasa::ref::execute), with every activation, output channel counts that leave a short last
// block, outputs at any byte offset, and a memory that makes reads wait; with a memory that
// takes every request, in the cycles of its schedule's model (model_cycles), cycle for cycle.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>
#include <vector>

#include "Vnasa_pw_array.h"
#include "nasa/desc.h"
#include "nasa/hw_spec.h"
#include "nasa/refmodel.h"
#include "nasa/sim/vbench.h"

namespace {

using nasa::sim::Bench;
constexpr uint32_t kMemBytes = 1u << 17;

struct Layer {
  uint32_t in = 0, wgt = 0, prm = 0, out = 0;
  uint16_t pix = 0, cin = 0, cout = 0;
  uint8_t act = 0, q6 = 0;
};

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
  for (uint32_t c = 0; c < cout; ++c) {
    uint8_t* rec = mem.data() + l.prm + 8 * c;
    const int bits = static_cast<int>(r.uniform(0, 32));  // biases of every magnitude
    const uint32_t bias = bits == 32 ? static_cast<uint32_t>(r())
                                     : (static_cast<uint32_t>(r()) & ((1u << bits) - 1)) *
                                           (r.uniform(0, 1) ? 1u : ~0u);
    for (int i = 0; i < 4; ++i) rec[i] = static_cast<uint8_t>(bias >> (8 * i));
    rec[6] = static_cast<uint8_t>(r.uniform(1, nasa::hw::kMaxShift));
    rec[7] = 0;
  }
  return l;
}

std::vector<uint8_t> reference(const Layer& l, std::vector<uint8_t> mem) {
  nasa::Desc d;
  d.op = static_cast<uint8_t>(nasa::hw::Op::Conv);
  d.act = l.act;
  d.q6 = l.q6;
  d.k = 1;
  d.stride = 1;
  d.h = 1;
  d.w = l.pix;
  d.cin = l.cin;
  d.cout = l.cout;
  d.in_addr = l.in;
  d.wgt_addr = l.wgt;
  d.prm_addr = l.prm;
  d.out_addr = l.out;
  nasa::ref::execute(d, mem);
  return mem;
}

struct Run {
  uint64_t cycles = 0;
  bool err = false;
};

// Runs the layer on the block against `mem`; reads are taken with probability ready/8, writes
// at once except the `refuse`-th (counted from 1; 0: none), refused for one cycle.
Run run(const Layer& l, std::vector<uint8_t>& mem, int ready, nasa::sim::Random& r,
        uint64_t refuse = 0) {
  Bench<Vnasa_pw_array> b("nasa_pw_array", 1);
  b->rst_ni = 0;
  b->start_i = 0;
  b->req_ready_i = 1;
  b->rsp_valid_i = 0;
  b.tick();
  b->rst_ni = 1;
  b->in_i = l.in;
  b->wgt_i = l.wgt;
  b->out_i = l.out;
  b->prm_i = l.prm;
  b->pix_i = l.pix;
  b->cin_i = l.cin;
  b->cout_i = l.cout;
  b->lo_i = l.act == 0 ? 0x80 : 0;
  b->hi_i = l.act == 2 ? l.q6 : 127;
  b->start_i = 1;
  b.tick();
  b->start_i = 0;
  Run out;
  bool rsp_next = false;
  uint64_t writes = 0;
  uint64_t rsp_data = 0;
  const uint64_t limit = 200 + 40ull * l.pix * l.cin * l.cout;
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
          if ((b->req_wstrb_o >> i) & 1)
            mem[a + i] = static_cast<uint8_t>(b->req_wdata_o >> (8 * i));
        }
      } else {
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
  return out;
}

// The block's cycles with a memory that takes every request, from its schedule (the RTL's
// header): per block of kb channels, 2 x kb x C / 8 + 2 cycles of weight rows and kb + 2 of
// records; then the stepper, one step a cycle unless an even step's row read meets an output
// write (the write goes first) or a pixel's last step comes within 3 cycles of the one before
// (the lanes' drain). A pixel whose last step leaves the stepper at t has its bytes k = 0..2
// out of the requantization at t + 10 + k (the step in the lanes at t + 1, its sums drained at
// t + 5 + k, biased at t + 6 + k, requantized 4 cycles later); a byte of another row than those
// before it writes the row buffer, and the pixel's bytes go out at t + 10 + kb. The block's last
// cycle is t + 13 of its last pixel. Counted from the cycle after start_i.
uint64_t model_cycles(const Layer& l) {
  const uint32_t steps = l.cin / 4u;
  uint64_t c = 0, end = 0;
  for (uint32_t co0 = 0; co0 < l.cout; co0 += 3) {
    const uint32_t kb = std::min(3u, l.cout - co0);
    c += 2ull * kb * l.cin / 8 + 2 + kb + 2;  // weight rows, records
    std::set<uint64_t> writes;
    uint32_t gap = 2;
    uint64_t t_last = 0;
    for (uint32_t p = 0; p < l.pix;) {
      for (uint32_t s = 0; s < steps;) {
        const bool last = s + 1 == steps;
        const bool go = (!last || gap >= 2) && (s % 2 == 1 || !writes.count(c));
        gap = std::min(gap + 1, 2u);
        if (go) {
          if (last) {
            gap = 0;
            t_last = c;
            const uint64_t y0 = uint64_t{l.out} + uint64_t{p} * l.cout + co0;
            for (uint32_t k = 1; k < kb; ++k) {
              if ((y0 + k) / 8 != (y0 + k - 1) / 8) writes.insert(c + 11 + k);
            }
            writes.insert(c + 11 + kb);
          }
          ++s;
        }
        ++c;
      }
      ++p;
    }
    end = t_last + 15;
    c = end;
  }
  return end;
}

// Runs the layer and compares the whole memory with the reference's; returns the cycles.
uint64_t check(const Layer& l, nasa::sim::Random& r, int ready, std::vector<uint8_t> mem) {
  const auto want = reference(l, mem);
  const Run got = run(l, mem, ready, r);
  EXPECT_FALSE(got.err);
  if (ready == 8) {
    EXPECT_EQ(got.cycles, model_cycles(l)) << "P=" << l.pix << " C=" << l.cin << " K=" << l.cout;
  }
  size_t bad = 0;
  for (size_t i = 0; i < mem.size(); ++i) {
    if (mem[i] != want[i] && bad++ < 5) {
      ADD_FAILURE() << "byte " << i << " (output byte " << static_cast<int64_t>(i) - l.out
                    << "): " << int{mem[i]} << ", reference " << int{want[i]} << "; P=" << l.pix
                    << " C=" << l.cin << " K=" << l.cout;
    }
  }
  return got.cycles;
}

// A write the memory does not take at once (the caller broke the port's priority) latches err_o;
// the run still ends.
TEST(PwArray, ARefusedWriteIsAnError) {
  nasa::sim::Random r(nasa::sim::test_seed("PwArray.Refused", 8));
  std::vector<uint8_t> mem(kMemBytes);
  const Layer l = random_layer(r, mem, 10, 16, 6);
  auto m = mem;
  EXPECT_FALSE(run(l, m, 8, r).err);
  m = mem;
  EXPECT_TRUE(run(l, m, 8, r, 5).err);
}

TEST(PwArray, RandomLayersEqualTheReference) {
  nasa::sim::Random r(nasa::sim::test_seed("PwArray.Random", 7));
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
// 16, 24 and 40), a memory that takes every request: exact, in model_cycles() (check()), and at
// least `floor` MACs a cycle
// (the rates measured when the block was built, less about 0.25: the lanes' 12 a step, less the
// weight loads, the short last block, and the steps the output bytes' writes take from the
// activation reads; docs/fpga.md).
TEST(PwArray, ModelShapesAreExactAndFast) {
  nasa::sim::Random r(nasa::sim::test_seed("PwArray.Shapes", 9));
  std::vector<uint8_t> mem(kMemBytes);
  struct Shape {
    uint16_t pix, cin, cout;
    double floor;
  };
  const Shape shapes[] = {{196, 16, 48, 10.2},  {196, 48, 16, 9.6},  {49, 24, 144, 9.65},
                          {49, 144, 24, 10.65}, {49, 240, 40, 10.3}, {49, 40, 120, 10.05}};
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

}  // namespace
