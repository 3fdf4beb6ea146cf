// Image-classification datasets: the IDX format of MNIST / Fashion-MNIST (plain or gzipped, one
// channel or several), the CIFAR-10/100 binary format and image folders (PNG/JPEG, a subfolder
// per class): the real inputs fed to the search and to the accelerator (docs/data.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nasa::data {

// n images of rows x cols x channels 8-bit values, one label per image.
struct Dataset {
  uint32_t rows = 0, cols = 0, channels = 1;
  std::vector<uint8_t> images;  // size() * rows * cols * channels bytes, image-major, then HWC
  std::vector<uint8_t> labels;

  size_t size() const { return labels.size(); }
  // Throws std::out_of_range when i >= size().
  std::span<const uint8_t> image(size_t i) const;
  // Images [from, to) as one byte vector each (HWC, what the runtime evaluates). Throws
  // std::out_of_range when the range exceeds the dataset.
  std::vector<std::vector<uint8_t>> byte_images(size_t from, size_t to) const;
  // Labels [from, to).
  std::vector<uint8_t> label_range(size_t from, size_t to) const;
  // Keeps the first n images (all when there are fewer).
  void keep_first(size_t n);
};

// Reads an IDX ubyte image file (magic 0x00000803: n x rows x cols, or 0x00000804:
// n x rows x cols x channels) and an IDX1 ubyte label file (0x00000801);
// either may be gzipped. Keeps only the first `limit` items unless limit is 0. Throws
// std::runtime_error naming the file on a missing file, wrong magic, zero dimensions, truncated
// data, corrupt gzip data or an image/label count mismatch.
Dataset load_idx(const std::filesystem::path& images, const std::filesystem::path& labels,
                 size_t limit = 0);
// The same from the bytes of the two files; `images` and `labels` name them in the messages.
Dataset parse_idx(std::span<const uint8_t> image_file, std::span<const uint8_t> label_file,
                  size_t limit = 0, const std::filesystem::path& images = "images",
                  const std::filesystem::path& labels = "labels");

// The bytes of a file; throws std::runtime_error naming it when it is missing or unreadable.
std::vector<uint8_t> read_file(const std::filesystem::path& path);

// $NASA_FASHION_MNIST_DIR if set, else where the Debian package dataset-fashion-mnist installs.
std::filesystem::path default_fashion_mnist_dir();

// split is "train" (60000 items) or "test" (10000 items).
Dataset load_fashion_mnist(std::string_view split, size_t limit = 0,
                           const std::filesystem::path& dir = default_fashion_mnist_dir());

// A dataset as `--data` names it (docs/data.md): a directory in one of the formats below, read
// into its training split and its test split (empty when the format has none).
//   idx       train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz] and the same with t10k-
//             (MNIST's names; the image files may hold n x h x w or n x h x w x c values)
//   cifar10   data_batch_1.bin ... data_batch_N.bin and test_batch.bin (records of a label byte and
//             3 x 32 x 32 channel-major bytes); class names from batches.meta.txt when present
//   cifar100  train.bin and test.bin (records of a coarse and a fine label byte, then the image;
//             the fine label is the class); class names from fine_label_names.txt when present
//   folder    one subfolder per class of PNG/JPEG files (sorted names are the classes), or train/
//             and test/ each holding such subfolders; every image of one size and channel count
//             (gray: 1, color: 3; alpha is composited on black)
struct Data {
  std::string format;  // idx, cifar10, cifar100 or folder
  Dataset train, test;
  std::vector<std::string> class_names;  // empty: the classes are 0..n-1
};
// Called while a folder loads: images decoded so far, images in all.
using LoadProgress = std::function<void(size_t done, size_t total)>;
// Throws std::runtime_error naming the file (and record or image) on anything malformed: unknown
// layout, truncated CIFAR batch, unreadable or undecodable image, an image of another size or
// channel count than the rest, an empty class folder, a label past the format's classes.
Data load_data(const std::filesystem::path& dir, const LoadProgress& progress = {});

// The data of a job (train, search, run): its training set with the validation split as the last
// `val` images, and its test set. Without a directory: Fashion-MNIST, its 60,000 training images
// with the last 10,000 as the validation split (the default job) and its 10,000 test images.
// With one (`--data DIR`): its training split with `val_split` of its images (a count, or a
// fraction in (0, 1); empty: 0.1) chosen by a shuffle seeded with `seed` and moved, in their
// order, to the end; the others keep theirs. Throws std::runtime_error on a bad split ("--val-split
// 70000: the training split holds 60000 images") and on what load_data throws.
struct JobData {
  std::string source;  // "fashion-mnist" or the directory
  std::string format;  // idx, cifar10, cifar100, folder
  Dataset train;       // training images, then the validation split
  size_t val = 0;      // the validation split: the last `val` images of `train`
  Dataset test;
  std::vector<std::string> class_names;
  size_t train_only() const { return train.size() - val; }
};
JobData job_data(const std::filesystem::path& dir, std::string_view val_split, uint64_t seed,
                 const LoadProgress& progress = {});

// Throws std::runtime_error ("spec 'x' expects 28x28x1, the data is 32x32x3" or a label past the
// spec's classes) when `d` does not fit a network with that input and class count; `what` names
// the data in the message.
void check_fits(const Dataset& d, std::string_view spec_name, int in_h, int in_w, int in_c,
                int classes, std::string_view what);

}  // namespace nasa::data
