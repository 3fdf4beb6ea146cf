// Unit tests of the dataset loaders: the IDX loader on tiny plain and gzipped files written to a
// temp dir, one test per error, and the installed Fashion-MNIST test split when it is present;
// `--data` directories (CIFAR, IDX with channels, image folders) below.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <jpeglib.h>
#include <png.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "nasa/data.h"

#include "temp_dir_test.h"

namespace nasa::data {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using Bytes = std::vector<uint8_t>;

void put32(Bytes& b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(v >> s));
}

// n images where pixel p of image i is i * 16 + p, and label i is i % 10.
Bytes images_idx(uint32_t n, uint32_t rows, uint32_t cols) {
  Bytes b;
  put32(b, 0x803);
  put32(b, n);
  put32(b, rows);
  put32(b, cols);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t p = 0; p < rows * cols; ++p) b.push_back(static_cast<uint8_t>(i * 16 + p));
  return b;
}

Bytes labels_idx(uint32_t n) {
  Bytes b;
  put32(b, 0x801);
  put32(b, n);
  for (uint32_t i = 0; i < n; ++i) b.push_back(static_cast<uint8_t>(i % 10));
  return b;
}

Bytes gzip(const Bytes& in) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  Bytes out(deflateBound(&zs, in.size()) + 64);
  zs.next_in = const_cast<Bytef*>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

class DataTest : public nasa::testing::TempDirTest {
 protected:
  DataTest() : TempDirTest("nasa_unit_data_") {}

  fs::path write(const std::string& name, const Bytes& b) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    return p;
  }

  // Expects load_idx to throw with a message naming `bad` and containing every piece of `what`.
  template <typename... M>
  void expect_error(const fs::path& images, const fs::path& labels, const fs::path& bad,
                    M... what) {
    try {
      load_idx(images, labels);
      FAIL() << "expected an exception mentioning " << bad;
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr(bad.string()), HasSubstr(what)...));
    }
  }
};

TEST_F(DataTest, LoadsPlainFiles) {
  const Dataset d = load_idx(write("i", images_idx(3, 2, 4)), write("l", labels_idx(3)));
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d.rows, 2u);
  EXPECT_EQ(d.cols, 4u);
  ASSERT_EQ(d.images.size(), 24u);
  EXPECT_EQ(d.labels, (Bytes{0, 1, 2}));
  const auto img = d.image(2);
  ASSERT_EQ(img.size(), 8u);
  for (size_t p = 0; p < 8; ++p) EXPECT_EQ(img[p], 32 + p);
  EXPECT_THROW(d.image(3), std::out_of_range);
}

TEST_F(DataTest, LoadsGzippedFilesAndMixed) {
  const Dataset d = load_idx(write("i.gz", gzip(images_idx(12, 3, 3))), write("l", labels_idx(12)));
  ASSERT_EQ(d.size(), 12u);
  EXPECT_EQ(d.labels[11], 1);
  EXPECT_EQ(d.image(5)[4], 5 * 16 + 4);
  const Dataset g =
      load_idx(write("i2.gz", gzip(images_idx(12, 3, 3))), write("l.gz", gzip(labels_idx(12))));
  EXPECT_EQ(g.images, d.images);
  EXPECT_EQ(g.labels, d.labels);
}

TEST_F(DataTest, LimitKeepsFirstItems) {
  const fs::path i = write("i", images_idx(5, 2, 2)), l = write("l", labels_idx(5));
  const Dataset d = load_idx(i, l, 2);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d.images.size(), 8u);
  EXPECT_EQ(d.image(1)[0], 16);
  EXPECT_EQ(load_idx(i, l, 100).size(), 5u);  // a limit above n keeps everything
  EXPECT_EQ(load_idx(i, l, 0).size(), 5u);
}

