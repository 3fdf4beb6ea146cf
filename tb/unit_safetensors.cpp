// Unit tests of the safetensors reader/writer: round trips, the exact byte layout of a tiny file,
// one test per validation error, check_shape, and the atomic-replace guarantee of the writer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "nasa/safetensors.h"

#include "temp_dir_test.h"

namespace nasa::weights {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Bytes = std::vector<uint8_t>;

Bytes read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

class SafetensorsTest : public nasa::testing::TempDirTest {
 protected:
  SafetensorsTest() : TempDirTest("nasa_unit_st_") {}

  fs::path write_raw(const Bytes& b) {
    const fs::path p = dir_ / "raw.safetensors";
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    return p;
  }

  // A file whose header is `json` (length field = json.size()) followed by `data_bytes` zeros.
  fs::path write_file(const std::string& json, size_t data_bytes) {
    Bytes b(8);
    for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(uint64_t{json.size()} >> (8 * i));
    b.insert(b.end(), json.begin(), json.end());
    b.resize(b.size() + data_bytes);
    return write_raw(b);
  }

  template <typename... M>
  void expect_read_error(const fs::path& p, M... what) {
    try {
      read_safetensors(p);
      FAIL() << "expected an exception";
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr(p.string()), HasSubstr(what)...));
    }
  }
};

TensorFile sample() {
  TensorFile f;
  const std::vector<float> w = {0.5f, -1.25f, 3.0f, 1e-7f, -0.0f, 42.0f};
  f.add_f32("layers.0.conv.weight", {2, 3}, w);
  const float one = 1.0f;
  f.add_f32("scale", {}, std::span<const float>(&one, 1));
  f.add_f32("empty", {0, 4}, {});
  f.tensors["q.i8"] = Tensor{"I8", {3}, {0x80, 0x00, 0x7f}};
  f.tensors["q.i32"] = Tensor{"I32", {2}, {1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}};
  f.tensors["h.bf16"] = Tensor{"BF16", {1, 2}, {0x80, 0x3f, 0x00, 0x40}};
  f.tensors["idx.i64"] = Tensor{"I64", {1}, {9, 0, 0, 0, 0, 0, 0, 0}};
  f.metadata = {{"format", "pt"}, {"supernet", "nasa-tiny"}};
  return f;
}

TEST_F(SafetensorsTest, RoundTrip) {
  const TensorFile f = sample();
  const fs::path p = dir_ / "w.safetensors";
  write_safetensors(p, f);
  EXPECT_FALSE(fs::exists(dir_ / "w.safetensors.tmp"));
  const TensorFile g = read_safetensors(p);
  EXPECT_EQ(g.metadata, f.metadata);
  ASSERT_EQ(g.tensors.size(), f.tensors.size());
  for (const auto& [name, t] : f.tensors) {
    const Tensor& u = g.at(name);
    EXPECT_EQ(u.dtype, t.dtype) << name;
    EXPECT_EQ(u.shape, t.shape) << name;
    EXPECT_EQ(u.data, t.data) << name;
  }
  EXPECT_THAT(g.at("layers.0.conv.weight").f32(),
              ElementsAre(0.5f, -1.25f, 3.0f, 1e-7f, -0.0f, 42.0f));
  EXPECT_EQ(g.at("layers.0.conv.weight").numel(), 6u);
  EXPECT_EQ(g.at("scale").numel(), 1u);
  EXPECT_EQ(g.at("empty").numel(), 0u);
  const Bytes raw = read_bytes(p);
  uint64_t header_len = 0;
  for (int k = 7; k >= 0; --k) header_len = header_len << 8 | raw[k];
  EXPECT_EQ(header_len % 8, 0u);
  EXPECT_EQ(raw.size(), 8 + header_len + 24 + 4 + 3 + 8 + 4 + 8);
}

TEST_F(SafetensorsTest, ByteExactLayout) {
  TensorFile f;
  const float b[] = {1.0f, -2.0f};
  f.add_f32("b", {2}, b);
  f.tensors["a"] = Tensor{"U8", {1}, {7}};
  f.metadata["format"] = "pt";
  const fs::path p = dir_ / "tiny.safetensors";
  write_safetensors(p, f);

  const std::string json =
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[1,9]}})";
  ASSERT_EQ(json.size(), 137u);
  Bytes expected = {144, 0, 0, 0, 0, 0, 0, 0};
  expected.insert(expected.end(), json.begin(), json.end());
  expected.insert(expected.end(), 7, ' ');
  for (uint8_t byte : {7, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0}) expected.push_back(byte);
  EXPECT_EQ(read_bytes(p), expected);
}

