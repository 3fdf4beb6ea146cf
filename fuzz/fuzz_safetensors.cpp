// Weight files (weights.safetensors of a supernet directory; any safetensors a user hands
// `nasa`): bytes -> parse_safetensors. Bad input must be a std::runtime_error naming the file; a
// file that parses must hold tensors whose bytes match dtype and shape exactly.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>

#include "fuzz_common.h"
#include "nasa/safetensors.h"

namespace w = nasa::weights;
using nasa::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<w::TensorFile> file;
  if (!nasa::fuzz::accepts<std::runtime_error>("fuzz.safetensors", [&] {
        file = w::parse_safetensors({data, size}, "fuzz.safetensors");
      })) {
    return 0;
  }
  size_t total = 0;
  for (const auto& [name, t] : file->tensors) {
    check(!name.empty() && name != "__metadata__", "reserved tensor name accepted");
    const size_t bytes = t.numel() * w::dtype_size(t.dtype);  // neither may throw now
    check(t.data.size() == bytes, "tensor bytes do not match dtype and shape");
    if (t.dtype == "F32") check(t.f32().size() == t.numel(), "f32() size");
    check(&file->at(name) == &t, "at() finds another tensor");
    total += t.data.size();
  }
  check(total <= size, "tensors hold more bytes than the file");  // they may not overlap
  return 0;
}