TEST_F(DataTest, LabelsAboveNineAreKept) {
  Bytes l = labels_idx(2);
  l[9] = 200;
  EXPECT_EQ(load_idx(write("i", images_idx(2, 1, 1)), write("l", l)).labels[1], 200);
}

TEST_F(DataTest, MissingFile) {
  const fs::path l = write("l", labels_idx(1));
  expect_error(dir_ / "nope", l, dir_ / "nope", "not found");
  expect_error(write("i", images_idx(1, 1, 1)), dir_ / "nol", dir_ / "nol", "not found");
}

TEST_F(DataTest, WrongMagic) {
  const fs::path i = write("i", images_idx(1, 1, 1)), l = write("l", labels_idx(1));
  expect_error(l, l, l, "wrong magic", "0x00000801", "expected 0x00000803");
  expect_error(i, i, i, "wrong magic", "0x00000803", "expected 0x00000801");
}

TEST_F(DataTest, TruncatedHeader) {
  Bytes i = images_idx(1, 2, 2);
  i.resize(10);
  const fs::path ip = write("i", i);
  expect_error(ip, write("l", labels_idx(1)), ip, "truncated IDX header", "expected 16 bytes",
               "found 10");
  const fs::path tiny = write("tiny", Bytes{0, 0});
  expect_error(tiny, tiny, tiny, "truncated IDX header", "found 2");
}

TEST_F(DataTest, TruncatedData) {
  Bytes i = images_idx(3, 2, 2);
  i.pop_back();
  const fs::path ip = write("i", i);
  expect_error(ip, write("l", labels_idx(3)), ip, "truncated data", "need 12 bytes", "found 11");
  Bytes l = labels_idx(3);
  l.pop_back();
  const fs::path lp = write("l2", l);
  expect_error(write("i2", images_idx(3, 2, 2)), lp, lp, "truncated data", "need 3 bytes",
               "found 2");
}

TEST_F(DataTest, CountMismatch) {
  const fs::path i = write("i", images_idx(3, 2, 2)), l = write("l", labels_idx(4));
  expect_error(i, l, l, "4 labels", "3 images", i.string());
}

TEST_F(DataTest, ZeroDims) {
  const fs::path l = write("l", labels_idx(2));
  const fs::path i = write("i", images_idx(2, 0, 3));
  expect_error(i, l, i, "dimension 1", "is zero");
  const fs::path l0 = write("l0", labels_idx(0));
  const fs::path i0 = write("i0", images_idx(0, 2, 2));
  expect_error(i0, l0, i0, "dimension 0", "is zero");
}

TEST_F(DataTest, CorruptGzip) {
  Bytes z = gzip(images_idx(20, 4, 4));
  Bytes flipped = z;
  for (size_t k = 10; k < flipped.size() - 8; ++k) flipped[k] ^= 0xa5;
  const fs::path l = write("l", labels_idx(20));
  const fs::path bad = write("bad.gz", flipped);
  expect_error(bad, l, bad, "corrupt gzip data");
  z.resize(z.size() / 2);
  const fs::path cut = write("cut.gz", z);
  expect_error(cut, l, cut, "corrupt gzip data", "ends early");
}

TEST_F(DataTest, UnknownSplitAndMissingDir) {
  EXPECT_THROW(load_fashion_mnist("valid", 1, dir_), std::runtime_error);
  try {
    load_fashion_mnist("test", 1, dir_ / "absent");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(),
                AllOf(HasSubstr((dir_ / "absent").string()), HasSubstr("dataset-fashion-mnist"),
                      HasSubstr("NASA_FASHION_MNIST_DIR")));
  }
}

