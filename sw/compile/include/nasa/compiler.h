// Int8 supernet and candidate compiler: quantizes a float supernet once (BN folded, per-channel
// int8 weights, activation scales calibrated on sample images and shared by every choice of a
// layer so any candidate composes), then compiles a candidate and a batch of images into an
// engine program (descriptors + memory image) for a hardware configuration.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nasa/batch_regs.h"
#include "nasa/desc.h"
#include "nasa/dist.h"
#include "nasa/float_eval.h"
#include "nasa/hw_spec.h"
#include "nasa/quant.h"
#include "nasa/safetensors.h"
#include "nasa/spec.h"

namespace nasa::compile {

// One engine convolution (Conv, DwConv or Fc) with its int8 weights (OHWI, HWC for depthwise)
// and per-channel records.
struct QConv {
  hw::Op op = hw::Op::Conv;
  int cin = 0, cout = 0, k = 1, stride = 1;
  hw::Act act = hw::Act::None;
  std::vector<int8_t> w;
  std::vector<quant::ChannelParams> prm;
  float in_scale = 1.0f, out_scale = 1.0f;  // activation scales of its input and output
};

// A convolution of a weight file with its BatchNorm folded in (quant::fold_bn): OIHW weights
// (cin_g = 1 for depthwise) and bias; what quantize() quantizes and `nasa export` writes.
struct FoldedConv {
  int cout = 0, cin_g = 0, k = 1;
  std::vector<float> w, b;
};
// `prefix`: "stem", "head" or "layers.<i>.choices.<j>[.expand|.dw|.project]".
FoldedConv fold_conv(const weights::TensorFile& wf, const std::string& prefix);
// The classifier head.fc as a 1x1 "convolution" of `classes` x head channels (no BatchNorm).
FoldedConv fold_fc(const weights::TensorFile& wf, const spec::Supernet& net);
// The head's input: the last choice layer's output (the stem's without layers), stride applied.
spec::LayerShape head_input(const spec::Supernet& net);

// One (layer, choice): its convolutions in order and, for MBConv with identity shortcut, the
// residual add's requant of (project output, block input) to the layer's output scale.
struct QOp {
  std::vector<QConv> convs;
  bool residual = false;
  quant::Requant add_a{}, add_b{};
};

struct QSupernet {
  spec::Supernet net;
  // The input normalization the weights were trained with (their metadata) and the scale of the
  // network input: the largest |normalized pixel| / 127 (1/127 without normalization).
  floatnet::Normalization norm;
  float in_scale = 1.0f / 127;
  std::vector<float> scale;     // scale[i]: input of choice layer i; scale[L]: input of the head
  QConv stem;
  std::vector<std::vector<QOp>> ops;  // [layer][choice]
  QConv head_conv;
  quant::Requant gap{};
  QConv fc;
  float logit_scale = 1.0f;
};

// Calibrates on `images` (each evaluated with candidates that together visit every choice),
// network inputs normalized as the weights record (floatnet::read_normalization).
// `ranks`: the ranks of an mpirun job calibrating together (docs/mpi.md), each observing the
// images n with n mod N == its rank; the activation maxima are the maxima over the ranks, so the
// result is the same on any number of ranks. `threads` threads of this process share its images
// (the same result on any number: maxima).
QSupernet quantize(const spec::Supernet& net, const weights::TensorFile& weights,
                   std::span<const floatnet::Tensor> images, dist::Comm* ranks = nullptr,
                   int threads = 1);
// The same calibrated on images [0, calib) of `d` (the first training images).
QSupernet quantize(const spec::Supernet& net, const weights::TensorFile& weights,
                   const data::Dataset& d, size_t calib, dist::Comm* ranks = nullptr,
                   int threads = 1);

// A named block of the memory image (the memory map).
struct Region {
  std::string name;
  uint32_t addr = 0;
  uint64_t size = 0;
  // only read by the hardware (weights, records, templates, descriptors, images, labels, given
  // candidate vectors): a device still holds it as written after a run
  bool input = false;
};

// The order of a candidate program's descriptors (docs/engine.md "Image groups"): the stem and
// the first `prefix_layers` choice layers run for `group` images at a time (layer-major within a
// group, group after group), then the rest layer-major over every image. In compile()'s argument
// -1 / 0 let it choose.
struct ProgramOrder {
  int prefix_layers = -1;
  uint32_t group = 0;
};

struct Program {
  std::vector<uint8_t> image;   // the whole memory, address 0 = image[0]
  std::vector<Region> regions;  // every block placed, in address order
  uint32_t desc_addr = 0, desc_count = 0;
  uint32_t win_base = 0, win_limit = 0;
  // CSR ScratchBase: the on-chip scratch's window the program keeps activations in (docs/engine.md
  // "On-chip scratch"; its bytes in `image` are unused); 0: none
  uint32_t scratch_base = 0;
  std::vector<uint32_t> logits_addr;  // per image: `classes` int8 logits
  std::vector<Desc> descs;
  ProgramOrder order;  // the order it runs in (prefix_layers 0: layer-major)
};

// `images_u8`: n images of in_h*in_w*in_c bytes (HWC). Throws if a layer does not fit `cfg`.
// on_chip: keep activation tensors in the on-chip scratch (docs/engine.md "On-chip scratch")
// where they fit, when `cfg` has one (false: every tensor in memory).
// order: where the program runs image groups (docs/engine.md "Image groups"); chosen by default.
Program compile(const QSupernet& q, const spec::Candidate& c,
                std::span<const std::vector<uint8_t>> images_u8, const hw::Config& cfg,
                bool on_chip = true, const ProgramOrder& order = {});

// Preflight (docs/cli.md "Preflight"): which ops of the supernet `cfg` cannot run, from their
// shapes alone (the engine's validation of every descriptor each op compiles to, row bands
// included, and batch mode's layer and choice limits), before any training, data or search.
// Each problem names the spec's own place: "layers[1].choices[1] 'conv_k7'", "stem", "head".
struct OpProblem {
  int layer = -1, choice = -1;  // layers[layer].choices[choice]; -1: the stem, the head or the net
  std::string where, what;      // "layers[1].choices[1] 'conv_k7'", "its reduction ... KredMax"
  bool batch_only = false;      // a limit of batch runs only (candidate programs do not have it)
};
std::vector<OpProblem> check_ops(const QSupernet& q, const hw::Config& cfg);
// The supernet quantized from random weights (seed) and one blank image: what needs only its
// shapes (preflight, feasibility of constraints) takes it before any training.
QSupernet quantize_shapes(const spec::Supernet& net, uint64_t seed = 1);
// Throws std::invalid_argument listing every problem of check_ops (`source` names the spec in
// the message); with `cands` (programs of those candidates, not a batch run), only the ops they
// use and no limit of batch runs.
void preflight(const QSupernet& q, const hw::Config& cfg, std::string_view source = {},
               std::span<const spec::Candidate> cands = {});

// A batch run (docs/fusion.md): the whole supernet compiled once into template descriptors, the
// weights, images, labels and candidate vectors placed, plus the batch CSRs and tables.
struct BatchOptions {
  uint32_t mini_batch = 32;  // images per mini-batch (arena slots per depth)
  bool dump_logits = false;  // keep every (leaf, image)'s logits (LOGITS_STRIDE != 0)
  // keep the arena and the node insides in the on-chip scratch (docs/engine.md "On-chip
  // scratch") when the configuration has one and they fit it (false: every activation in memory)
  bool on_chip = true;
  // candidate generation on chip (compile_batch with generate > 0)
  uint32_t gen_mode = static_cast<uint32_t>(hw::GenMode::Sample);  // CSR GenMode
  uint32_t gen_seed = 1;
  uint32_t gen_prob = 16384;  // of 65536
  std::vector<spec::Candidate> parents;
};

struct BatchProgram {
  Program program;  // image, memory map, templates (descs), window
  batch::Regs regs;
};

// `cands` are placed in memory unless `generate` > 0: then cand_gen makes that many on chip.
// Only the weights of the ops the batch reaches are placed: every op when generating, else
// those its candidates choose.
BatchProgram compile_batch(const QSupernet& q, std::span<const spec::Candidate> cands,
                           size_t generate, std::span<const std::vector<uint8_t>> images,
                           std::span<const uint8_t> labels, const hw::Config& cfg,
                           const BatchOptions& opt);

// One batch run of a plan: candidates [cand_begin, cand_end) of the batch (generated ones:
// 0, 0, the run generates them all) on images [img_begin, img_end), in mini-batches of
// `mini_batch` images.
struct BatchRun {
  size_t cand_begin = 0, cand_end = 0, img_begin = 0, img_end = 0;
  uint32_t mini_batch = 1;
};
// Splits a batch into as many batch runs as `cfg` needs (docs/fusion.md "Batch runs of a
// target"): candidates in order into groups the node table, the candidate limit and the
// address space (their weights with one image) take; per group, the largest mini-batch up to
// opt.mini_batch that fits, and images in runs of as many as fit beside it. One run when the
// whole batch fits. Throws when a single candidate (or on-chip generation's every op) does not
// fit with one image, naming it and the bytes.
std::vector<BatchRun> plan_batch(const QSupernet& q, std::span<const spec::Candidate> cands,
                                 size_t generate, size_t n_images, const hw::Config& cfg,
                                 const BatchOptions& opt);
// The most of `n_images` images one program of `cand` (compile()) holds in `cfg`'s address space
// (at least 1; throws as compile() does when one image does not fit).
size_t images_per_program(const QSupernet& q, const spec::Candidate& cand, size_t n_images,
                          const hw::Config& cfg, bool on_chip = true);

}  // namespace nasa::compile
