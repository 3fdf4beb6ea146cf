// Regression tests of the fuzzing (fuzz/, docs/reliability.md "Fuzzing"): every input a fuzz
// target found that crashed, hung or broke an invariant, fed through the same entry point as the
// target, now answered with the documented error naming what is wrong and where. Also: the
// from-memory entry points the targets use behave as the file readers the tools use.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "nasa/compiler.h"
#include "nasa/data.h"
#include "nasa/float_eval.h"
#include "nasa/fusion.h"
#include "nasa/quant.h"
#include "nasa/safetensors.h"
#include "nasa/spec.h"
#include "nasa/supernet_weights.h"
#include "temp_dir_test.h"
#include "thrown_message.h"

namespace nasa {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using Bytes = std::vector<uint8_t>;

class FuzzEntryPoints : public testing::TempDirTest {
 protected:
  FuzzEntryPoints() : TempDirTest("nasa_unit_fuzz_") {}
  fs::path write(const std::string& name, std::string_view content) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary)
        .write(content.data(), static_cast<std::streamsize>(content.size()));
    return p;
  }
};

TEST_F(FuzzEntryPoints, FromMemoryEqualsFromFile) {
  const spec::Supernet net = spec::builtin_space("fmnist-mb");
  const std::string text = spec::to_json(net).dump(2);
  EXPECT_EQ(spec::parse_supernet_text(text, "x.json"), spec::load_supernet(write("s.json", text)));
  const std::string bad = text.substr(0, text.size() / 2);
  const std::string from_file = testing::message_of<spec::SpecError>(
      [&] { spec::load_supernet(write("bad.json", bad)); }, "SpecError");
  const std::string from_text = testing::message_of<spec::SpecError>(
      [&] { spec::parse_supernet_text(bad, (dir_ / "bad.json").string()); }, "SpecError");
  EXPECT_EQ(from_file, from_text);
  EXPECT_THAT(from_text, AllOf(HasSubstr("bad.json"), HasSubstr("invalid JSON")));

  const std::string arch = "# two\n0-0-0-0-0-0\r\n\n  1-1-1-1-1-1  \n";
  EXPECT_EQ(fusion::parse_arch_text(arch, "a.txt", net),
            fusion::read_arch_file(write("a.txt", arch), net));
  EXPECT_THAT(
      testing::message_of<fusion::FusionError>(
          [&] { fusion::parse_arch_text("0-0-0-0-0-0\n\n9-9", "a.txt", net); }, "FusionError"),
      HasSubstr("a.txt:3:"));

  const fs::path wpath = dir_ / "w.safetensors";
  weights::write_safetensors(wpath, weights::random_weights(net, 3));
  std::ifstream wf(wpath, std::ios::binary);
  const Bytes wbytes((std::istreambuf_iterator<char>(wf)), std::istreambuf_iterator<char>());
  const weights::TensorFile from_path = weights::read_safetensors(wpath);
  const weights::TensorFile from_bytes = weights::parse_safetensors(wbytes, wpath);
  ASSERT_EQ(from_path.tensors.size(), from_bytes.tensors.size());
  for (const auto& [name, t] : from_path.tensors) {
    EXPECT_EQ(t.data, from_bytes.at(name).data) << name;
  }

  // IDX: 2 images of 1 x 2 pixels, 2 labels
  const std::string images("\0\0\x08\x03\0\0\0\x02\0\0\0\x01\0\0\0\x02\x01\x02\x03\x04", 20);
  const std::string labels("\0\0\x08\x01\0\0\0\x02\x07\x09", 10);
  const data::Dataset d = data::load_idx(write("i", images), write("l", labels));
  const data::Dataset m =
      data::parse_idx(Bytes(images.begin(), images.end()), Bytes(labels.begin(), labels.end()));
  EXPECT_EQ(d.images, m.images);
  EXPECT_EQ(d.labels, m.labels);
  EXPECT_EQ(m.labels, (Bytes{7, 9}));
  EXPECT_THAT(
      testing::message_of<std::runtime_error>(
          [&] { data::parse_idx(Bytes(images.begin(), images.end()), Bytes(4)); }, "runtime_error"),
      HasSubstr("labels: wrong magic"));
}

// --- Findings. Each test names the target and the crash file libFuzzer wrote. ---

// A string of `depth` nested empty arrays: "[[[...]]]".
std::string nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }
// Deep enough to overflow an 8 MB stack in any build (optimized or not) when serialized
// recursively, as nlohmann::json::dump() does.
constexpr size_t kDeep = 300000;

Bytes safetensors_with_header(const std::string& header, size_t data_bytes) {
  std::string file;  // (built as a string: GCC 12 -O2 warns falsely on vector::insert here)
  for (size_t i = 0; i < 8; ++i) file += static_cast<char>(uint64_t{header.size()} >> (8 * i));
  file += header;
  file.append(data_bytes, '\0');
  return {file.begin(), file.end()};
}

