// Execution orders of a fused graph, the activation arena each one needs, and the DRAM traffic it
// causes under a simple on-chip buffer model, against the lower bound of DESIGN.md section 9.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nasa/fusion.h"
#include "nasa/hw_spec.h"
#include "nasa/spec.h"

namespace nasa::fusion {

// - Unfused: every candidate of the batch alone (duplicates included), stem .. ops .. head: the
//   baseline without sharing.
// - DepthFirst: pre-order walk of the fused graph, children in insertion order, the head right
//   after each leaf: what the hardware scheduler does (docs/fusion.md).
// - DepthFirstGrouped: the same walk, but when a node's children are about to be visited, the
//   child whose choice equals the choice most recently executed at the children's layer (if any)
//   goes first, the others keep insertion order. Consecutive executions of one layer then reuse
//   the weights loaded last for it wherever the batch allows.
// - BreadthFirst: the stem, then for each depth 1..L all nodes of that depth (those of one choice
//   together, choices in order of first appearance, nodes in walk order), then every head: each
//   weight set is used in one run, at the price of keeping a whole level of activations live.
enum class ScheduleKind { Unfused, DepthFirst, DepthFirstGrouped, BreadthFirst };
inline constexpr std::array kScheduleKinds = {ScheduleKind::Unfused, ScheduleKind::DepthFirst,
                                              ScheduleKind::DepthFirstGrouped,
                                              ScheduleKind::BreadthFirst};
// "unfused", "depth_first", "depth_first_grouped", "breadth_first".
std::string_view schedule_name(ScheduleKind k);

// Skip steps are kept (they are nodes of the graph) but execute nothing: their output is their
// input.
enum class StepOp : uint8_t { Stem, Op, Skip, Head };

// A tensor of one image: the input image, a node output (an arena activation) or a leaf's logits.
enum class TensorKind : uint8_t { Image, Act, Logits };
struct Tensor {
  TensorKind kind = TensorKind::Act;
  uint32_t node = kNoParent;  // producing node (the leaf for logits; kNoParent for the image)
  int depth = -1;             // the producing node's depth (-1 for the image)
  uint64_t bytes = 0;         // per image
  bool operator==(const Tensor&) const = default;
};
inline constexpr uint32_t kImageTensor = 0;  // Schedule::tensors[0]

// One step runs one op for every image of a mini-batch.
struct Step {
  StepOp op = StepOp::Op;
  uint32_t node = 0;    // the graph node (the root for Stem, the leaf for Head)
  uint32_t op_id = 0;   // index into Schedule::ops: the op and its weight set
  uint32_t input = 0;   // tensor read
  uint32_t output = 0;  // tensor produced (== input for Skip)
  bool operator==(const Step&) const = default;
};

struct Schedule {
  ScheduleKind kind = ScheduleKind::DepthFirst;
  int num_layers = 0;
  std::vector<Step> steps;  // one mini-batch, in execution order
  // Tensors of one mini-batch; the unfused schedule has one per execution, the others one per
  // non-skip node, plus the image and one logits tensor per head step.
  std::vector<Tensor> tensors;
  // Every op of the supernet: [0] stem, [1] head, then (layer, choice) in order (op_id_of).
  std::vector<OpFootprint> ops;
};
uint32_t op_id_of(const spec::Supernet& net, int layer, int choice);

// Throws FusionError when `g` is empty or was not fused for `net`.
Schedule make_schedule(const spec::Supernet& net, const FusedGraph& g, ScheduleKind kind);

// The work of `s` that remains when the outputs of the nodes marked in `cached` (one flag per
// node of `g`, the graph `s` was made from) are already in DRAM from an earlier batch (a
// cross-generation activation cache): a node runs when it is not cached and its output is needed
// (it is a leaf, or one of its children runs); stem, op and skip steps of nodes that do not run
// are dropped, heads all stay. A cached output that a remaining step reads becomes an input like
// the image: read from DRAM, never written by this schedule. Throws FusionError when `cached`
// does not have one flag per node or marks a leaf (a leaf is a whole candidate: it is never
// evaluated twice).
Schedule with_cached(const Schedule& s, const FusedGraph& g, const std::vector<bool>& cached);
// Per node of `g`: whether it runs under `cached` (the rule of with_cached).
std::vector<bool> nodes_to_run(const FusedGraph& g, const std::vector<bool>& cached);

// Activation arena of one image (the hardware repeats it per image of a mini-batch with a
// stride). A tensor is live from the step that produces it to the last step that reads it. The
// image (at its own address) and the logits (written out) are not in the arena.
// - Unfused and depth-first schedules: one slot per depth 0..L (slot d holds the outputs of
//   depth d, sized for the largest; skip nodes alias their input's slot): the hardware layout.
// - Breadth-first: a tensor takes the first free slot large enough, else a new slot of its size;
//   its slot is freed after its last read.
// Slots are laid out in index order without padding.
struct ArenaSlot {
  uint64_t offset = 0, bytes = 0;
  bool operator==(const ArenaSlot&) const = default;
};
inline constexpr uint32_t kNoSlot = 0xFFFFFFFFu;
struct MemoryPlan {
  std::vector<ArenaSlot> slots;
  std::vector<uint32_t> slot_of;  // per tensor; kNoSlot for the image and logits
  uint64_t arena_bytes = 0;       // end of the last slot
  uint64_t peak_live_bytes = 0;   // max over steps of the bytes of live activations
  uint32_t peak_live_tensors = 0;
  uint64_t scratch_bytes = 0;  // largest total of one step's intra-op tensors (outside the arena)
};
MemoryPlan plan_memory(const Schedule& s);
nlohmann::json to_json(const MemoryPlan& p);

// On-chip buffers of the DRAM model.
struct BufferModel {
  uint64_t act_buffer_bytes = 0;
  uint64_t weight_buffer_bytes = 0;
};

// The buffers of a hardware configuration: the input buffer for activations, and the weight
// columns the engine holds (KredMax x Cols, double-buffered). (The on-chip scratch is not in
// this model yet: docs/fusion.md "Software view".)
BufferModel buffer_model(const hw::Config& cfg);

// Modeled DRAM traffic of running a schedule on `images` images, `mini_batch` images per step
// (the schedule repeats per mini-batch; the last one may be shorter). Rules:
// - Weights: the weight buffer caches whole weight sets (one per op: stem, head, each (layer,
//   choice)); using a set that is not resident reads all its bytes. A set larger than the buffer
//   is streamed (read at every use). When sets must be evicted, the one whose next use is
//   furthest away goes first (the scheduler knows the whole order; optimal for equal sizes, a
//   heuristic for unequal ones, so with room for only a few sets a shorter order can now and
//   then load more bytes than a longer one). Residency carries over from one mini-batch to the
//   next.
// - Activations: tensors of a mini-batch are (bytes per image x images in it). The activation
//   buffer caches whole tensors with the same furthest-next-use eviction. A step reads its input:
//   free when resident, else its bytes are read (and it becomes resident if it fits). The output
//   is placed in the buffer (if it fits) without traffic. A node output is written to DRAM once,
//   exactly when it is read at least once while not resident (it was evicted or never fit);
//   otherwise it never leaves the chip. The image is read from DRAM (never written); logits are
//   always written once.
// - Intra-op tensors (MBConv expansion and depthwise outputs, the head's intermediates) stay in
//   the engine when they fit the activation buffer, else each costs one write and one read. They
//   do not evict cached tensors.
// act_read_bytes includes the image reads, act_write_bytes the logits.
struct ScheduleReport {
  std::string name;
  uint64_t steps = 0;  // executed steps (stem, non-skip ops, heads) over all mini-batches
  uint64_t macs = 0;   // over all images
  uint64_t weight_bytes = 0, act_read_bytes = 0, act_write_bytes = 0, total_bytes = 0;
  uint64_t peak_live_act_bytes = 0;  // per image (MemoryPlan::peak_live_bytes)
  uint64_t arena_bytes = 0;          // per image (MemoryPlan::arena_bytes)
  bool operator==(const ScheduleReport&) const = default;
};

// Throws FusionError when `images` or `mini_batch` is 0.
ScheduleReport model_schedule(const Schedule& s, size_t images, const BufferModel& buffers,
                              size_t mini_batch = 1);
// One report per kScheduleKinds entry, in that order.
std::vector<ScheduleReport> compare_schedules(const spec::Supernet& net, const FusedGraph& g,
                                              size_t images, const BufferModel& buffers,
                                              size_t mini_batch = 1);
// DESIGN.md section 9, named "lower_bound": every weight set the batch uses read once, every
// image read once, every unique leaf's logits written once per image; the fused MACs. No
// schedule of model_schedule moves fewer bytes.
ScheduleReport dram_lower_bound(const spec::Supernet& net, const FusedGraph& g, size_t images);

nlohmann::json to_json(const ScheduleReport& r);
nlohmann::json to_json(std::span<const ScheduleReport> reports);  // an array

}  // namespace nasa::fusion