TEST_F(SafetensorsTest, DtypeSizes) {
  EXPECT_EQ(dtype_size("F32"), 4u);
  EXPECT_EQ(dtype_size("F16"), 2u);
  EXPECT_EQ(dtype_size("BF16"), 2u);
  EXPECT_EQ(dtype_size("I8"), 1u);
  EXPECT_EQ(dtype_size("U8"), 1u);
  EXPECT_EQ(dtype_size("I32"), 4u);
  EXPECT_EQ(dtype_size("I64"), 8u);
  EXPECT_EQ(dtype_size("F64"), 8u);
  EXPECT_EQ(dtype_size("BOOL"), 1u);
  EXPECT_THROW(dtype_size("f32"), std::invalid_argument);
}

TEST_F(SafetensorsTest, ReadsF16AndHoles) {
  // A 2-byte hole between the tensors and 2 trailing bytes are accepted (the Rust reference
  // reader rejects them): we only require each tensor inside the data section, no overlaps.
  const fs::path p = write_file(R"({"h":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},)"
                                R"("i":{"dtype":"I8","shape":[2],"data_offsets":[6,8]}})",
                                10);
  const TensorFile f = read_safetensors(p);
  EXPECT_EQ(f.at("h").data.size(), 4u);
  EXPECT_EQ(f.at("i").data.size(), 2u);
  EXPECT_TRUE(f.metadata.empty());
}

TEST_F(SafetensorsTest, ErrorFileMissingOrTooShort) {
  expect_read_error(dir_ / "none.safetensors", "not found");
  expect_read_error(write_raw({1, 0, 0, 0, 0}), "file is 5 bytes", "8-byte header length");
}

TEST_F(SafetensorsTest, ErrorHeaderLength) {
  expect_read_error(write_raw({0, 0, 0, 0, 0, 1, 0, 0, '{', '}'}), "header length 1099511627776",
                    "100000000-byte limit");
  expect_read_error(write_raw({100, 0, 0, 0, 0, 0, 0, 0, '{', '}'}), "header length 100",
                    "exceeds the 2 bytes", "truncated");
}

TEST_F(SafetensorsTest, ErrorBadJson) {
  expect_read_error(write_file(R"({"w": {"dtype": )", 0), "header is not valid JSON");
  expect_read_error(write_file("[1, 2]", 0), "header is an array", "expected an object");
  expect_read_error(write_file(R"({"w": 3})", 0), "tensor 'w'", "entry is a number");
  expect_read_error(write_file(R"({"__metadata__": {"k": 1}})", 0), "__metadata__",
                    "entry 'k' is a number, expected a string");
}

TEST_F(SafetensorsTest, ErrorMissingOrMistypedFields) {
  expect_read_error(write_file(R"({"w":{"shape":[1],"data_offsets":[0,1]}})", 1), "tensor 'w'",
                    "missing \"dtype\"");
  expect_read_error(write_file(R"({"w":{"dtype":"U8","data_offsets":[0,1]}})", 1), "tensor 'w'",
                    "missing \"shape\"");
  expect_read_error(write_file(R"({"w":{"dtype":"U8","shape":[1]}})", 1), "tensor 'w'",
                    "missing \"data_offsets\"");
  expect_read_error(write_file(R"({"w":{"dtype":8,"shape":[1],"data_offsets":[0,1]}})", 1),
                    "tensor 'w'", "\"dtype\" is a number, expected a string");
  expect_read_error(write_file(R"({"w":{"dtype":"U8","shape":"1","data_offsets":[0,1]}})", 1),
                    "tensor 'w'", "\"shape\" is a string, expected an array");
  expect_read_error(write_file(R"({"w":{"dtype":"U8","shape":[1.5],"data_offsets":[0,1]}})", 1),
                    "tensor 'w'", "\"shape\" holds 1.5");
  expect_read_error(write_file(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0]}})", 1),
                    "tensor 'w'", "expected [begin, end]");
}

TEST_F(SafetensorsTest, ErrorBadDtype) {
  expect_read_error(write_file(R"({"w":{"dtype":"F12","shape":[1],"data_offsets":[0,1]}})", 1),
                    "tensor 'w'", "unknown dtype 'F12'", "F32");
}

TEST_F(SafetensorsTest, ErrorNegativeDim) {
  expect_read_error(write_file(R"({"w":{"dtype":"U8","shape":[-2],"data_offsets":[0,0]}})", 0),
                    "tensor 'w'", "\"shape\" holds -2, expected a non-negative integer");
}

