// safetensors reader/writer. The reader trusts nothing in the header: every entry is checked
// against the bytes actually present before any tensor is copied out.
#include "nasa/safetensors.h"

#include "nasa/files.h"
#include "nasa/json_preview.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

namespace nasa::weights {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian and is used in place");

namespace fs = std::filesystem;
using nlohmann::json;

constexpr uint64_t kMaxHeaderBytes = 100'000'000;

[[noreturn]] void fail(const fs::path& path, std::string_view what) {
  throw std::runtime_error(fmt::format("{}: {}", path.string(), what));
}

[[noreturn]] void fail(const fs::path& path, std::string_view tensor, std::string_view what) {
  throw std::runtime_error(fmt::format("{}: tensor '{}': {}", path.string(), tensor, what));
}

// Multiplication that reports overflow instead of wrapping (sizes come from untrusted files).
bool mul_overflows(uint64_t a, uint64_t b, uint64_t& out) {
  return __builtin_mul_overflow(a, b, &out);
}

// "an array", "a number", ... for messages about unexpected JSON values.
std::string a_type(const json& v) {
  const std::string t = v.type_name();
  return (v.is_array() || v.is_object() ? "an " : "a ") + t;
}

std::string shape_str(std::span<const int64_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

// numel() * dtype_size() in bytes; throws std::invalid_argument on an unknown dtype, negative
// dims or overflow, which callers turn into a message naming the file and tensor.
uint64_t byte_size(const Tensor& t) {
  uint64_t bytes = dtype_size(t.dtype);
  for (int64_t d : t.shape) {
    if (d < 0)
      throw std::invalid_argument(fmt::format("negative dimension in {}", shape_str(t.shape)));
    if (mul_overflows(bytes, static_cast<uint64_t>(d), bytes)) {
      throw std::invalid_argument(fmt::format("shape {} is too large", shape_str(t.shape)));
    }
  }
  return bytes;
}

uint64_t json_u64(const fs::path& path, const std::string& tensor, const json& v,
                  std::string_view field) {
  if (!v.is_number_integer()) {
    fail(path, tensor,
         fmt::format("\"{}\" holds {} ({}), expected a non-negative integer", field,
                     json_preview(v), a_type(v)));
  }
  if (!v.is_number_unsigned() && v.get<int64_t>() < 0) {
    fail(path, tensor,
         fmt::format("\"{}\" holds {}, expected a non-negative integer", field, json_preview(v)));
  }
  return v.get<uint64_t>();
}

const json& field(const fs::path& path, const std::string& tensor, const json& entry,
                  const char* name, json::value_t type, std::string_view expected) {
  const auto it = entry.find(name);
  if (it == entry.end()) fail(path, tensor, fmt::format("missing \"{}\"", name));
  if (it->type() != type) {
    fail(path, tensor, fmt::format("\"{}\" is {}, expected {}", name, a_type(*it), expected));
  }
  return *it;
}

std::vector<uint8_t> read_all(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) fail(path, "file not found (or not a file)");
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path, "cannot open file for reading");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) fail(path, "read error");
  return bytes;
}

}  // namespace

size_t dtype_size(std::string_view dtype) {
  static constexpr std::pair<std::string_view, size_t> kSizes[] = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1},
      {"U16", 2},  {"I16", 2}, {"F16", 2}, {"BF16", 2},    {"U32", 4},
      {"I32", 4},  {"F32", 4}, {"U64", 8}, {"I64", 8},     {"F64", 8}};
  for (const auto& [name, size] : kSizes) {
    if (name == dtype) return size;
  }
  std::vector<std::string_view> known;
  for (const auto& entry : kSizes) known.push_back(entry.first);
  throw std::invalid_argument(
      fmt::format("unknown dtype '{}', expected one of {}", dtype, fmt::join(known, ", ")));
}

