// The schedule of rtl/nasa_mac_array.sv (its header), cycle by cycle: nasa/mac_array_model.h.
#include "nasa/mac_array_model.h"

#include <algorithm>
#include <set>

namespace nasa::mcu {
namespace {

// The output channels of a block (the RTL's header): up to three on the pointwise path (1x1
// Conv, four MACs a channel a step), eight on the window paths (DwConv, the stem)
constexpr uint32_t kPointwiseBlock = 3, kWindowBlock = 8;

// Whether the block of kb channels from c0 holds the layer's bad record (it stops there).
bool bad_block(const ArrayLayer& l, uint32_t c0, uint32_t kb) {
  return l.bad != ArrayLayer::kNoBadRecord && l.bad - c0 < kb;
}

// The stepper's cycles for one block of kb channels from cycle c (a memory that takes every
// request; the RTL's header): pixel p takes steps(p) steps, a step a cycle, unless the step's row
// read (pointwise: even steps only) meets an output write (the write goes first) or a pixel's
// last step comes within `drain` cycles of the one before (the lanes' drain of `drain` sums). A
// pixel whose last step leaves the stepper at t has its bytes k = 0..kb-1 (at y0(p) + k) out of
// the requantization at t + kOut + k; a byte of another row than those before it writes the row
// buffer, and the pixel's bytes go out at t + kOut + kb. Returns the cycle after the block's last,
// t + kOut + 1 + drain of its last pixel.
constexpr uint64_t kOut = 13;  // the lanes' drain 5 cycles after the last step, requantization 8
template <class Steps, class Y0>
uint64_t block_cycles(uint64_t c, uint32_t pix, Steps steps, bool pointwise, uint32_t drain,
                      uint32_t kb, Y0 y0) {
  std::set<uint64_t> writes;
  uint32_t gap = drain - 1;
  uint64_t t_last = 0;
  for (uint32_t p = 0; p < pix; ++p) {
    const uint32_t n = steps(p);
    for (uint32_t s = 0; s < n;) {
      const bool last = s + 1 == n;
      const bool reads = !pointwise || s % 2 == 0;
      const bool go = (!last || gap >= drain - 1) && (!reads || !writes.count(c));
      gap = std::min(gap + 1, drain - 1);
      if (go) {
        if (last) {
          gap = 0;
          t_last = c;
          const uint64_t y = y0(p);
          for (uint32_t k = 1; k < kb; ++k) {
            if ((y + k) / 8 != (y + k - 1) / 8) writes.insert(c + kOut + k);
          }
          writes.insert(c + kOut + kb);
        }
        ++s;
      }
      ++c;
    }
    // (writes before the next pixel's first step can no longer meet a read)
    writes.erase(writes.begin(), writes.lower_bound(c));
  }
  return t_last + kOut + 1 + drain;
}

// The pointwise schedule: per block of kb channels, 2 x kb x C / 8 + 2 cycles of weight rows and
// kb + 2 of records, then its steps (block_cycles), C / 4 a pixel.
uint64_t pointwise_cycles(const ArrayLayer& l) {
  uint64_t c = 0;
  for (uint32_t co0 = 0; co0 < l.cout; co0 += kPointwiseBlock) {
    const uint32_t kb = std::min(kPointwiseBlock, l.cout - co0);
    c += 2ull * kb * l.cin / 8 + 2 + kb + 2;  // weight rows, records
    if (bad_block(l, co0, kb)) return c;
    c = block_cycles(
        c, l.pix, [&](uint32_t) { return l.cin / 4u; }, true, 3, kb,
        [&](uint32_t p) { return uint64_t{l.out} + uint64_t{p} * l.cout + co0; });
  }
  return c;
}

// The depthwise and stem schedules: per block of kb channels (depthwise 8, the stem
// min(8, K - co0)), k * k + 2 cycles of weight rows (a row a cycle), kb + 2 of records, 2 more
// to the first step (its tap bounds found in between), then its steps (block_cycles), one per tap
// inside the input, the drain 8 sums.
uint64_t window_cycles(const ArrayLayer& l) {
  uint64_t c = 0;
  for (uint32_t c0 = 0; c0 < l.cout; c0 += kWindowBlock) {
    const uint32_t kb = std::min(kWindowBlock, l.cout - c0);
    const uint64_t ksq = uint64_t{l.k} * l.k;
    c += ksq + 2 + kb + 2;
    if (bad_block(l, c0, kb)) return c;
    c += 2;
    c = block_cycles(
        c, l.pix, [&](uint32_t p) { return array_taps(l, p); }, false, 8, kb,
        [&](uint32_t p) { return uint64_t{l.out} + uint64_t{p} * l.cout + c0; });
  }
  return c;
}

// The residual add: its two records (2 + 2 cycles), then a read a cycle, a's row and b's row of
// each byte in turn, a read giving way to an output write; byte i is out of the requantization
// kAddOut cycles after its b read, and a byte that ends a row writes it the cycle after; the last
// row is written the cycle after the last byte, and the array is idle two cycles later.
uint64_t add_cycles(const ArrayLayer& l) {
  constexpr uint64_t kAddFirst = 4, kAddOut = 7, kAddEnd = 3;
  if (l.bad != ArrayLayer::kNoBadRecord) return kAddFirst;
  std::set<uint64_t> writes;
  uint64_t c = kAddFirst, y = 0;
  for (uint32_t i = 0; i < l.pix; ++i) {
    for (int k = 0; k < 2; ++k) {
      while (writes.count(c)) ++c;
      ++c;
    }
    y = c - 1 + kAddOut;
    if ((uint64_t{l.out} + i) % 8 == 7) writes.insert(y + 1);
    writes.erase(writes.begin(), writes.lower_bound(c));
  }
  return y + kAddEnd;
}

}  // namespace

uint32_t array_taps(const ArrayLayer& l, uint32_t p) {
  const auto taps = [&](int32_t o0, uint32_t size) {  // of a window at o0, inside [0, size)
    const int32_t lo = std::max(0, -o0);
    const int32_t hi =
        std::min<int32_t>(static_cast<int32_t>(l.k), static_cast<int32_t>(size) - o0);
    return static_cast<uint32_t>(std::max(0, hi - lo));
  };
  const auto k = static_cast<int32_t>(l.k), st = static_cast<int32_t>(l.stride);
  const int32_t oy = static_cast<int32_t>(p / l.wo), ox = static_cast<int32_t>(p % l.wo);
  return taps(oy * st - static_cast<int32_t>(l.pad_top), l.h) * taps(ox * st - (k - 1) / 2, l.w);
}

uint64_t array_cycles(const ArrayLayer& l) {
  if (l.add) return add_cycles(l);
  return l.dw || l.stem ? window_cycles(l) : pointwise_cycles(l);
}

uint64_t array_reads(const ArrayLayer& l) {
  const bool bad = l.bad != ArrayLayer::kNoBadRecord;
  if (l.add) return 2 + (bad ? 0 : 2ull * l.pix);  // the two records; a's and b's row a byte
  uint64_t n = 0;
  if (!l.dw && !l.stem) {  // per block: each weight row twice (half a row a RAM word), the
                           // records, then C / 8 rows a pixel
    for (uint32_t co0 = 0; co0 < l.cout; co0 += kPointwiseBlock) {
      const uint32_t kb = std::min(kPointwiseBlock, l.cout - co0);
      n += 2ull * kb * l.cin / 8 + kb;
      if (bad_block(l, co0, kb)) break;
      n += uint64_t{l.pix} * l.cin / 8;
    }
    return n;
  }
  uint64_t taps = 0;  // per block: a row a tap of weights, its records, a row a step
  for (uint32_t p = 0; p < l.pix; ++p) taps += array_taps(l, p);
  for (uint32_t c0 = 0; c0 < l.cout; c0 += kWindowBlock) {
    const uint32_t kb = std::min(kWindowBlock, l.cout - c0);
    n += uint64_t{l.k} * l.k + kb;
    if (bad_block(l, c0, kb)) break;
    n += taps;
  }
  return n;
}

uint32_t array_block_start(const ArrayLayer& l, uint32_t c) {
  if (l.add) return 0;
  const uint32_t blk = l.dw || l.stem ? kWindowBlock : kPointwiseBlock;
  return c / blk * blk;
}

uint32_t array_channels_written(const ArrayLayer& l) {
  return l.bad == ArrayLayer::kNoBadRecord ? l.cout : array_block_start(l, l.bad);
}

uint64_t array_write_bytes(const ArrayLayer& l) {
  return uint64_t{l.pix} *
         (l.add ? (l.bad == ArrayLayer::kNoBadRecord) : array_channels_written(l));
}

}  // namespace nasa::mcu