// fuzz_spec, crash-de2f5f572b394aa1b1cfd0ef64f1c28693f5c230: a number beyond the range of a
// double makes nlohmann::json throw out_of_range (406), not parse_error; it escaped as a bare
// nlohmann exception, not a SpecError, and without the file's name.
TEST(FuzzRegression, SpecNumberOverflowIsInvalidJson) {
  const std::string crash =
      "{\"name\":888888888888000000000000000000000104778219564986e24055inu\x05t\":{\"h\x0e:8,"
      "\"w\":8,\"c\":16},\"classes&:{\"ounnels\":4,\"nels\":4,\"stride\":38}}z";
  for (const std::string& input : {crash, std::string("{\"name\": 1e400}")}) {
    EXPECT_THAT(testing::message_of<spec::SpecError>(
                    [&] { spec::parse_supernet_text(input, "fuzz.json"); }, "SpecError"),
                AllOf(HasSubstr("fuzz.json: invalid JSON"), HasSubstr("number overflow")));
  }
}

// fuzz_spec (directed input: the largest sizes in a 44 KB file, beyond the target's max_len):
// every op's cost is below 2^63, as spec.h promised, but the largest candidate of 800 layers of
// 4096 channels on a 4096 x 4096 input costs more: candidate_cost wrapped around.
TEST(FuzzRegression, SpecLargestCandidateCostFits64Bits) {
  nlohmann::json layers = nlohmann::json::array();
  for (int i = 0; i < 800; ++i) {
    layers.push_back({{"out_channels", 4096}, {"stride", 1}, {"choices", {"conv_k7"}}});
  }
  const nlohmann::json j = {{"name", "huge"},   {"input", {{"h", 4096}, {"w", 4096}, {"c", 4096}}},
                            {"classes", 10},    {"stem", {{"out_channels", 4096}, {"k", 7}}},
                            {"layers", layers}, {"head", {{"channels", 4096}}}};
  EXPECT_THAT(testing::message_of<spec::SpecError>(
                  [&] { spec::parse_supernet_text(j.dump(), "fuzz.json"); }, "SpecError"),
              HasSubstr("fuzz.json: layers: the largest candidate of these 800 layers costs 2^63 "
                        "or more MACs"));
  layers.erase(layers.begin() + 100, layers.end());  // 100 layers: about 2^60 MACs
  nlohmann::json ok = j;
  ok["layers"] = layers;
  const spec::Supernet net = spec::parse_supernet_text(ok.dump(), "fuzz.json");
  EXPECT_GT(spec::candidate_macs(net, spec::Candidate(100, 0)), uint64_t{1} << 59);
}

// fuzz_spec (directed input: deep nesting beyond the target's max_len): an error message quoted
// the offending value with json::dump(), which recurses once per nesting level: a stack overflow
// on a supernet file of a few hundred KB. Now quoted by json_preview (bounded).
TEST(FuzzRegression, SpecDeeplyNestedValueIsQuotedBriefly) {
  const std::string input = "{\"name\": " + nested(kDeep) + "}";
  EXPECT_THAT(testing::message_of<spec::SpecError>(
                  [&] { spec::parse_supernet_text(input, "fuzz.json"); }, "SpecError"),
              AllOf(HasSubstr("fuzz.json: name: [[[["), HasSubstr("... (expected a string)")));
}

// fuzz_arch (same directed input): candidate_from_json quoted the whole candidate and the bad
// element with dump().
TEST(FuzzRegression, CandidateJsonDeeplyNested) {
  const spec::Supernet net = spec::builtin_space("fmnist-mb");
  for (const std::string& text : {nested(kDeep), "[0, " + nested(kDeep) + "]"}) {
    const nlohmann::json j = nlohmann::json::parse(text);
    const std::string msg = testing::message_of<spec::SpecError>(
        [&] { spec::candidate_from_json(j, net); }, "SpecError");
    EXPECT_THAT(msg, AllOf(HasSubstr("[[[[[[[["), HasSubstr("is not an integer choice index")));
    EXPECT_LT(msg.size(), 300u);  // quoted briefly, not the 600 KB value
  }
}

// A JSON index above 2^63 read as a negative int64, passed the range check as -1 and was
// reported as "choice -1".
TEST(FuzzRegression, CandidateJsonIndexAboveInt64) {
  const spec::Supernet net = spec::builtin_space("fmnist-mb");
  const nlohmann::json j = nlohmann::json::parse("[18446744073709551615, 0, 0, 0, 0, 0]");
  EXPECT_THAT(
      testing::message_of<spec::SpecError>([&] { spec::candidate_from_json(j, net); }, "SpecError"),
      HasSubstr("layer 0: 18446744073709551615 is not an integer choice index"));
}

