// Model weights in the safetensors format of the PyTorch ecosystem (8-byte little-endian header
// length, JSON header, raw little-endian tensor bytes): read with full validation, written
// atomically.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nasa::weights {

// Bytes per element of a safetensors dtype ("F32", "BF16", "I8", ...); throws
// std::invalid_argument listing the known dtypes for anything else.
size_t dtype_size(std::string_view dtype);

struct Tensor {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // little-endian, numel() * dtype_size(dtype) bytes

  size_t numel() const;  // 1 for a scalar (empty shape)
  // The data as floats; throws std::invalid_argument unless dtype is F32.
  std::span<const float> f32() const;
};

class TensorFile {
 public:
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;  // the optional "__metadata__" object

  // Throws std::out_of_range naming the missing tensor and a few of the available ones.
  const Tensor& at(const std::string& name) const;
  // Adds an F32 tensor; throws std::invalid_argument if the name is taken or reserved or
  // values.size() does not match the shape.
  void add_f32(std::string name, std::vector<int64_t> shape, std::span<const float> values);
};

// Throws std::runtime_error naming the file (and the tensor) on any malformed content.
TensorFile read_safetensors(const std::filesystem::path& path);
// The same from the bytes of a file; `source` names it in the messages.
TensorFile parse_safetensors(std::span<const uint8_t> bytes, const std::filesystem::path& source);

// Names sorted, header padded with spaces to a multiple of 8, tensors contiguous in name order.
// Written crash-safe (nasa/files.h: temporary, fsync, rename), so a failure or a kill never
// leaves a partial file behind nor touches an existing one.
void write_safetensors(const std::filesystem::path& path, const TensorFile& file);

// Throws std::runtime_error "tensor 'name' has shape [8,3,3,3], expected [16,3,3,3]".
void check_shape(const Tensor& t, std::span<const int64_t> expected, std::string_view name);

}  // namespace nasa::weights
