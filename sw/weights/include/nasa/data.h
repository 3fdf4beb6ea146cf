// Image-classification datasets in the IDX format of MNIST / Fashion-MNIST (plain or gzipped):
// the real inputs fed to the search and to the accelerator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

namespace nasa::data {

// n images of rows x cols 8-bit pixels, one label per image.
struct Dataset {
  uint32_t rows = 0, cols = 0;
  std::vector<uint8_t> images;  // size() * rows * cols bytes, image-major then row-major
  std::vector<uint8_t> labels;

  size_t size() const { return labels.size(); }
  // Throws std::out_of_range when i >= size().
  std::span<const uint8_t> image(size_t i) const;
  // Images [from, to) as one byte vector each (HWC, what the runtime evaluates). Throws
  // std::out_of_range when the range exceeds the dataset.
  std::vector<std::vector<uint8_t>> byte_images(size_t from, size_t to) const;
  // Labels [from, to).
  std::vector<uint8_t> label_range(size_t from, size_t to) const;
};

// Reads an IDX3 ubyte image file (magic 0x00000803) and an IDX1 ubyte label file (0x00000801);
// either may be gzipped. Keeps only the first `limit` items unless limit is 0. Throws
// std::runtime_error naming the file on a missing file, wrong magic, zero dimensions, truncated
// data, corrupt gzip data or an image/label count mismatch.
Dataset load_idx(const std::filesystem::path& images, const std::filesystem::path& labels,
                 size_t limit = 0);
// The same from the bytes of the two files; `images` and `labels` name them in the messages.
Dataset parse_idx(std::span<const uint8_t> image_file, std::span<const uint8_t> label_file,
                  size_t limit = 0, const std::filesystem::path& images = "images",
                  const std::filesystem::path& labels = "labels");

// $NASA_FASHION_MNIST_DIR if set, else where the Debian package dataset-fashion-mnist installs.
std::filesystem::path default_fashion_mnist_dir();

// split is "train" (60000 items) or "test" (10000 items).
Dataset load_fashion_mnist(std::string_view split, size_t limit = 0,
                           const std::filesystem::path& dir = default_fashion_mnist_dir());

}  // namespace nasa::data
