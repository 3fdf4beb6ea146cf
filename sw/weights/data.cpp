// IDX reader: the whole file is read (and gunzipped) into memory, then the header is checked
// against the number of bytes actually present, so truncation is reported precisely.
#include "nasa/data.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace nasa::data {
namespace {

constexpr uint32_t kImageMagic = 0x00000803;
constexpr uint32_t kImageMagic4 = 0x00000804;
constexpr uint32_t kLabelMagic = 0x00000801;

[[noreturn]] void fail(const std::filesystem::path& path, std::string_view what) {
  throw std::runtime_error(fmt::format("{}: {}", path.string(), what));
}

std::vector<uint8_t> gunzip(const std::filesystem::path& path, std::span<const uint8_t> in) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) fail(path, "zlib inflateInit2 failed");
  zs.next_in = const_cast<Bytef*>(in.data());  // zlib's API is not const-correct
  zs.avail_in = static_cast<uInt>(in.size());
  std::vector<uint8_t> out(in.size() * 2 + 4096);
  size_t produced = 0;
  int ret = Z_OK;
  while (true) {
    if (produced == out.size()) {
      // (a few KB of gzip can claim terabytes: stop at a size no dataset here has)
      constexpr size_t kMaxInflated = size_t{4} << 30;
      if (out.size() >= kMaxInflated) {
        inflateEnd(&zs);
        fail(path, fmt::format("gzip data inflates to more than {} bytes (4 GiB): not a dataset "
                               "this tool reads",
                               kMaxInflated));
      }
      out.resize(std::min(out.size() * 2, kMaxInflated));
    }
    zs.next_out = out.data() + produced;
    // (zlib counts in 32 bits)
    zs.avail_out = static_cast<uInt>(std::min<size_t>(out.size() - produced, UINT32_MAX));
    const size_t offered = zs.avail_out;
    ret = inflate(&zs, Z_NO_FLUSH);
    produced += offered - zs.avail_out;
    if (ret == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      inflateReset(&zs);  // concatenated gzip members are one stream (gzip -c a b > c)
      continue;
    }
    if (ret == Z_BUF_ERROR && zs.avail_in == 0) break;  // input ended mid-stream
    if (ret != Z_OK && ret != Z_BUF_ERROR) break;
  }
  std::string msg = zs.msg ? zs.msg : "";
  inflateEnd(&zs);
  if (ret != Z_STREAM_END) {
    fail(path, ret == Z_BUF_ERROR
                   ? "corrupt gzip data: the compressed stream ends early (truncated download?)"
                   : fmt::format("corrupt gzip data: {} (zlib error {})", msg, ret));
  }
  out.resize(produced);
  return out;
}

}  // namespace

std::vector<uint8_t> read_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail(path, "file not found (or not a file)");
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path, "cannot open file for reading");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) fail(path, "read error");
  return bytes;
}

namespace {

// The file's content: `bytes`, or when they are gzip data, what they inflate to (kept in
// `inflated`), so a plain file is never copied.
std::span<const uint8_t> plain(const std::filesystem::path& path, std::span<const uint8_t> bytes,
                               std::vector<uint8_t>& inflated) {
  if (bytes.size() < 2 || bytes[0] != 0x1f || bytes[1] != 0x8b) return bytes;
  inflated = gunzip(path, bytes);
  return inflated;
}

uint32_t be32(std::span<const uint8_t> b, size_t at) {
  return uint32_t{b[at]} << 24 | uint32_t{b[at + 1]} << 16 | uint32_t{b[at + 2]} << 8 |
         uint32_t{b[at + 3]};
}

// Checks the magic and returns the dimensions (the number of them is fixed by the magic).
std::vector<uint32_t> read_header(const std::filesystem::path& path, std::span<const uint8_t> bytes,
                                  uint32_t magic, size_t ndims, std::string_view kind) {
  const size_t header = 4 + 4 * ndims;
  if (bytes.size() < 4) {
    fail(path, fmt::format("truncated IDX header: expected at least {} bytes, found {}", header,
                           bytes.size()));
  }
  if (be32(bytes, 0) != magic) {
    fail(path, fmt::format("wrong magic number 0x{:08x}, expected 0x{:08x} (IDX {} file)",
                           be32(bytes, 0), magic, kind));
  }
  if (bytes.size() < header) {
    fail(path,
         fmt::format("truncated IDX header: expected {} bytes, found {}", header, bytes.size()));
  }
  std::vector<uint32_t> dims;
  for (size_t i = 0; i < ndims; ++i) {
    dims.push_back(be32(bytes, 4 + 4 * i));
    if (dims.back() == 0) fail(path, fmt::format("dimension {} of the {} is zero", i, kind));
  }
  return dims;
}

void check_data_size(const std::filesystem::path& path, size_t found, uint64_t expected,
                     std::string_view what) {
  if (found < expected) {
    fail(path, fmt::format("truncated data: {} need {} bytes after the header, found {}", what,
                           expected, found));
  }
}

}  // namespace

