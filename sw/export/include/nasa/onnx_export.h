// `nasa export`: one candidate of a trained supernet (or a finished run's final/model) as an ONNX
// model, written with the ONNX project's own protobuf definitions (libonnx) and checked with its
// checker. The float network has its BatchNorm folded; the int8 network is a QDQ model
// (QuantizeLinear/DequantizeLinear around float ops) carrying exactly the scales, weight codes
// and bias codes the accelerator runs with. docs/export.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "nasa/compiler.h"
#include "nasa/safetensors.h"
#include "nasa/spec.h"

namespace nasa::onnx {

// The graph's input is named "input": float32 [N, C, H, W], pixel / 255 (the normalization the
// weights were trained with is the graph's first two nodes); its output "logits" [N, classes].
inline constexpr const char* kInputName = "input";
inline constexpr const char* kOutputName = "logits";
// The int8 network's second output: the logits' int8 codes (logits = codes x the logit scale),
// what the accelerator computes for the same images.
inline constexpr const char* kInt8OutputName = "logits_int8";
inline constexpr int kOpset = 13;  // per-axis QuantizeLinear/DequantizeLinear

struct ExportOptions {
  // The int8 network of this quantized supernet (quantized from the same weights) as a QDQ model;
  // null: the float network.
  const compile::QSupernet* int8 = nullptr;
  // Extra metadata_props (the exporter adds nasa.spec, nasa.arch, nasa.input_normalization,
  // nasa.quantization and nasa.input).
  std::map<std::string, std::string> metadata;
};

// The serialized ModelProto of `candidate` of `net`. Throws std::invalid_argument for a candidate
// that does not fit the spec, std::runtime_error naming the tensor for missing or mis-shaped
// weights, and std::logic_error if the ONNX checker rejects the model (a bug here).
std::string export_model(const spec::Supernet& net, const weights::TensorFile& weights,
                         const spec::Candidate& candidate, const ExportOptions& options = {});

// export_model written to `path` crash-safe (a failure leaves no partial file).
void write_model(const std::filesystem::path& path, const std::string& bytes);

}  // namespace nasa::onnx
