// Unit tests of the IDX dataset loader: tiny plain and gzipped files written to a temp dir,
// one test per error, and the installed Fashion-MNIST test split when it is present.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
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

}  // namespace
}  // namespace nasa::data
