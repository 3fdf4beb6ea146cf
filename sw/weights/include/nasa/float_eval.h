// Float32 evaluator of one candidate of a supernet (plain C++, BatchNorm in inference mode): the
// reference the int8 pipeline is compared with, and the source of activation statistics for
// calibration. Tensors are CHW.
#pragma once

#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "nasa/data.h"
#include "nasa/safetensors.h"
#include "nasa/spec.h"

namespace nasa::floatnet {

struct Tensor {
  int c = 0, h = 0, w = 0;
  std::vector<float> v;  // c*h*w, CHW
  float& at(int ci, int y, int x) { return v[(static_cast<size_t>(ci) * h + y) * w + x]; }
  float at(int ci, int y, int x) const { return v[(static_cast<size_t>(ci) * h + y) * w + x]; }
};

// Called with every activation the network produces, named like the weights that produced it
// ("stem", "layers.2.choices.1.expand", "layers.2.choices.1.dw", "layers.2.choices.1.project",
// "layers.2.out", "head.conv", "head.gap", "logits").
using Observer = std::function<void(std::string_view name, const Tensor& t)>;

// Logits (classes) of `candidate` on one image (in_c x in_h x in_w, already scaled as the
// network expects). Throws if a weight is missing or mis-shaped (run check_weights first for a
// complete report).
std::vector<float> forward(const spec::Supernet& net, const weights::TensorFile& weights,
                           const spec::Candidate& candidate, const Tensor& image,
                           const Observer& observe = {});

// The per-channel input normalization a network was trained with (docs/data.md
// "Normalization"): its input is (pixel / 255 - mean[c]) / std[c]. Empty: none (pixel / 255),
// what weights written before normalization existed (and random weights) expect.
struct Normalization {
  std::vector<float> mean, std;
  bool empty() const { return mean.empty(); }
  // The network input of one 8-bit pixel value of channel c.
  float apply(uint8_t pixel, int c) const {
    const float x = static_cast<float>(pixel) / 255.0f;
    return empty() ? x : (x - mean[static_cast<size_t>(c)]) / std[static_cast<size_t>(c)];
  }
  // The largest |input| any pixel value can give (1 without normalization).
  float max_abs() const;
  bool operator==(const Normalization&) const = default;
};

// Mean and standard deviation of each channel of pixel / 255 over images [from, to) of `d`
// (a training split); a channel without variation (a spread under one pixel level, 1/255) gets
// std 1. Throws on an empty range.
Normalization channel_normalization(const data::Dataset& d, size_t from, size_t to);

// Where the normalization is recorded with the model: this key of weights.safetensors'
// metadata, a JSON object {"mean": [...], "std": [...]}.
inline constexpr const char* kNormalizationKey = "input_normalization";
void write_normalization(weights::TensorFile& wf, const Normalization& n);
// That object (null when `n` is empty): the record, result.json's and `nasa export`'s.
nlohmann::json normalization_json(const Normalization& n);
// The recorded normalization (empty if there is none); throws std::runtime_error naming
// `source` when it is malformed or does not have `channels` entries of finite values, std >= 1e-6.
Normalization read_normalization(const weights::TensorFile& wf, int channels,
                                 std::string_view source);

// The network's input for an 8-bit grayscale/RGB image stored HWC: pixel / 255, normalized.
Tensor image_from_u8(const uint8_t* pixels, int h, int w, int c, const Normalization& n = {});

// Images [from, to) of a dataset as network inputs (calibration sets).
std::vector<Tensor> dataset_images(const data::Dataset& d, size_t from, size_t to,
                                   const Normalization& n = {});

}  // namespace nasa::floatnet
