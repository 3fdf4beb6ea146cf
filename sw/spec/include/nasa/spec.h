// Supernet specification: the search space (stem, choice layers, head), its JSON form, candidate
// encoding, derived layer shapes and the MAC/parameter cost model. Format: docs/supernet.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nasa::spec {

// Every error of this layer; the message names the source, the field path and what was expected.
class SpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class OpKind { MBConv, Conv, Skip };

// One candidate op. `k` is ignored for Skip; `expand` applies to MBConv only (1 elsewhere).
struct OpSpec {
  OpKind kind = OpKind::Skip;
  int k = 3;
  int expand = 1;
};
// Equal when they name the same op ("skip" equals "skip" whatever k says).
bool operator==(const OpSpec& a, const OpSpec& b);

// "mb_k3_e6", "conv_k3", "skip".
std::string op_name(const OpSpec& op);
// Inverse of op_name; throws SpecError listing the accepted names.
OpSpec parse_op(std::string_view name);

struct ChoiceLayer {
  int out_channels = 0;
  int stride = 1;
  std::vector<OpSpec> choices;
  bool operator==(const ChoiceLayer&) const = default;
};

// kxk conv (same padding) + BN + activation.
struct Stem {
  int out_channels = 0;
  int k = 3;
  int stride = 1;
  bool operator==(const Stem&) const = default;
};

// 1x1 conv to `channels` + BN + activation, global average pool, FC to the classes.
struct Head {
  int channels = 0;
  bool operator==(const Head&) const = default;
};

struct Supernet {
  std::string name;
  int in_h = 0, in_w = 0, in_c = 0;
  int classes = 0;
  Stem stem;
  std::vector<ChoiceLayer> layers;
  Head head;
  std::string act = "relu6";  // "relu6" or "relu": every activation of the network
  bool operator==(const Supernet&) const = default;
};

// Input shape and stride of a choice layer; the output is ceil(h/stride) x ceil(w/stride) x cout.
struct LayerShape {
  int h = 0, w = 0, cin = 0, cout = 0, stride = 1;
  bool operator==(const LayerShape&) const = default;
};

// Limits the validator enforces (they keep every op's cost below 2^63; the validator also
// rejects a supernet whose largest candidate would cost 2^63 or more).
inline constexpr int kMaxDim = 4096;  // in_h, in_w, every channel count
inline constexpr int kMaxClasses = 65535;

// Throws SpecError for anything parse_supernet would reject; `source` prefixes the message
// (defaults to "supernet '<name>'").
void validate(const Supernet& net, std::string_view source = {});

std::vector<LayerShape> layer_shapes(const Supernet& net);
// Spatial size after the stem, i.e. the input of choice layer 0.
LayerShape stem_output(const Supernet& net);
// Identity is possible only when stride is 1 and cin == cout.
bool skip_allowed(const Supernet& net, size_t layer);

// Cost model (docs/supernet.md): MACs are multiplies; params are folded weights + biases.
struct OpCost {
  uint64_t macs = 0, params = 0;
  bool operator==(const OpCost&) const = default;
  OpCost& operator+=(const OpCost& o) {
    macs += o.macs;
    params += o.params;
    return *this;
  }
};
OpCost op_cost(const Supernet& net, size_t layer, size_t choice);
OpCost stem_cost(const Supernet& net);
OpCost head_cost(const Supernet& net);

// Product of the K_i, as double because real spaces overflow 64 bits.
double search_space_size(const Supernet& net);

// One choice index per layer; text form "2-0-1-3", JSON form [2, 0, 1, 3].
using Candidate = std::vector<int>;

// Throws SpecError naming the position and the allowed range (or the forbidden skip).
void validate_candidate(const Supernet& net, const Candidate& c);
Candidate parse_candidate(std::string_view text, const Supernet& net);
std::string format_candidate(const Candidate& c);
Candidate candidate_from_json(const nlohmann::json& j, const Supernet& net);
nlohmann::json candidate_to_json(const Candidate& c);

OpCost candidate_cost(const Supernet& net, const Candidate& c);  // stem + chosen ops + head
uint64_t candidate_macs(const Supernet& net, const Candidate& c);
uint64_t candidate_params(const Supernet& net, const Candidate& c);

// JSON I/O. `source_name` (usually the file name) prefixes every error message.
Supernet parse_supernet(const nlohmann::json& j, std::string_view source_name);
// The text of a supernet file (what load_supernet reads): invalid JSON is a SpecError too.
Supernet parse_supernet_text(std::string_view text, std::string_view source_name);
Supernet load_supernet(const std::filesystem::path& path);
nlohmann::json to_json(const Supernet& net);
void save_supernet(const std::filesystem::path& path, const Supernet& net);

// Built-in search spaces (sw/spec/spaces.cpp). Throws SpecError listing the available names.
// kDefaultSpace is the Fashion-MNIST supernet of the NAS job (`nasa run`, `make run`).
inline constexpr std::string_view kDefaultSpace = "fmnist-mb14";
Supernet builtin_space(std::string_view name);
std::vector<std::string> builtin_space_names();

}  // namespace nasa::spec
