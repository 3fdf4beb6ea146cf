// Layer descriptors: the host-side value type, its 64-byte encoding and the derived shapes
// (output size, byte sizes of every tensor, MACs) that validation and the cycle model share.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "nasa/hw_spec.h"

namespace nasa {

// Raw fields as stored in memory; `op` and `act` stay raw so illegal values can be represented.
struct Desc {
  uint8_t op = 0, act = 0, k = 1, stride = 1;
  uint16_t h = 0, w = 0, cin = 0, cout = 0;
  uint32_t in_addr = 0, in2_addr = 0, out_addr = 0, wgt_addr = 0, prm_addr = 0;
  uint16_t m = 0;
  uint8_t s = 0, q6 = 0;
  uint16_t mb = 0;
  uint8_t sb = 0;
  uint8_t patch = 0;  // hw::Patch bits; used in batch mode only (templates)
  uint16_t out_rows = 0;  // row band: output rows (0: the whole layer)
  uint8_t pad_top = 0;    // row band: zero rows above input row 0
  uint8_t res = 0;        // 1: a residual add folded into the Conv/DwConv (IN2_ADDR, M/S, Mb/Sb)
  uint8_t images = 0;     // packed images (> 1): image i at in + i*in_stride, out + i*out_stride
  uint32_t in_stride = 0, out_stride = 0;
};

// Whether a descriptor is a row band (OutRows != 0), and its vertical padding: PadTop for a
// band, (k-1)/2 for a whole sliding-window layer, 0 for other ops.
bool is_band(const Desc& d);
uint32_t top_pad(const Desc& d);

// A batch template as the engine runs it (docs/fusion.md "Op table and templates"): the
// address fields its PATCH bits name add the scheduler's X (node input), Y (arena slot),
// L (logits address) of the current image, or S (the image's scratch offset) to the offset the
// template holds (0, or a row band's). InFromX wins over InPlusS; OutFromL over OutFromY over
// OutPlusS. A packed template (Images > 1) runs at most `left` images (those left in the
// mini-batch from this one).
Desc patch_template(Desc d, uint32_t x, uint32_t y, uint32_t l, uint32_t s, uint32_t left = 255);

// Images a descriptor packs (docs/engine.md "Packed images"): Images, at least 1.
inline uint32_t images_of(const Desc& d) { return d.images > 1 ? d.images : 1; }
inline bool is_packed(const Desc& d) { return d.images > 1; }

std::array<uint32_t, hw::kDescWords> encode(const Desc& d);
Desc decode(std::span<const uint32_t, hw::kDescWords> words);

// Sizes derived from a (valid) descriptor; all in bytes except counts.
struct Shape {
  uint32_t ho = 0, wo = 0;  // output spatial size
  uint64_t in_bytes = 0;    // one input tensor
  uint64_t out_bytes = 0;   // output tensor
  uint64_t wgt_bytes = 0;   // weights (0 for ops without weights)
  uint64_t prm_bytes = 0;   // per-channel records (0 for ops without them)
  uint64_t kred = 0;        // reduction length per output (taps for vec ops)
  uint64_t macs = 0;        // multiply-accumulates (conv, fc, depthwise), incl. padding taps;
                            // of every packed image
  uint32_t images = 1;      // packed images: in_bytes, out_bytes are one image's
  uint64_t in_span = 0;     // bytes from IN_ADDR to the last image's input end
  uint64_t out_span = 0;    // bytes from OUT_ADDR to the last image's output end
};
Shape shape_of(const Desc& d);

// Whether the engine's input loader gathers a layer's pixels (docs/engine.md "Input loader"):
// a 1x1 stride-2 Conv or DwConv reads only the pixels it uses, each (cin bytes) into a slot of
// cin rounded up to `mem_bytes`, when those slots take no more room than the whole input.
bool gathers_input(const Desc& d, uint32_t mem_bytes);
// The slot of one gathered pixel: cin rounded up to `mem_bytes`.
uint64_t gather_slot_bytes(const Desc& d, uint32_t mem_bytes);

// Bytes of the input buffer a layer needs: its input tensor (both inputs of Add, the second at
// the next port-aligned offset; a folded residual first, then the input at the next port-aligned
// offset: residual_offset()).
uint64_t input_buffer_need(const Desc& d, const hw::Config& cfg);
// Where a layer's input starts in its input-buffer region: after a folded residual (Res), at
// the next port-aligned offset; else 0.
uint64_t residual_offset(const Desc& d, uint32_t mem_bytes);
// Where a packed image's input starts in the input buffer: image i at i times this (the input
// bytes rounded up to the port width).
uint64_t packed_image_offset(const Desc& d, uint32_t mem_bytes);
// Whether a descriptor folds a residual add (Res = 1).
inline bool has_residual(const Desc& d) { return d.res != 0; }
// Why a descriptor is Err::Oversize on `cfg`, in words with the numbers.
std::string oversize_detail(const Desc& d, const hw::Config& cfg);

// The on-chip scratch window of CSR ScratchBase (docs/engine.md "On-chip scratch"): empty when
// the configuration has no scratch or the base is 0.
struct ScratchWindow {
  uint64_t lo = 0, hi = 0;  // [lo, hi)
  ScratchWindow(const hw::Config& cfg, uint32_t base) {
    lo = cfg.scratch_window(base);
    hi = lo == 0 ? 0 : lo + cfg.scratch_bytes;
  }
  bool empty() const { return lo == hi; }
  bool overlaps(uint64_t addr, uint64_t size) const {
    return !empty() && size != 0 && addr < hi && addr + size > lo;
  }
  bool contains(uint64_t addr, uint64_t size) const {
    return !empty() && addr >= lo && addr + size <= hi;
  }
};

// Validation exactly as the engine does it (docs/engine.md); returns Err::None when legal.
// scratch_base: CSR ScratchBase (inputs and outputs inside its window or outside it, weights and
// records outside).
hw::Err validate(const Desc& d, const hw::Config& cfg, uint32_t win_base, uint32_t win_limit,
                 uint32_t scratch_base = 0);

std::string op_name(uint8_t op);
std::string err_name(hw::Err e);  // "Window", ...; "err<N>?" for values outside the table
std::string counter_name(hw::Counter c);  // "Cycles", ...; "counter<N>?" outside the table
const hw::Config& config_by_name(std::string_view name);  // throws std::invalid_argument

}  // namespace nasa