std::span<const uint8_t> Dataset::image(size_t i) const {
  if (i >= size()) {
    throw std::out_of_range(fmt::format("image {} requested from a dataset of {}", i, size()));
  }
  const size_t bytes = size_t{rows} * cols * channels;
  return std::span<const uint8_t>(images).subspan(i * bytes, bytes);
}

std::vector<std::vector<uint8_t>> Dataset::byte_images(size_t from, size_t to) const {
  if (from > to || to > size()) {
    throw std::out_of_range(
        fmt::format("images [{}, {}) requested from a dataset of {}", from, to, size()));
  }
  std::vector<std::vector<uint8_t>> out;
  out.reserve(to - from);
  for (size_t i = from; i < to; ++i) {
    const auto im = image(i);
    out.emplace_back(im.begin(), im.end());
  }
  return out;
}

std::vector<uint8_t> Dataset::label_range(size_t from, size_t to) const {
  if (from > to || to > size()) {
    throw std::out_of_range(
        fmt::format("labels [{}, {}) requested from a dataset of {}", from, to, size()));
  }
  return {labels.begin() + static_cast<std::ptrdiff_t>(from),
          labels.begin() + static_cast<std::ptrdiff_t>(to)};
}

void Dataset::keep_first(size_t n) {
  if (n >= size()) return;
  labels.resize(n);
  images.resize(n * rows * cols * channels);
}

Dataset load_idx(const std::filesystem::path& images, const std::filesystem::path& labels,
                 size_t limit) {
  const std::vector<uint8_t> image_file = read_file(images);
  return parse_idx(image_file, read_file(labels), limit, images, labels);
}

Dataset parse_idx(std::span<const uint8_t> image_file, std::span<const uint8_t> label_file,
                  size_t limit, const std::filesystem::path& images,
                  const std::filesystem::path& labels) {
  std::vector<uint8_t> inflated_images, inflated_labels;
  const std::span<const uint8_t> ib = plain(images, image_file, inflated_images);
  // n x rows x cols, or n x rows x cols x channels (magic 0x804)
  const bool with_channels = ib.size() >= 4 && be32(ib, 0) == kImageMagic4;
  std::vector<uint32_t> idims = with_channels ? read_header(images, ib, kImageMagic4, 4, "images")
                                              : read_header(images, ib, kImageMagic, 3, "images");
  if (!with_channels) idims.push_back(1);
  const size_t header = with_channels ? 20 : 16;
  const uint64_t pixels = uint64_t{idims[1]} * idims[2] * idims[3];
  if (pixels > UINT32_MAX) {
    fail(images,
         fmt::format("images of {}x{}x{} values are too large", idims[1], idims[2], idims[3]));
  }
  check_data_size(images, ib.size() - header, idims[0] * pixels,
                  fmt::format("{} images of {}x{}x{}", idims[0], idims[1], idims[2], idims[3]));

  const std::span<const uint8_t> lb = plain(labels, label_file, inflated_labels);
  const uint32_t n = read_header(labels, lb, kLabelMagic, 1, "labels")[0];
  check_data_size(labels, lb.size() - 8, n, fmt::format("{} labels", n));
  if (n != idims[0]) {
    fail(labels, fmt::format("holds {} labels but {} holds {} images; expected equal counts", n,
                             images.string(), idims[0]));
  }

  const size_t keep = limit == 0 ? n : std::min<size_t>(limit, n);
  Dataset d;
  d.rows = idims[1];
  d.cols = idims[2];
  d.channels = idims[3];
  const auto h = static_cast<ptrdiff_t>(header);
  d.images.assign(ib.begin() + h, ib.begin() + h + static_cast<ptrdiff_t>(keep * pixels));
  d.labels.assign(lb.begin() + 8, lb.begin() + 8 + static_cast<ptrdiff_t>(keep));
  return d;
}

std::filesystem::path default_fashion_mnist_dir() {
  if (const char* env = std::getenv("NASA_FASHION_MNIST_DIR"); env && *env) return env;
  return "/usr/share/datasets/fashion-mnist";
}

Dataset load_fashion_mnist(std::string_view split, size_t limit, const std::filesystem::path& dir) {
  std::string prefix;
  if (split == "train") {
    prefix = "train";
  } else if (split == "test") {
    prefix = "t10k";
  } else {
    throw std::runtime_error(
        fmt::format("unknown Fashion-MNIST split '{}', expected 'train' or 'test'", split));
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw std::runtime_error(fmt::format(
        "Fashion-MNIST directory {} not found: install the Debian package dataset-fashion-mnist "
        "(`make deps`) or set NASA_FASHION_MNIST_DIR",
        dir.string()));
  }
  return load_idx(dir / (prefix + "-images-idx3-ubyte.gz"),
                  dir / (prefix + "-labels-idx1-ubyte.gz"), limit);
}

}  // namespace nasa::data
