// The float weights of a supernet: the tensor names and shapes a spec implies
// (`layers.<i>.choices.<j>.<param>`, `stem.<param>`, `head.<param>`, PyTorch OIHW layouts,
// BatchNorm tensors separate), checking a safetensors file against them, and sensible random
// weights.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nasa/safetensors.h"
#include "nasa/spec.h"

namespace nasa::weights {

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
};

// Every tensor of the supernet, in a fixed order (stem, layers and choices in order, head).
std::vector<TensorSpec> supernet_tensors(const spec::Supernet& net);

// Throws std::runtime_error naming `source` and the first problem: a missing tensor, a shape
// mismatch ("tensor 'x' has shape [..], expected [..]"), a dtype other than F32, or a tensor the
// spec does not have.
void check_weights(const spec::Supernet& net, const TensorFile& file, std::string_view source);

// Deterministic random weights of a sensible scale: He-normal convolutions, BatchNorm with
// gamma ~ 1, beta ~ 0, running mean ~ 0, running var ~ 1 (small perturbations), FC with bias 0.
TensorFile random_weights(const spec::Supernet& net, uint64_t seed);

// One candidate as a network of its own: the spec with only the chosen op in every layer (named
// "<name>/<arch>") and its weights (tensors of choice c of layer i renamed to choice 0).
// `weights` must match `net` (check_weights). The result is a valid supernet with one candidate,
// 0-0-...-0, which compiles and quantizes for that candidate alone.
struct Subnet {
  spec::Supernet net;
  TensorFile weights;
};
Subnet extract_subnet(const spec::Supernet& net, const TensorFile& weights,
                      const spec::Candidate& candidate);

}  // namespace nasa::weights
