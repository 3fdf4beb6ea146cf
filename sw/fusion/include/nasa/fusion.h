// Software fusion: hash-conses a batch of candidates into a fused graph (for a chain supernet the
// prefix trie, node for node the hardware node table of docs/fusion.md), its work and traffic
// statistics, and the batch sources (seeded random sampling, architecture files).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "nasa/spec.h"

namespace nasa::fusion {

// Every error of this layer; the message names the candidate (index, text), file and line, or
// argument that is wrong and what was expected.
class FusionError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

inline constexpr uint32_t kNoParent = 0xFFFFFFFFu;

// One unique op execution. The root (id 0) is the stem output shared by every candidate:
// parent kNoParent, layer -1, choice -1, depth 0. A node at depth d >= 1 runs choice `choice` of
// choice layer `layer` (= d - 1 in a chain supernet) on its parent's output. The hardware node
// table writes the root's parent as hw::kNoNode and its layer and choice as 0xFF.
struct Node {
  uint32_t parent = kNoParent;
  int layer = -1;
  int choice = -1;
  std::vector<uint32_t> children;  // insertion order
  int depth = 0;
  bool operator==(const Node&) const = default;
};

struct FusedGraph {
  std::vector<Node> nodes;              // id = allocation order
  std::vector<uint32_t> leaf_of;        // per candidate of the batch: its leaf node
  std::vector<uint32_t> unique_leaves;  // distinct leaves, in order of first appearance
  int num_layers = 0;                   // depth of every leaf
  bool operator==(const FusedGraph&) const = default;
};

// Identity of a node for hash-consing: the op/weight id (layer, choice) and the ids of the nodes
// it reads. Two candidates share a node exactly when the keys are equal; a chain supernet has one
// input per node, a cell (DAG) space would list several.
struct NodeKey {
  int layer = -1;
  int choice = -1;
  std::vector<uint32_t> inputs;
  bool operator==(const NodeKey&) const = default;
};
struct NodeKeyHash {
  size_t operator()(const NodeKey& k) const noexcept;
};

// Incremental fusion: candidates are added one at a time (e.g. as a generator produces them).
class Fuser {
 public:
  explicit Fuser(const spec::Supernet& net);

  // Validates `c` (FusionError naming its batch index) and returns its leaf.
  uint32_t add(const spec::Candidate& c);
  const FusedGraph& graph() const { return graph_; }

 private:
  // The node with this key, allocating it (next id, appended to its first input's children)
  // when it does not exist yet.
  uint32_t intern(int layer, int choice, std::span<const uint32_t> inputs);

  spec::Supernet net_;
  FusedGraph graph_;
  std::unordered_map<NodeKey, uint32_t, NodeKeyHash> index_;
  std::vector<bool> leaf_seen_;
};

// Fuses a whole batch. Throws FusionError for an empty batch or an invalid candidate (the message
// names the candidate's index in the batch and what is wrong with it).
FusedGraph fuse(const spec::Supernet& net, std::span<const spec::Candidate> batch);

// The choices on the path from the root to `node` (a candidate when `node` is a leaf).
spec::Candidate path_of(const FusedGraph& g, uint32_t node);

// Per-image bytes of one op as the accelerator stores and produces them (channels unpadded):
// - weight_bytes: int8 weights of every conv (OHWI / HWC for depthwise) plus one parameter
//   record (hw::kParamBytes: int32 bias, M, S) per output channel of every conv;
// - out_bytes: the op's result (int8 NHWC; the logits for the head; 0 for skip, which aliases);
// - intermediates: tensors produced and consumed inside the op (MBConv expand and depthwise
//   outputs; the head's 1x1 conv output and pooled vector).
struct OpFootprint {
  uint64_t macs = 0;
  uint64_t weight_bytes = 0;
  uint64_t out_bytes = 0;
  std::vector<uint64_t> intermediates;
  bool alias = false;          // skip: no work, the output is the input
  uint64_t act_bytes() const;  // out_bytes + all intermediates: every tensor the op produces
  bool operator==(const OpFootprint&) const = default;
};
OpFootprint op_footprint(const spec::Supernet& net, size_t layer, size_t choice);
OpFootprint stem_footprint(const spec::Supernet& net);
OpFootprint head_footprint(const spec::Supernet& net);

// Work and traffic of a batch, unfused (every candidate alone, duplicates included) and fused
// (stem once, every unique node once, the head once per unique leaf).
// - MACs and act bytes per image; act bytes: every tensor produced (OpFootprint::act_bytes),
//   the input image excluded;
// - weight bytes per batch (any number of images): OpFootprint::weight_bytes; unfused sums every
//   op of every candidate, fused counts each distinct weight set (stem, each (layer, choice)
//   used, head) once.
struct FusionStats {
  size_t candidates = 0, unique_candidates = 0;
  size_t nodes = 0;  // root included: the hardware NodeCount
  uint64_t macs_unfused = 0, macs_fused = 0;
  uint64_t weight_bytes_unfused = 0, weight_bytes_fused = 0;
  uint64_t act_bytes_unfused = 0, act_bytes_fused = 0;
  bool operator==(const FusionStats&) const = default;
};
FusionStats fusion_stats(const spec::Supernet& net, const FusedGraph& g);
// Keys: the field names with their scope (macs_fused_per_image, act_bytes_fused_per_image,
// weight_bytes_fused, ...), plus mac_ratio = macs_unfused / macs_fused.
nlohmann::json to_json(const FusionStats& s);

// `n` candidates, each layer uniform over its K_i choices (rng() % K_i from std::mt19937_64
// seeded with `seed`, so the sequence is the same on every platform); duplicates allowed.
std::vector<spec::Candidate> random_candidates(const spec::Supernet& net, size_t n, uint64_t seed);

// One candidate per line in text form ("2-0-1-3"); surrounding blanks ignored, blank lines and
// lines starting with '#' skipped. Errors name the file and the line; a file without any
// candidate is an error.
std::vector<spec::Candidate> read_arch_file(const std::filesystem::path& path,
                                            const spec::Supernet& net);
// The same from the text of such a file; `source` names it in the messages.
std::vector<spec::Candidate> parse_arch_text(std::string_view text, std::string_view source,
                                             const spec::Supernet& net);

// The fused graph drawn as an SVG document: the prefix trie, one row per depth, dots coloured by
// op (a legend names the ops) and sized by MACs, op names where they fit, leaves shared by
// duplicates marked xN, each row's node count and MACs beside it down to the fused total. At
// most 1600 px wide: a trie wider than that is drawn down to the deepest row that fits and each
// subtree below it collapsed into one box (its node count per layer, its candidates).
std::string fused_graph_svg(const spec::Supernet& net, const FusedGraph& g);

}  // namespace nasa::fusion
