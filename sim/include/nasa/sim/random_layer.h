// Random valid layers with the shapes and data of real CNN / NAS layers, for cosimulation:
// one descriptor, its tensors and parameters at random unaligned addresses in a fresh image.
#pragma once

#include <cstdint>

#include "nasa/desc.h"
#include "nasa/hw_spec.h"
#include "nasa/sim/program.h"

namespace nasa::sim {

struct RandomLayerOptions {
  // Upper bound on a layer's estimated work in cycles (MACs / (Rows*Cols) + vector taps / Cols +
  // bytes moved / port width); 0 picks a per-configuration default that keeps a regression of
  // thousands of layers within minutes. One layer in eight may use eight times this.
  uint64_t max_work_cycles = 0;
  // Only layers the board's MAC array takes (fpga/fw/fw.c arr_conv(), add_any()): 1x1 Convs of
  // stride 1 and DwConvs (with or without a folded residual) and Adds, channels a multiple of 8
  // up to 256, H and W up to 255, every tensor 8-aligned, no packed images.
  bool board_array = false;
};

// Estimated work of a layer in cycles (see RandomLayerOptions).
uint64_t work_cycles(const Desc& d, const hw::Config& cfg);

// Op, activation and shape fields of a layer that passes validation for `cfg` (addresses and
// requant fields left zero). Distribution: Conv 35%, DwConv 20%, Fc 10%, MaxPool 7%,
// AvgPool 8%, Add 10%, Gap 10%; sizes and channel counts as in real networks.
Desc random_shape(Rng& rng, const hw::Config& cfg, const RandomLayerOptions& opt = {});

// A complete one-layer program from `seed`: ~5% of layers saturate on purpose, ~30% carry random
// values in the descriptor fields their op ignores.
Program random_layer(uint64_t seed, const hw::Config& cfg, const RandomLayerOptions& opt = {});

// random_layer's layer run for `images` images of a mini-batch: the same weights and records,
// each image a fresh input and output (Program::stream). images = 1 is random_layer.
Program random_stream(uint64_t seed, const hw::Config& cfg, uint32_t images,
                      const RandomLayerOptions& opt = {});

// Bad descriptors for the error paths: 1-3 bits of p's descriptors flipped (opcode, shape,
// kernel, stride, activation, quantization and address fields alike), or with chance 0.15 a
// per-channel record's shift set to a random byte; " (corrupted)" appended to its name.
void corrupt(Program& p, uint64_t seed);

// One per-channel record's S (a random channel of a random Conv, DwConv or Fc layer of p) set to
// a byte outside [1, MaxShift]: the run must stop at that layer with BadQuant (or at an error
// before it); " (bad record)" appended to its name. Returns false (p unchanged) when p has no
// layer with records.
bool spoil_record(Program& p, uint64_t seed);

// A program of 2-5 independent random layers (as random_layer, each on fresh tensors), for what
// runs between layers: the next descriptor's prefetch, the handover from one layer to the next.
Program random_program(uint64_t seed, const hw::Config& cfg, const RandomLayerOptions& opt = {});

// A program of 2-6 random layers that depend on each other: a layer reads the previous one's
// output ('d' in the name), sometimes writing over that layer's input ('w'), or adds it to an
// older layer's output ('a', a residual), or is the previous layer again on a fresh input ('r':
// its weights stay on chip), or is independent ('i').
Program random_chain(uint64_t seed, const hw::Config& cfg, const RandomLayerOptions& opt = {});

}  // namespace nasa::sim
