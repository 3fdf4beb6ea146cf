// Self-contained engine programs for cosimulation (a memory image plus the CSR values that run it)
// and the builder that lays layers out at random unaligned addresses with realistic data.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nasa/desc.h"
#include "nasa/hw_spec.h"
#include "nasa/memory_image.h"

namespace nasa::sim {

// Small deterministic generator (xoshiro256**, seeded through splitmix64) with its own
// distributions, so a seed reproduces the same case with any standard library.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  uint64_t uniform(uint64_t lo, uint64_t hi);  // inclusive
  int64_t uniform_signed(int64_t lo, int64_t hi);
  double real();  // [0, 1)
  double normal(double mean, double sigma);
  bool chance(double p) { return real() < p; }
  template <class T>
  const T& pick(std::span<const T> v) {
    return v[uniform(0, v.size() - 1)];
  }

 private:
  uint64_t s_[4];
};

// Seed of case `index` of a run started with `seed` (independent of how many cases run).
uint64_t derive_seed(uint64_t seed, uint64_t index);

struct Program {
  std::string name;  // what the case is, for reports
  uint64_t seed = 0;
  std::vector<uint8_t> image;  // the whole memory, address 0 = image[0]
  uint32_t desc_addr = 0, desc_count = 0, win_base = 0, win_limit = 0;
  // CSR ScratchBase: activations placed in the on-chip scratch's window (docs/engine.md "On-chip
  // scratch"); 0: none. The image holds the window's initial bytes (the cosim loads them).
  uint32_t scratch_base = 0;
  std::vector<Desc> descs;  // the descriptors at desc_addr, in order
  // A mini-batch stream: the program is `stream` instances of one layer (the same weights and
  // records, each image its own input and output), as the scheduler issues a node's layer for
  // the images of a mini-batch; the steady-state time of a layer is measured on its middle one.
  uint32_t stream = 1;
};

// Replaces descriptor `index` of `p`, in `p.descs` and in the image.
void rewrite_desc(Program& p, uint32_t index, const Desc& d);

// A descriptor with its shape fields set (addresses and requant are filled by add_layer).
Desc layer_shape(hw::Op op, uint16_t h, uint16_t w, uint16_t cin, uint16_t cout, uint8_t k = 1,
                 uint8_t stride = 1, hw::Act act = hw::Act::None, uint8_t q6 = 0);

// One line naming every field of a descriptor (enough to rebuild it by hand).
std::string describe(const Desc& d);

// How add_layer picks requantization: outputs spread over the int8 range, or deliberately
// saturated upwards / downwards.
enum class Quant { Normal, SaturateHigh, SaturateLow };

// Lays out a program: every block at a random small gap from the previous one (no alignment),
// random int8 data, random junk in outputs, random canary bytes outside the window.
// Calibration: each added layer is also executed (nasa::ref::execute) on a scratch copy, so a
// layer that consumes an earlier layer's output sees realistic values when its requant is chosen.
class ProgramBuilder {
 public:
  ProgramBuilder(const hw::Config& cfg, uint64_t seed);

  Rng& rng() { return rng_; }
  const hw::Config& config() const { return cfg_; }

  // A fresh block of `size` bytes inside the window at a random small gap (unaligned; after
  // set_align(a), at the next multiple of a).
  uint32_t alloc(uint64_t size);
  void set_align(uint32_t a) { align_ = a; }
  // A block for an activation tensor (a layer's input or output): as alloc, or on configurations
  // with an on-chip scratch, in about half the programs, for about half the tensors, inside the
  // scratch's window (Program::scratch_base; the layout skips over the window).
  uint32_t activation(uint64_t size);
  // activation + random activations (a mix of ReLU-like non-negative and signed spreads).
  uint32_t tensor(uint64_t size);
  // Places the descriptor block here in the layout (default: after everything else).
  void reserve_descs(uint32_t count);

  // Completes `d`, whose op, act, k, stride, h, w, cin, cout (and q6 for Relu6) the caller set:
  // allocates and fills what it reads (in_addr / in2_addr left 0 get fresh random tensors),
  // weights and per-channel records, the output (unless out_addr is set), and picks M/S (and
  // Mb/Sb). With `junk`, fields the op ignores get random values. Returns the completed layer.
  Desc add_layer(Desc d, Quant quant = Quant::Normal, bool junk = false);
  // Another instance of the completed layer `d` (its weights, records and requant) on a fresh
  // random input (and second input for Add), writing a fresh output. Returns it.
  Desc add_instance(Desc d);
  // Adds a descriptor exactly as given (for error cases); nothing is allocated or executed.
  void add_raw(const Desc& d);
  // What memory holds once the layers added so far have run (the reference's view).
  std::span<const uint8_t> calibrated() const { return calib_; }

  std::span<uint8_t> image() { return image_; }  // initial memory, for hand edits

  // Places the descriptors, sets the window to everything allocated (plus `limit_slack` bytes),
  // and pads the image with canary bytes on both sides of the window.
  Program finish(std::string name, std::optional<uint32_t> limit_slack = std::nullopt);

 private:
  void grow(uint64_t end);
  void fill_activations(uint32_t addr, uint64_t size);
  void fill_weights(uint32_t addr, uint64_t size, double sigma);

  hw::Config cfg_;
  uint64_t seed_;
  Rng rng_;
  Arena arena_;
  uint32_t align_ = 1;
  // the on-chip scratch's window [sc_lo_, sc_hi_) when this program uses it, its blocks
  Rng sc_rng_;
  uint64_t sc_lo_ = 0, sc_hi_ = 0;
  Arena sc_arena_{0, 0};
  std::vector<uint8_t> image_;  // initial contents
  std::vector<uint8_t> calib_;  // contents with the layers executed so far
  std::vector<Desc> descs_;
  std::optional<uint32_t> desc_addr_;
  uint32_t reserved_descs_ = 0;
};

}  // namespace nasa::sim