size_t Tensor::numel() const {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || mul_overflows(n, static_cast<uint64_t>(d), n)) {
      throw std::invalid_argument(fmt::format("invalid shape {}", shape_str(shape)));
    }
  }
  return n;
}

std::span<const float> Tensor::f32() const {
  if (dtype != "F32") {
    throw std::invalid_argument(fmt::format("tensor has dtype {}, expected F32", dtype));
  }
  if (data.size() != numel() * sizeof(float)) {
    throw std::invalid_argument(fmt::format("tensor of shape {} holds {} bytes, expected {}",
                                            shape_str(shape), data.size(),
                                            numel() * sizeof(float)));
  }
  // vector storage comes from operator new, aligned for any scalar type.
  return {reinterpret_cast<const float*>(data.data()), numel()};
}

const Tensor& TensorFile::at(const std::string& name) const {
  if (const auto it = tensors.find(name); it != tensors.end()) return it->second;
  std::vector<std::string> some;
  for (const auto& [n, t] : tensors) {
    if (some.size() == 5) break;
    some.push_back("'" + n + "'");
  }
  throw std::out_of_range(fmt::format("no tensor named '{}'; the file has {} tensors{}{}", name,
                                      tensors.size(), some.empty() ? "" : ", e.g. ",
                                      fmt::join(some, ", ")));
}

void TensorFile::add_f32(std::string name, std::vector<int64_t> shape,
                         std::span<const float> values) {
  if (name.empty() || name == "__metadata__") {
    throw std::invalid_argument(fmt::format("invalid tensor name '{}'", name));
  }
  if (tensors.contains(name)) {
    throw std::invalid_argument(fmt::format("tensor '{}' already exists", name));
  }
  Tensor t{"F32", std::move(shape), {}};
  if (t.numel() != values.size()) {
    throw std::invalid_argument(fmt::format("tensor '{}': shape {} needs {} values, got {}", name,
                                            shape_str(t.shape), t.numel(), values.size()));
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
  t.data.assign(bytes, bytes + values.size_bytes());
  tensors.emplace(std::move(name), std::move(t));
}

TensorFile read_safetensors(const fs::path& path) {
  return parse_safetensors(read_all(path), path);
}

TensorFile parse_safetensors(std::span<const uint8_t> bytes, const fs::path& path) {
  if (bytes.size() < 8) {
    fail(path, fmt::format("file is {} bytes, shorter than the 8-byte header length "
                           "(truncated, or not a safetensors file)",
                           bytes.size()));
  }
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | bytes[i];
  if (header_len > kMaxHeaderBytes) {
    fail(path, fmt::format("header length {} exceeds the {}-byte limit (not a safetensors file?)",
                           header_len, kMaxHeaderBytes));
  }
  if (header_len > bytes.size() - 8) {
    fail(path, fmt::format("header length {} exceeds the {} bytes after the length field "
                           "(file truncated?)",
                           header_len, bytes.size() - 8));
  }
  const auto header_begin = bytes.begin() + 8;
  const auto data_begin = header_begin + static_cast<ptrdiff_t>(header_len);
  const uint64_t data_size = bytes.size() - 8 - header_len;

  json header;
  try {
    header = json::parse(header_begin, data_begin);
  } catch (const json::exception& e) {
    fail(path, fmt::format("header is not valid JSON: {}", e.what()));
  }
  if (!header.is_object()) {
    fail(path, fmt::format("header is {}, expected an object of tensor entries", a_type(header)));
  }

  TensorFile file;
  struct Span {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Span> spans;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) {
        fail(path,
             fmt::format("\"__metadata__\" is {}, expected an object of strings", a_type(entry)));
      }
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string()) {
          fail(path,
               fmt::format("\"__metadata__\" entry '{}' is {}, expected a string", k, a_type(v)));
        }
        file.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object()) {
      fail(path, name,
           fmt::format("entry is {}, expected an object with dtype, shape and data_offsets",
                       a_type(entry)));
    }
    Tensor t;
    t.dtype =
        field(path, name, entry, "dtype", json::value_t::string, "a string").get<std::string>();
    for (const json& d : field(path, name, entry, "shape", json::value_t::array, "an array")) {
      const uint64_t dim = json_u64(path, name, d, "shape");
      if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        fail(path, name, fmt::format("dimension {} is too large", dim));
      }
      t.shape.push_back(static_cast<int64_t>(dim));
    }
    const json& offs =
        field(path, name, entry, "data_offsets", json::value_t::array, "an array [begin, end]");
    if (offs.size() != 2) {
      fail(path, name,
           fmt::format("\"data_offsets\" is {}, expected [begin, end]", json_preview(offs, 60)));
    }
    const uint64_t begin = json_u64(path, name, offs[0], "data_offsets");
    const uint64_t end = json_u64(path, name, offs[1], "data_offsets");
    if (end < begin)
      fail(path, name, fmt::format("data_offsets [{},{}] end before begin", begin, end));
    if (end > data_size) {
      fail(path, name,
           fmt::format("data_offsets [{},{}] reach beyond the {}-byte data section (truncated?)",
                       begin, end, data_size));
    }
    uint64_t need = 0;
    try {
      need = byte_size(t);
    } catch (const std::invalid_argument& e) {
      fail(path, name, e.what());
    }
    if (end - begin != need) {
      fail(path, name,
           fmt::format("data_offsets [{},{}] hold {} bytes, but dtype {} and shape {} need {}",
                       begin, end, end - begin, t.dtype, shape_str(t.shape), need));
    }
    t.data.assign(data_begin + static_cast<ptrdiff_t>(begin),
                  data_begin + static_cast<ptrdiff_t>(end));
    spans.push_back({begin, end, name});
    file.tensors.emplace(name, std::move(t));
  }

  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  for (size_t i = 1; i < spans.size(); ++i) {
    const Span &a = spans[i - 1], &b = spans[i];
    if (b.begin < a.end) {
      fail(path, fmt::format("tensors '{}' [{},{}] and '{}' [{},{}] overlap", a.name, a.begin,
                             a.end, b.name, b.begin, b.end));
    }
  }
  return file;
}

