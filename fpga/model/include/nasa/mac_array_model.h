// The cycles of rtl/nasa_mac_array.sv (the board's MAC array, docs/fpga.md "An output-stationary
// array") for one layer, with a memory that takes every request and answers a read the next
// cycle (the board's SPRAM behind its memory controller, the array's requests first): its
// schedule, step by step. ctest MacArray.* holds the block to it cycle for cycle; the board's
// model (nasa::mcu::System) will time the array's layers with it.
#pragma once

#include <cstdint>

namespace nasa::mcu {

// A layer as the array's ports take it (the rest of them, addresses of the input, weights and
// records, and the clamp, do not change its cycles).
struct ArrayLayer {
  uint32_t out = 0;  // the output's byte address (its rows decide the row buffer's writes)
  uint32_t pix = 0;  // P: output pixels (Ho x Wo)
  uint32_t cin = 0, cout = 0;
  bool dw = false;    // depthwise
  bool stem = false;  // a Conv of one input channel
  bool add = false;   // a residual add of `pix` bytes (two records, no weights)
  // the window paths (dw, stem): input h x w, output width wo, k x k, stride, rows of zeros above
  uint32_t h = 0, w = 0, wo = 0;
  uint32_t k = 1, stride = 1, pad_top = 0;
  // the first channel whose record's S is outside [1, MaxShift] (the add: 0 or 1 for its two
  // records), kNoBadRecord if none: the array stops when that channel's block's records are in
  uint32_t bad = kNoBadRecord;
  static constexpr uint32_t kNoBadRecord = ~0u;
};

// The first channel of the block that holds channel `c` (pointwise blocks of 3 channels, window
// paths 8, the add one block).
uint32_t array_block_start(const ArrayLayer& l, uint32_t c);

// The output channels the layer writes: K, or those of the blocks before its bad record's.
uint32_t array_channels_written(const ArrayLayer& l);

// Output pixel p's taps inside the input (the window paths; the reference's Axis::lo/hi).
uint32_t array_taps(const ArrayLayer& l, uint32_t p);

// The layer's cycles, counted from the cycle after the array's start_i pulse to the last cycle
// it is busy.
uint64_t array_cycles(const ArrayLayer& l);

// The memory rows the layer reads (weights, records, activations; re-reads counted) and the bytes
// it writes (strobed): what the board's counters DramRdBytes / 8 and DramWrBytes add.
uint64_t array_reads(const ArrayLayer& l);
uint64_t array_write_bytes(const ArrayLayer& l);

}  // namespace nasa::mcu