TEST(FashionMnist, InstalledTestSplit) {
  const fs::path dir = default_fashion_mnist_dir();
  if (!fs::exists(dir / "t10k-images-idx3-ubyte.gz")) {
    // Under `make test` (NASA_MAKE_TEST=1) `make deps` has installed it: missing is a failure.
    // Run by hand, the test is skipped, loudly.
    const char* make_test = std::getenv("NASA_MAKE_TEST");
    if (make_test != nullptr && *make_test != '\0') {
      FAIL() << "Fashion-MNIST not found in " << dir
             << " under `make test`: `make deps` installs it (Debian package "
                "dataset-fashion-mnist)";
    }
    GTEST_SKIP() << "*** SKIPPED: Fashion-MNIST not found in " << dir
                 << ": run `make deps` (Debian package dataset-fashion-mnist) ***";
  }
  const Dataset first = load_fashion_mnist("test", 100);
  ASSERT_EQ(first.size(), 100u);
  EXPECT_EQ(first.rows, 28u);
  EXPECT_EQ(first.cols, 28u);
  EXPECT_EQ(first.images.size(), 100u * 28 * 28);
  for (uint8_t label : first.labels) EXPECT_LT(label, 10);
  const Dataset all = load_fashion_mnist("test");
  EXPECT_EQ(all.size(), 10000u);
  EXPECT_EQ(all.images.size(), 10000u * 28 * 28);
  EXPECT_TRUE(std::equal(first.images.begin(), first.images.end(), all.images.begin()));
}

// ---- --data directories (load_data, docs/data.md): CIFAR-10/100 batches, IDX files with
// channels, PNG/JPEG image folders written here and read back value for value; one test per
// malformed input, each naming the file.
void write(const fs::path& p, const Bytes& b) {
  fs::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// A deterministic value of image `i`, pixel `p`, channel `c`.
uint8_t value(size_t i, size_t p, size_t c) {
  return static_cast<uint8_t>(i * 37 + p * 7 + c * 101);
}

// CIFAR records: `label_bytes` labels (the last = labels[i]), then the channel-major image.
Bytes cifar(const std::vector<uint8_t>& labels, size_t first, int label_bytes) {
  Bytes b;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (label_bytes == 2) b.push_back(static_cast<uint8_t>(labels[i] / 5));  // the coarse label
    b.push_back(labels[i]);
    for (size_t c = 0; c < 3; ++c) {
      for (size_t p = 0; p < 1024; ++p) b.push_back(value(first + i, p, c));
    }
  }
  return b;
}

void write_png(const fs::path& p, uint32_t h, uint32_t w, uint32_t c, size_t seed) {
  fs::create_directories(p.parent_path());
  png_image im{};
  im.version = PNG_IMAGE_VERSION;
  im.width = w;
  im.height = h;
  im.format = c == 3 ? PNG_FORMAT_RGB : c == 4 ? PNG_FORMAT_RGBA : PNG_FORMAT_GRAY;
  Bytes px(size_t{h} * w * c);
  for (size_t q = 0; q < size_t{h} * w; ++q) {
    for (size_t k = 0; k < c; ++k) px[q * c + k] = value(seed, q, k);
  }
  ASSERT_NE(png_image_write_to_file(&im, p.c_str(), 0, px.data(), 0, nullptr), 0) << im.message;
}