void write_safetensors(const fs::path& path, const TensorFile& file) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : file.tensors) {
    if (name.empty() || name == "__metadata__") fail(path, name, "invalid tensor name");
    uint64_t need = 0;
    try {
      need = byte_size(t);
    } catch (const std::invalid_argument& e) {
      fail(path, name, e.what());
    }
    if (t.data.size() != need) {
      fail(path, name,
           fmt::format("holds {} bytes, but dtype {} and shape {} need {}", t.data.size(), t.dtype,
                       shape_str(t.shape), need));
    }
    auto& entry = header[name];
    entry["dtype"] = t.dtype;
    entry["shape"] = t.shape;
    entry["data_offsets"] = {offset, offset + need};
    offset += need;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::ordered_json::exception& e) {
    fail(path, fmt::format("cannot encode the header: {}", e.what()));
  }
  text.append((8 - text.size() % 8) % 8, ' ');

  write_atomic(path, [&](const fs::path& tmp) {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(tmp, "cannot create file (does the directory exist and is it writable?)");
    char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<char>(uint64_t{text.size()} >> (8 * i));
    out.write(len, 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& [name, t] : file.tensors) {
      out.write(reinterpret_cast<const char*>(t.data.data()),
                static_cast<std::streamsize>(t.data.size()));
    }
    out.close();
    if (!out) fail(tmp, "write failed (disk full?)");
  });
}

void check_shape(const Tensor& t, std::span<const int64_t> expected, std::string_view name) {
  if (!std::equal(t.shape.begin(), t.shape.end(), expected.begin(), expected.end())) {
    throw std::runtime_error(fmt::format("tensor '{}' has shape {}, expected {}", name,
                                         shape_str(t.shape), shape_str(expected)));
  }
}

}  // namespace nasa::weights