TEST_F(SafetensorsTest, ErrorBadOffsets) {
  expect_read_error(write_file(R"({"w":{"dtype":"U8","shape":[0],"data_offsets":[4,2]}})", 8),
                    "tensor 'w'", "[4,2] end before begin");
  expect_read_error(write_file(R"({"w":{"dtype":"U8","shape":[4],"data_offsets":[6,10]}})", 8),
                    "tensor 'w'", "[6,10] reach beyond the 8-byte data section");
  expect_read_error(write_file(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[-1,0]}})", 8),
                    "tensor 'w'", "\"data_offsets\" holds -1");
  expect_read_error(write_file(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                               R"("b":{"dtype":"I32","shape":[1],"data_offsets":[3,7]}})",
                               8),
                    "tensors 'a' [0,4] and 'b' [3,7] overlap");
}

TEST_F(SafetensorsTest, ErrorSizeMismatch) {
  expect_read_error(write_file(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8),
                    "tensor 'w'", "hold 8 bytes", "dtype F32 and shape [3] need 12");
}

TEST_F(SafetensorsTest, CheckShape) {
  const Tensor t{"F32", {8, 3, 3, 3}, Bytes(8 * 27 * 4)};
  const int64_t ok[] = {8, 3, 3, 3}, bad[] = {16, 3, 3, 3};
  EXPECT_NO_THROW(check_shape(t, ok, "x"));
  try {
    check_shape(t, bad, "layers.0.choices.1.conv.weight");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "tensor 'layers.0.choices.1.conv.weight' has shape [8,3,3,3], expected "
                 "[16,3,3,3]");
  }
  EXPECT_THROW(check_shape(t, std::span<const int64_t>(ok, 3), "x"), std::runtime_error);
}

TEST_F(SafetensorsTest, AccessorsThrow) {
  const TensorFile f = sample();
  try {
    f.at("layers.0.conv.bias");
    FAIL();
  } catch (const std::out_of_range& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("'layers.0.conv.bias'"), HasSubstr("7 tensors"),
                                HasSubstr("'empty'")));
  }
  EXPECT_THROW(f.at("q.i8").f32(), std::invalid_argument);
  TensorFile g;
  const float v[3] = {};
  EXPECT_THROW(g.add_f32("w", {2, 2}, v), std::invalid_argument);
  EXPECT_THROW(g.add_f32("__metadata__", {3}, v), std::invalid_argument);
  g.add_f32("w", {3}, v);
  EXPECT_THROW(g.add_f32("w", {3}, v), std::invalid_argument);
}

TEST_F(SafetensorsTest, AtomicWriteMissingDirectory) {
  const fs::path p = dir_ / "no_such_dir" / "w.safetensors";
  try {
    write_safetensors(p, sample());
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("w.safetensors.tmp"), HasSubstr("cannot create")));
  }
  EXPECT_FALSE(fs::exists(dir_ / "no_such_dir"));
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(SafetensorsTest, AtomicWriteReplacesOnlyOnSuccess) {
  const fs::path p = dir_ / "w.safetensors";
  write_safetensors(p, sample());
  const Bytes before = read_bytes(p);

  TensorFile bad = sample();
  bad.tensors["q.i8"].data.pop_back();  // invalid: caught before anything is written
  try {
    write_safetensors(p, bad);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(p.string()), HasSubstr("tensor 'q.i8'"),
                                HasSubstr("holds 2 bytes"), HasSubstr("need 3")));
  }
  EXPECT_EQ(read_bytes(p), before);
  EXPECT_FALSE(fs::exists(dir_ / "w.safetensors.tmp"));

  // The rename itself fails (target is a non-empty directory): the temp file is cleaned up.
  const fs::path d = dir_ / "adir";
  fs::create_directories(d / "inside");
  EXPECT_THROW(write_safetensors(d, sample()), std::runtime_error);
  EXPECT_TRUE(fs::is_directory(d / "inside"));
  EXPECT_FALSE(fs::exists(dir_ / "adir.tmp"));

  TensorFile next;
  const float v[] = {2.0f};
  next.add_f32("only", {1}, v);
  write_safetensors(p, next);
  const TensorFile g = read_safetensors(p);
  ASSERT_EQ(g.tensors.size(), 1u);
  EXPECT_THAT(g.at("only").f32(), ElementsAre(2.0f));
}

}  // namespace
}  // namespace nasa::weights