void write_jpeg(const fs::path& p, uint32_t h, uint32_t w, uint32_t c) {
  fs::create_directories(p.parent_path());
  FILE* f = std::fopen(p.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr jerr{};
  cinfo.err = jpeg_std_error(&jerr);
  jpeg_create_compress(&cinfo);
  jpeg_stdio_dest(&cinfo, f);
  cinfo.image_width = w;
  cinfo.image_height = h;
  cinfo.input_components = static_cast<int>(c);
  cinfo.in_color_space = c == 3 ? JCS_RGB : JCS_GRAYSCALE;
  jpeg_set_defaults(&cinfo);
  jpeg_start_compress(&cinfo, TRUE);
  Bytes row(size_t{w} * c, 128);
  while (cinfo.next_scanline < h) {
    JSAMPROW r = row.data();
    jpeg_write_scanlines(&cinfo, &r, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::fclose(f);
}

class DataDir : public nasa::testing::TempDirTest {
 protected:
  DataDir() : TempDirTest("nasa_unit_data_dir_") {}
  std::string load_error(const fs::path& d) {
    try {
      load_data(d);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(DataDir, Cifar10BatchesBecomeHwcImagesWithTheirClassNames) {
  write(dir_ / "data_batch_1.bin", cifar({3, 9, 0}, 0, 1));
  write(dir_ / "data_batch_2.bin", cifar({5, 1}, 3, 1));
  write(dir_ / "test_batch.bin", cifar({7, 2}, 100, 1));
  std::string names;
  for (int k = 0; k < 10; ++k) names += "class" + std::to_string(k) + "\n";
  write(dir_ / "batches.meta.txt", Bytes(names.begin(), names.end()));
  const Data d = load_data(dir_);
  EXPECT_EQ(d.format, "cifar10");
  ASSERT_EQ(d.train.size(), 5u);
  ASSERT_EQ(d.test.size(), 2u);
  EXPECT_EQ(d.train.labels, (Bytes{3, 9, 0, 5, 1}));
  EXPECT_EQ(d.test.labels, (Bytes{7, 2}));
  EXPECT_EQ(d.train.rows, 32u);
  EXPECT_EQ(d.train.channels, 3u);
  for (size_t i = 0; i < 5; ++i) {
    const auto im = d.train.image(i);
    for (size_t p : {size_t{0}, size_t{33}, size_t{1023}}) {
      for (size_t c = 0; c < 3; ++c) ASSERT_EQ(im[p * 3 + c], value(i, p, c)) << i << " " << p;
    }
  }
  EXPECT_EQ(d.test.image(1)[5 * 3 + 2], value(101, 5, 2));
  ASSERT_EQ(d.class_names.size(), 10u);
  EXPECT_EQ(d.class_names[9], "class9");
}

TEST_F(DataDir, Cifar100TakesTheFineLabel) {
  write(dir_ / "train.bin", cifar({99, 42}, 0, 2));
  write(dir_ / "test.bin", cifar({17}, 2, 2));
  const Data d = load_data(dir_);
  EXPECT_EQ(d.format, "cifar100");
  EXPECT_EQ(d.train.labels, (Bytes{99, 42}));
  EXPECT_EQ(d.test.labels, (Bytes{17}));
  EXPECT_EQ(d.train.image(1)[3 * 10 + 1], value(1, 10, 1));
}

TEST_F(DataDir, IdxFilesWithChannels) {
  // n x h x w x c (magic 0x804), the MNIST file names
  auto idx = [&](const std::string& prefix, uint32_t n) {
    Bytes im, lb;
    put32(im, 0x804);
    for (uint32_t v : {n, 4u, 5u, 2u}) put32(im, v);
    for (size_t i = 0; i < n; ++i) {
      for (size_t q = 0; q < 20; ++q) {
        for (size_t c = 0; c < 2; ++c) im.push_back(value(i, q, c));
      }
    }
    put32(lb, 0x801);
    put32(lb, n);
    for (uint32_t i = 0; i < n; ++i) lb.push_back(static_cast<uint8_t>(i % 3));
    write(dir_ / (prefix + "-images-idx3-ubyte"), im);
    write(dir_ / (prefix + "-labels-idx1-ubyte"), lb);
  };
  idx("train", 4);
  idx("t10k", 2);
  const Data d = load_data(dir_);
  EXPECT_EQ(d.format, "idx");
  EXPECT_EQ(d.train.size(), 4u);
  EXPECT_EQ(d.test.size(), 2u);
  EXPECT_EQ(d.train.rows, 4u);
  EXPECT_EQ(d.train.cols, 5u);
  EXPECT_EQ(d.train.channels, 2u);
  EXPECT_EQ(d.train.image(3)[7 * 2 + 1], value(3, 7, 1));
  EXPECT_EQ(d.train.labels[2], 2);
}

TEST_F(DataDir, ImageFolderWithTrainAndTestSplits) {
  write_png(dir_ / "train" / "cat" / "a.png", 8, 6, 3, 1);
  write_png(dir_ / "train" / "cat" / "b.PNG", 8, 6, 3, 2);
  write_png(dir_ / "train" / "dog" / "c.png", 8, 6, 4, 3);  // RGBA: alpha composited on black
  write_jpeg(dir_ / "train" / "dog" / "d.jpg", 8, 6, 3);
  write_png(dir_ / "test" / "dog" / "e.png", 8, 6, 3, 5);
  write(dir_ / "train" / "cat" / "notes.txt", Bytes{'x'});  // not an image: skipped
  std::vector<std::pair<size_t, size_t>> calls;
  const Data d =
      load_data(dir_, [&](size_t done, size_t total) { calls.emplace_back(done, total); });
  EXPECT_EQ(d.format, "folder");
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(d.train.size(), 4u);
  ASSERT_EQ(d.test.size(), 1u);
  EXPECT_EQ(d.train.labels, (Bytes{0, 0, 1, 1}));
  EXPECT_EQ(d.test.labels, (Bytes{1}));
  EXPECT_EQ(d.train.rows, 8u);
  EXPECT_EQ(d.train.cols, 6u);
  EXPECT_EQ(d.train.channels, 3u);
  EXPECT_EQ(d.test.channels, 3u);
  for (size_t q = 0; q < 48; ++q) {
    for (size_t c = 0; c < 3; ++c) ASSERT_EQ(d.train.image(1)[q * 3 + c], value(2, q, c));
  }
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.back(), (std::pair<size_t, size_t>{5, 5}));
}

TEST_F(DataDir, ImageFolderOfClassesOnlyHasNoTestSplit) {
  write_png(dir_ / "a" / "1.png", 4, 4, 1, 1);
  write_png(dir_ / "b" / "2.png", 4, 4, 1, 2);
  const Data d = load_data(dir_);
  EXPECT_EQ(d.train.size(), 2u);
  EXPECT_EQ(d.train.channels, 1u);
  EXPECT_EQ(d.test.size(), 0u);
  EXPECT_EQ(d.train.image(1)[5], value(2, 5, 0));
}

TEST_F(DataDir, TruncatedCifarBatchIsNamed) {
  Bytes b = cifar({1, 2}, 0, 1);
  b.resize(b.size() - 100);
  write(dir_ / "data_batch_1.bin", b);
  EXPECT_THAT(load_error(dir_), AllOf(HasSubstr("data_batch_1.bin"),
                                      HasSubstr("truncated CIFAR batch"), HasSubstr("3073")));
}

TEST_F(DataDir, CifarLabelPastTheClassesIsNamed) {
  write(dir_ / "data_batch_1.bin", cifar({1, 12}, 0, 1));
  EXPECT_THAT(load_error(dir_),
              AllOf(HasSubstr("data_batch_1.bin"), HasSubstr("record 1"), HasSubstr("label 12")));
}

TEST_F(DataDir, ImageOfAnotherSizeIsNamed) {
  write_png(dir_ / "a" / "1.png", 8, 8, 3, 1);
  write_png(dir_ / "b" / "2.png", 16, 8, 3, 2);
  EXPECT_THAT(load_error(dir_), AllOf(HasSubstr("2.png"), HasSubstr("16x8x3"), HasSubstr("8x8x3")));
}

TEST_F(DataDir, UnreadablePngIsNamed) {
  write_png(dir_ / "a" / "1.png", 8, 8, 3, 1);
  write(dir_ / "b" / "bad.png", Bytes{0x89, 'P', 'N', 'G', 1, 2, 3});
  EXPECT_THAT(load_error(dir_), AllOf(HasSubstr("bad.png"), HasSubstr("unreadable PNG")));
  Bytes png = nasa::data::read_file(dir_ / "a" / "1.png");
  png.resize(png.size() / 2);  // truncated in its image data
  write(dir_ / "b" / "bad.png", png);
  EXPECT_THAT(load_error(dir_), AllOf(HasSubstr("bad.png"), HasSubstr("unreadable PNG")));
}

TEST_F(DataDir, UnreadableJpegIsNamed) {
  write(dir_ / "a" / "x.jpg", Bytes{0xFF, 0xD8, 0xFF, 0x00, 1, 2});
  EXPECT_THAT(load_error(dir_), AllOf(HasSubstr("x.jpg"), HasSubstr("unreadable JPEG")));
}

TEST_F(DataDir, EmptyClassFolderIsNamed) {
  write_png(dir_ / "a" / "1.png", 8, 8, 3, 1);
  fs::create_directories(dir_ / "empty");
  EXPECT_THAT(load_error(dir_), AllOf(HasSubstr("empty"), HasSubstr("empty class folder")));
}

TEST_F(DataDir, NotADirectoryOrNoClasses) {
  EXPECT_THAT(load_error(dir_ / "missing"), HasSubstr("not a directory"));
  EXPECT_THAT(load_error(dir_), HasSubstr("no class subfolders"));
}

TEST_F(DataDir, ValidationSplitIsASeededChoiceMovedToTheEnd) {
  std::vector<uint8_t> labels;
  for (int i = 0; i < 40; ++i) labels.push_back(static_cast<uint8_t>(i % 10));
  write(dir_ / "data_batch_1.bin", cifar(labels, 0, 1));
  const JobData a = job_data(dir_, "10", 7), b = job_data(dir_, "10", 7),
                c = job_data(dir_, "10", 8);
  EXPECT_EQ(a.val, 10u);
  EXPECT_EQ(a.train_only(), 30u);
  EXPECT_EQ(a.train.images, b.train.images);  // the same seed: the same split
  EXPECT_NE(a.train.images, c.train.images);  // another seed: another split
  // every image once: the first byte of image i is value(i, 0, 0), distinct for i < 40
  std::vector<int> seen(256, 0);
  for (size_t i = 0; i < 40; ++i) ++seen[a.train.image(i)[0]];
  for (size_t i = 0; i < 40; ++i) EXPECT_EQ(seen[value(i, 0, 0)], 1) << i;
  // each part keeps the file order (the image's index from its first byte)
  std::vector<int> index_of(256, -1);
  for (int i = 0; i < 40; ++i) index_of[value(static_cast<size_t>(i), 0, 0)] = i;
  for (size_t i = 1; i < 40; ++i) {
    if (i == 30) continue;
    EXPECT_LT(index_of[a.train.image(i - 1)[0]], index_of[a.train.image(i)[0]]) << i;
  }
  EXPECT_EQ(job_data(dir_, "0.25", 1).val, 10u);
  EXPECT_EQ(job_data(dir_, "", 1).val, 4u);  // default 0.1
  for (const char* bad : {"0", "1.5", "-3", "x", "40", "0.0"}) {
    try {
      job_data(dir_, bad, 1);
      ADD_FAILURE() << bad << ": no error";
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string("--val-split ") + bad)) << bad;
    }
  }
}

TEST(DataFits, ShapeAndLabelsAgainstTheSpec) {
  Dataset d;
  d.rows = d.cols = 32;
  d.channels = 3;
  d.images.assign(2 * 32 * 32 * 3, 0);
  d.labels = {1, 12};
  try {
    check_fits(d, "x", 28, 28, 1, 10, "--data D");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("spec 'x' expects 28x28x1, the data is 32x32x3"));
  }
  try {
    check_fits(d, "x", 32, 32, 3, 10, "--data D");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("image 1 has label 12"), HasSubstr("10 classes")));
  }
  EXPECT_NO_THROW(check_fits(d, "x", 32, 32, 3, 13, "--data D"));
}

}  // namespace
}  // namespace nasa::data