// fuzz_safetensors (same directed input): a non-integer "shape" or "data_offsets" entry, and
// "data_offsets" of the wrong length, were quoted with dump().
TEST(FuzzRegression, SafetensorsDeeplyNestedHeaderValues) {
  const std::string deep = nested(kDeep);
  const std::pair<std::string, std::string> cases[] = {
      {R"({"w":{"dtype":"F32","shape":[)" + deep + R"(],"data_offsets":[0,4]}})",
       "tensor 'w': \"shape\" holds [[[["},
      {R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,)" + deep + "]}}",
       "tensor 'w': \"data_offsets\" holds [[[["},
      {R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4,)" + deep + "]}}",
       "tensor 'w': \"data_offsets\" is [0,4,[[[["}};
  for (const auto& [header, want] : cases) {
    const Bytes file = safetensors_with_header(header, 4);
    EXPECT_THAT(testing::message_of<std::runtime_error>(
                    [&] { weights::parse_safetensors(file, "fuzz.safetensors"); }, "runtime_error"),
                AllOf(HasSubstr("fuzz.safetensors: "), HasSubstr(want)));
  }
}

// The fuzz corpus's smallest supernet (fuzz/make_seeds.cpp): one channel everywhere.
spec::Supernet micro_net() {
  spec::Supernet net;
  net.name = "micro";
  net.in_h = net.in_w = 2;
  net.in_c = 1;
  net.classes = 2;
  net.stem = {1, 1, 1};
  net.layers = {{1, 1, {{spec::OpKind::Conv, 1, 1}, {spec::OpKind::Skip, 3, 1}}}};
  net.head = {1};
  return net;
}

// fuzz_supernet_dir, crash-7dea4999489cb9efea2154b02f02da2f279fad8a (a tiny-mb directory whose
// weights hold an infinity; 9.5 KB, rebuilt here from the library): check_weights accepts it
// (names, shapes and dtypes are right), then `nasa eval` stopped in quantize with
// "quantize_weights: weight 2 of output channel 0 is inf", naming no tensor. Quantization errors
// now name the tensor at fault.
TEST(FuzzRegression, QuantizeErrorsNameTheTensor) {
  const spec::Supernet net = micro_net();
  const floatnet::Tensor image{1, 2, 2, {0.1f, 0.5f, 0.9f, 0.3f}};
  struct Case {
    std::string tensor;
    float value;
    std::string want;
  };
  const Case cases[] = {
      {"layers.0.choices.0.conv.weight", std::numeric_limits<float>::infinity(),
       "layers.0.choices.0: quantize_weights: weight 0 of output channel 0 is inf"},
      {"stem.bn.running_var", -2.0f, "stem: fold_bn: channel 0: var + eps"},
      {"head.fc.weight", std::numeric_limits<float>::quiet_NaN(),
       "head.fc: quantize_weights: weight 0 of output channel 0 is nan"},
      {"head.conv.weight", 1e38f, "head: conv_params: channel 0"}};
  for (const Case& c : cases) {
    weights::TensorFile w = weights::random_weights(net, 1);
    weights::Tensor& t = w.tensors.at(c.tensor);
    std::memcpy(t.data.data(), &c.value, sizeof(float));
    weights::check_weights(net, w, "weights.safetensors");  // passes: the values are not checked
    EXPECT_THAT(testing::message_of<std::invalid_argument>(
                    [&] {
                      compile::quantize(net, w, {&image, 1});
                    },
                    "invalid_argument"),
                HasSubstr(c.want))
        << c.tensor;
  }
}

// fuzz_supernet_dir, crash-db1b4b1628c52375cf99334fa8dc9d3db73a8c54 (9.5 KB, in `make fuzz`):
// weights whose largest magnitude in a row is a float denormal: max|w| / 127 underflowed to a
// scale of 0, a zero weight became 0 / 0 = NaN, and casting it to int8 is undefined behaviour
// (UBSan: "-nan is outside the range of representable values of type 'signed char'"); a nonzero
// weight became 127 and the zero scale was then refused as "weight scale ... must be positive".
// Such a row now quantizes like an all-zero row: scale 1, codes 0.
TEST(FuzzRegression, QuantizeDenormalWeights) {
  const float tiny = std::numeric_limits<float>::denorm_min();
  const std::vector<float> w = {tiny, 0.0f, -tiny, 0.5f, 0.25f, 0.0f};
  const quant::QuantWeights q = quant::quantize_weights(w, 2);
  EXPECT_EQ(q.scale[0], 1.0f);
  EXPECT_EQ(q.w, (std::vector<int8_t>{0, 0, 0, 127, 64, 0}));

  const spec::Supernet net = micro_net();
  weights::TensorFile wf = weights::random_weights(net, 1);
  std::memcpy(wf.tensors.at("layers.0.choices.0.conv.weight").data.data(), &tiny, sizeof(float));
  const floatnet::Tensor image{1, 2, 2, {0.1f, 0.5f, 0.9f, 0.3f}};
  const compile::QSupernet qs = compile::quantize(net, wf, {&image, 1});
  EXPECT_EQ(qs.ops[0][0].convs[0].w, (std::vector<int8_t>{0}));
}

}  // namespace
}  // namespace nasa
