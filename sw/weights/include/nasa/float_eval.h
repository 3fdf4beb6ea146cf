// Float32 evaluator of one candidate of a supernet (plain C++, BatchNorm in inference mode): the
// reference the int8 pipeline is compared with, and the source of activation statistics for
// calibration. Tensors are CHW.
#pragma once

#include <functional>
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

// The network's input for an 8-bit grayscale/RGB image stored HWC: pixel / 255.
Tensor image_from_u8(const uint8_t* pixels, int h, int w, int c);

// Images [from, to) of a grayscale dataset as network inputs (calibration sets).
std::vector<Tensor> dataset_images(const data::Dataset& d, size_t from, size_t to);

}  // namespace nasa::floatnet
