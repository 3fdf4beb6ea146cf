// Supernet specification: JSON format, validation messages, shapes, costs and candidates.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "nasa/spec.h"

#include "thrown_message.h"

namespace nasa::spec {
namespace {

using nlohmann::json;

std::filesystem::path example_path() {
  return std::filesystem::path(NASA_SOURCE_DIR) / "docs" / "spaces" / "fmnist-mb.json";
}

Supernet fmnist() { return builtin_space("fmnist-mb"); }

// Runs `f` and returns the SpecError message; fails the test when nothing is thrown.
std::string error_of(const std::function<void()>& f) {
  return nasa::testing::message_of<SpecError>(f, "SpecError");
}

TEST(Spec, ExampleFileEqualsBuiltin) {
  std::ifstream in(example_path());
  ASSERT_TRUE(in) << example_path();
  json file = json::parse(in);
  EXPECT_EQ(file, to_json(fmnist()))
      << "regenerate docs/spaces/fmnist-mb.json with save_supernet(builtin_space(\"fmnist-mb\"))";
}

// Every built-in space has its JSON under docs/spaces/, equal to what the code builds.
TEST(Spec, EveryBuiltinHasItsFile) {
  for (const auto& name : nasa::spec::builtin_space_names()) {
    const std::string path = std::string(NASA_SOURCE_DIR) + "/docs/spaces/" + name + ".json";
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    EXPECT_EQ(json::parse(in), to_json(nasa::spec::builtin_space(name)))
        << "regenerate " << path << " with `nasa init --space " << name << "`";
  }
  EXPECT_EQ(nasa::spec::builtin_space(nasa::spec::kDefaultSpace).name, nasa::spec::kDefaultSpace);
}

TEST(Spec, LoadsExampleFile) {
  Supernet n = load_supernet(example_path());
  EXPECT_EQ(n, fmnist());
  EXPECT_EQ(n.name, "fmnist-mb");
  EXPECT_EQ(n.in_h, 28);
  EXPECT_EQ(n.in_w, 28);
  EXPECT_EQ(n.in_c, 1);
  EXPECT_EQ(n.classes, 10);
  EXPECT_EQ(n.layers.size(), 6u);
  EXPECT_EQ(n.head.channels, 128);
  EXPECT_EQ(n.act, "relu6");
}

TEST(Spec, JsonRoundTrip) {
  Supernet n = fmnist();
  EXPECT_EQ(parse_supernet(to_json(n), "mem"), n);

  Supernet custom = n;
  custom.name = "custom";
  custom.act = "relu";
  custom.stem = {8, 5, 2};
  custom.layers[0].choices = {parse_op("conv_k1"), parse_op("conv_k7"), parse_op("mb_k7_e6")};
  EXPECT_EQ(parse_supernet(to_json(custom), "mem"), custom);

  auto path = std::filesystem::temp_directory_path() /
              ("nasa_unit_spec_" +
               std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".json");
  save_supernet(path, custom);
  EXPECT_EQ(load_supernet(path), custom);
  std::filesystem::remove(path);
}

TEST(Spec, OptionalFieldsTakeDefaults) {
  json j = to_json(fmnist());
  j.erase("act");
  j["stem"].erase("k");
  j["stem"].erase("stride");
  Supernet n = parse_supernet(j, "mem");
  EXPECT_EQ(n.act, "relu6");
  EXPECT_EQ(n.stem.k, 3);
  EXPECT_EQ(n.stem.stride, 1);
  EXPECT_EQ(n, fmnist());
}

TEST(Spec, OpNames) {
  std::vector<std::string> names = {"skip", "conv_k1", "conv_k3", "conv_k5", "conv_k7"};
  for (int k : {3, 5, 7}) {
    for (int e : {1, 3, 6}) names.push_back("mb_k" + std::to_string(k) + "_e" + std::to_string(e));
  }
  for (const auto& name : names) EXPECT_EQ(op_name(parse_op(name)), name);
  OpSpec mb = parse_op("mb_k5_e6");
  EXPECT_EQ(mb.kind, OpKind::MBConv);
  EXPECT_EQ(mb.k, 5);
  EXPECT_EQ(mb.expand, 6);
  OpSpec conv = parse_op("conv_k7");
  EXPECT_EQ(conv.kind, OpKind::Conv);
  EXPECT_EQ(conv.k, 7);
  EXPECT_EQ(parse_op("skip").kind, OpKind::Skip);
  EXPECT_EQ((OpSpec{OpKind::Skip, 1, 1}), (OpSpec{OpKind::Skip, 3, 1}));
  EXPECT_NE(parse_op("mb_k3_e3"), parse_op("mb_k3_e6"));
  for (const char* bad :
       {"mb_k4_e6", "mb_k3_e2", "conv_k2", "MB_K3_E6", "mb_k03_e6", "", "skip "}) {
    std::string msg = error_of([&] { parse_op(bad); });
    EXPECT_NE(msg.find("unknown op '" + std::string(bad) + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("mb_k{3,5,7}_e{1,3,6}, conv_k{1,3,5,7} or skip"), std::string::npos) << msg;
  }
}

TEST(Spec, LayerShapesOfFmnist) {
  std::vector<LayerShape> want = {
      {28, 28, 16, 16, 1}, {28, 28, 16, 16, 1}, {28, 28, 16, 24, 2},
      {14, 14, 24, 24, 1}, {14, 14, 24, 40, 2}, {7, 7, 40, 40, 1},
  };
  EXPECT_EQ(layer_shapes(fmnist()), want);
}

TEST(Spec, LayerShapesRoundUpOddSizes) {
  Supernet n = fmnist();
  n.in_h = 27;
  n.in_w = 9;
  n.stem.stride = 2;  // 14 x 5
  auto s = layer_shapes(n);
  EXPECT_EQ(s[0].h, 14);
  EXPECT_EQ(s[0].w, 5);
  EXPECT_EQ(s[3].h, 7);  // after the stride-2 layer 2
  EXPECT_EQ(s[3].w, 3);
  EXPECT_EQ(s[5].h, 4);
  EXPECT_EQ(s[5].w, 2);
}

TEST(Spec, SkipAllowed) {
  Supernet n = fmnist();
  std::vector<bool> want = {true, true, false, true, false, true};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(skip_allowed(n, i), want[i]) << "layer " << i;
  n.layers[0].out_channels = 24;  // 16 -> 24: layer 0 no longer, layer 1 now 24 -> 16
  EXPECT_FALSE(skip_allowed(n, 0));
  EXPECT_FALSE(skip_allowed(n, 1));
  EXPECT_THROW(skip_allowed(n, 6), SpecError);
}

TEST(Spec, OpCostHandComputed) {
  Supernet n = fmnist();
  // Layer 0 mb_k3_e1 at 28x28, 16 -> 16: no expand; dw 784*16*9; project 784*16*16.
  EXPECT_EQ(op_cost(n, 0, 0), (OpCost{112896 + 200704, (9 * 16 + 16) + (16 * 16 + 16)}));
  // Layer 2 mb_k3_e6, 16 -> 24 stride 2, mid 96: expand at 28x28, dw and project at 14x14.
  EXPECT_EQ(op_cost(n, 2, 3), (OpCost{784 * 96 * 16 + 196 * 96 * 9 + 196 * 24 * 96,
                                      (16 * 96 + 96) + (9 * 96 + 96) + (96 * 24 + 24)}));
  // Layer 1 skip costs nothing.
  EXPECT_EQ(op_cost(n, 1, 4), (OpCost{0, 0}));
  // A plain conv_k5, 24 -> 40 stride 2 at 14x14: 7*7*40*25*24 MACs.
  n.layers[4].choices.push_back(parse_op("conv_k5"));
  EXPECT_EQ(op_cost(n, 4, 5), (OpCost{49 * 40 * 25 * 24, 25 * 24 * 40 + 40}));
  EXPECT_EQ(stem_cost(n), (OpCost{784 * 16 * 9, 9 * 16 + 16}));
  // Head: 1x1 conv 40 -> 128 at 7x7, then FC 128 -> 10.
  EXPECT_EQ(head_cost(n), (OpCost{49 * 40 * 128 + 128 * 10, (40 * 128 + 128) + (128 * 10 + 10)}));
  EXPECT_THROW(op_cost(n, 6, 0), SpecError);
  EXPECT_THROW(op_cost(n, 0, 4), SpecError);
}

TEST(Spec, CandidateCostIsStemPlusOpsPlusHead) {
  Supernet n = fmnist();
  Candidate c = {1, 4, 0, 5, 2, 3};
  OpCost want = stem_cost(n);
  for (size_t i = 0; i < c.size(); ++i) want += op_cost(n, i, c[i]);
  want += head_cost(n);
  EXPECT_EQ(candidate_macs(n, c), want.macs);
  EXPECT_EQ(candidate_params(n, c), want.params);
  EXPECT_EQ(candidate_cost(n, c), want);
  // The cheapest candidate of fmnist-mb: all first choices with skips where offered.
  EXPECT_EQ(candidate_macs(n, {0, 4, 0, 5, 0, 5}), 2102792u);
  EXPECT_THROW(candidate_macs(n, {0, 0}), SpecError);
}

TEST(Spec, SearchSpaceSize) {
  EXPECT_DOUBLE_EQ(search_space_size(fmnist()), 4.0 * 5 * 5 * 6 * 5 * 6);
  Supernet big = fmnist();
  big.layers.assign(40, big.layers[3]);  // 6^40 does not fit 64 bits
  EXPECT_DOUBLE_EQ(search_space_size(big), std::pow(6.0, 40));
}

TEST(Spec, CandidateParseFormat) {
  Supernet n = fmnist();
  Candidate c = parse_candidate("2-0-1-3-4-5", n);
  EXPECT_EQ(c, (Candidate{2, 0, 1, 3, 4, 5}));
  EXPECT_EQ(format_candidate(c), "2-0-1-3-4-5");
  EXPECT_EQ(candidate_to_json(c), json::parse("[2,0,1,3,4,5]"));
  EXPECT_EQ(candidate_from_json(json::parse("[2,0,1,3,4,5]"), n), c);
  EXPECT_EQ(format_candidate({}), "");
}

TEST(Spec, CandidateOutOfRange) {
  Supernet n = fmnist();
  std::string msg = error_of([&] { parse_candidate("0-0-9-0-0-0", n); });
  EXPECT_NE(msg.find("candidate '0-0-9-0-0-0': layer 2 choice 9 out of range [0, 5)"),
            std::string::npos)
      << msg;
  msg = error_of([&] { parse_candidate("0-0-0-0-0-99999999999", n); });
  EXPECT_NE(msg.find("layer 5 choice 99999999999 out of range [0, 6)"), std::string::npos) << msg;
  msg = error_of([&] { validate_candidate(n, {0, -1, 0, 0, 0, 0}); });
  EXPECT_NE(msg.find("layer 1 choice -1 out of range [0, 5)"), std::string::npos) << msg;
}

TEST(Spec, CandidateWrongLength) {
  Supernet n = fmnist();
  std::string msg = error_of([&] { parse_candidate("0-0-0", n); });
  EXPECT_NE(msg.find("3 choices for 6 layers"), std::string::npos) << msg;
  msg = error_of([&] { parse_candidate("0-0-0-0-0-0-0", n); });
  EXPECT_NE(msg.find("7 choices for 6 layers"), std::string::npos) << msg;
  msg = error_of([&] { parse_candidate("", n); });
  EXPECT_NE(msg.find("candidate '': empty"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected 6 choice indices separated by '-', e.g. '0-0-0-0-0-0'"),
            std::string::npos)
      << msg;
}

TEST(Spec, CandidateNotInteger) {
  Supernet n = fmnist();
  struct Case {
    const char* text;
    const char* want;
  };
  for (Case c : {Case{"0-x-0-0-0-0", "layer 1: 'x' is not a non-negative integer"},
                 Case{"0-0--1-0-0", "layer 2: '' is not a non-negative integer"},
                 Case{"0-0-0-0-0-", "layer 5: '' is not a non-negative integer"},
                 Case{"0-1.5-0-0-0-0", "layer 1: '1.5' is not a non-negative integer"},
                 Case{"0-+1-0-0-0-0", "layer 1: '+1' is not a non-negative integer"},
                 Case{"0 -0-0-0-0-0", "layer 0: '0 ' is not a non-negative integer"}}) {
    std::string msg = error_of([&] { parse_candidate(c.text, n); });
    EXPECT_NE(msg.find(c.want), std::string::npos) << c.text << ": " << msg;
  }
  std::string msg = error_of([&] { candidate_from_json(json::parse("[0,\"1\",0,0,0,0]"), n); });
  EXPECT_NE(msg.find("layer 1: \"1\" is not an integer"), std::string::npos) << msg;
  msg = error_of([&] { candidate_from_json(json::parse("[0,1.0,0,0,0,0]"), n); });
  EXPECT_NE(msg.find("layer 1: 1.0 is not an integer"), std::string::npos) << msg;
  msg = error_of([&] { candidate_from_json(json::parse("\"0-0-0-0-0-0\""), n); });
  EXPECT_NE(msg.find("expected a JSON array of 6 integers"), std::string::npos) << msg;
}

TEST(Spec, CandidateRejectsForbiddenSkip) {
  // Specs offering such a skip are rejected, so build one without the validator.
  Supernet n = fmnist();
  n.layers[2].choices.push_back(parse_op("skip"));
  std::string msg = error_of([&] { parse_candidate("0-0-5-0-0-0", n); });
  EXPECT_NE(msg.find("layer 2 choice 5 is skip"), std::string::npos) << msg;
  EXPECT_NE(msg.find("layer 2: 16 -> 24, stride 2"), std::string::npos) << msg;
}

TEST(Spec, BuiltinSpaces) {
  auto names = builtin_space_names();
  ASSERT_FALSE(names.empty());
  for (const auto& name : names) EXPECT_EQ(builtin_space(name).name, name);
  std::string msg = error_of([] { builtin_space("imagenet-huge"); });
  EXPECT_NE(msg.find("unknown built-in search space 'imagenet-huge'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("fmnist-mb"), std::string::npos) << msg;
}

TEST(Spec, FileErrors) {
  std::string msg = error_of([] { load_supernet("/nonexistent/nasa/supernet.json"); });
  EXPECT_NE(msg.find("cannot open supernet file '/nonexistent/nasa/supernet.json'"),
            std::string::npos)
      << msg;
  auto path = std::filesystem::temp_directory_path() /
              ("nasa_unit_spec_bad_" +
               std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".json");
  std::ofstream(path) << "{\"name\": ";
  msg = error_of([&] { load_supernet(path); });
  std::filesystem::remove(path);
  EXPECT_NE(msg.find(path.string() + ": invalid JSON"), std::string::npos) << msg;
}

TEST(Spec, ValidateInCodeSpec) {
  Supernet n = fmnist();
  n.layers[1].choices[0] = {OpKind::MBConv, 4, 6};
  std::string msg = error_of([&] { validate(n); });
  EXPECT_NE(
      msg.find("supernet 'fmnist-mb': layers[1].choices[0]: invalid op {MBConv, k=4, expand=6}"),
      std::string::npos)
      << msg;
  n = fmnist();
  n.layers[0].choices[0] = {OpKind::Conv, 3, 6};
  msg = error_of([&] { validate(n); });
  EXPECT_NE(msg.find("layers[0].choices[0]: invalid op {Conv, k=3, expand=6}"), std::string::npos)
      << msg;
  EXPECT_THROW(save_supernet("/tmp/never_written.json", n), SpecError);
}

// One case per validation rule: a mutation of the valid fmnist-mb JSON and the message parts.
struct BadSpec {
  std::string name;
  std::function<void(json&)> mutate;
  std::vector<std::string> want;
};

void PrintTo(const BadSpec& b, std::ostream* os) { *os << b.name; }

class SpecValidation : public ::testing::TestWithParam<BadSpec> {};

TEST_P(SpecValidation, MessageNamesFieldAndExpectation) {
  json j = to_json(fmnist());
  GetParam().mutate(j);
  std::string msg = error_of([&] { parse_supernet(j, "supernet.json"); });
  EXPECT_EQ(msg.rfind("supernet.json: ", 0), 0u) << msg;
  for (const auto& w : GetParam().want) EXPECT_NE(msg.find(w), std::string::npos) << msg;
}

const std::vector<BadSpec> kBadSpecs = {
    {"UnknownOp",
     [](json& j) { j["layers"][3]["choices"][1] = "mb_k4_e6"; },
     {"supernet.json: layers[3].choices[1]: unknown op 'mb_k4_e6' (expected mb_k{3,5,7}_e{1,3,6}, "
      "conv_k{1,3,5,7} or skip)"}},
    {"OpNotString",
     [](json& j) { j["layers"][0]["choices"][2] = 3; },
     {"layers[0].choices[2]: 3 (expected a string)"}},
    {"BadStride",
     [](json& j) { j["layers"][2]["stride"] = 3; },
     {"supernet.json: layers[2].stride: 3 (expected 1 or 2)"}},
    {"SkipNotAllowed",
     [](json& j) { j["layers"][4]["choices"][2] = "skip"; },
     {"supernet.json: layers[4].choices[2]: skip needs stride 1 and equal channels (layer 4: 24 -> "
      "40, stride 2)"}},
    {"SkipAfterChannelChange",
     [](json& j) { j["layers"][0]["out_channels"] = 24; },
     {"layers[1].choices[4]: skip needs stride 1 and equal channels (layer 1: 24 -> 16, stride "
      "1)"}},
    {"DuplicateChoice",
     [](json& j) { j["layers"][3]["choices"][2] = "mb_k3_e3"; },
     {"layers[3].choices[2]: 'mb_k3_e3' duplicates choices[0]"}},
    {"UnknownTopLevelKey",
     [](json& j) { j["clases"] = 10; },
     {"supernet.json: clases: unknown key (expected one of: name, input, classes"}},
    {"UnknownLayerKey",
     [](json& j) { j["layers"][2]["strides"] = 2; },
     {"layers[2].strides: unknown key (expected one of: out_channels, stride, choices)"}},
    {"UnknownStemKey", [](json& j) { j["stem"]["kernel"] = 3; }, {"stem.kernel: unknown key"}},
    {"UnknownInputKey", [](json& j) { j["input"]["d"] = 3; }, {"input.d: unknown key"}},
    {"UnknownHeadKey", [](json& j) { j["head"]["dropout"] = 0.2; }, {"head.dropout: unknown key"}},
    {"MissingName", [](json& j) { j.erase("name"); }, {"name: missing required key"}},
    {"MissingInputH", [](json& j) { j["input"].erase("h"); }, {"input.h: missing required key"}},
    {"MissingClasses", [](json& j) { j.erase("classes"); }, {"classes: missing required key"}},
    {"MissingStem", [](json& j) { j.erase("stem"); }, {"stem: missing required key"}},
    {"MissingStemChannels",
     [](json& j) { j["stem"].erase("out_channels"); },
     {"stem.out_channels: missing required key (expected an integer)"}},
    {"MissingLayers", [](json& j) { j.erase("layers"); }, {"layers: missing required key"}},
    {"MissingLayerStride",
     [](json& j) { j["layers"][1].erase("stride"); },
     {"layers[1].stride: missing required key"}},
    {"MissingChoices",
     [](json& j) { j["layers"][5].erase("choices"); },
     {"layers[5].choices: missing required key"}},
    {"MissingHead", [](json& j) { j.erase("head"); }, {"head: missing required key"}},
    {"StrideIsString",
     [](json& j) { j["layers"][1]["stride"] = "2"; },
     {"layers[1].stride: \"2\" (expected an integer)"}},
    {"ClassesIsFloat",
     [](json& j) { j["classes"] = 10.0; },
     {"classes: 10.0 (expected an integer)"}},
    {"ClassesTooFew",
     [](json& j) { j["classes"] = 1; },
     {"classes: 1 (expected an integer in [2, "}},
    {"HugeInteger",
     [](json& j) { j["input"]["w"] = 1ull << 40; },
     {"input.w: 1099511627776 (expected an integer that fits in 32 bits)"}},
    {"ZeroChannels",
     [](json& j) { j["layers"][3]["out_channels"] = 0; },
     {"layers[3].out_channels: 0 (expected an integer in [1, 4096])"}},
    {"InputTooLarge",
     [](json& j) { j["input"]["h"] = 5000; },
     {"input.h: 5000 (expected an integer in [1, 4096])"}},
    {"HeadChannelsNegative",
     [](json& j) { j["head"]["channels"] = -1; },
     {"head.channels: -1 (expected an integer in [1, 4096])"}},
    {"EmptyName", [](json& j) { j["name"] = ""; }, {"name: empty (expected a non-empty string)"}},
    {"BadAct",
     [](json& j) { j["act"] = "gelu"; },
     {"act: 'gelu' (expected \"relu6\" or \"relu\")"}},
    {"BadStemKernel", [](json& j) { j["stem"]["k"] = 4; }, {"stem.k: 4 (expected 1, 3, 5 or 7)"}},
    {"BadStemStride",
     [](json& j) { j["stem"]["stride"] = 0; },
     {"stem.stride: 0 (expected 1 or 2)"}},
    {"EmptyLayers",
     [](json& j) { j["layers"] = json::array(); },
     {"layers: empty (expected at least one choice layer)"}},
    {"EmptyChoices",
     [](json& j) { j["layers"][2]["choices"] = json::array(); },
     {"layers[2].choices: empty (expected at least one op)"}},
    {"LayersNotArray",
     [](json& j) { j["layers"] = json::object(); },
     {"layers: {} (expected an array of choice layers)"}},
    {"LayerNotObject",
     [](json& j) { j["layers"][0] = 16; },
     {"layers[0]: 16 (expected a JSON object)"}},
    {"TopLevelNotObject",
     [](json& j) { j = json::array(); },
     {"(top level): [] (expected a JSON object)"}},
};

INSTANTIATE_TEST_SUITE_P(Spec, SpecValidation, ::testing::ValuesIn(kBadSpecs),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace nasa::spec
