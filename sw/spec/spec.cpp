// Supernet specification: validation, JSON I/O, candidates, shapes and costs (docs/supernet.md).
#include "nasa/spec.h"

#include "nasa/files.h"
#include "nasa/json_preview.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>

namespace nasa::spec {
namespace {

using nlohmann::json;

constexpr std::string_view kOpExpected = "expected mb_k{3,5,7}_e{1,3,6}, conv_k{1,3,5,7} or skip";

bool valid_mb_k(int k) { return k == 3 || k == 5 || k == 7; }
bool valid_mb_e(int e) { return e == 1 || e == 3 || e == 6; }
bool valid_conv_k(int k) { return k == 1 || k == 3 || k == 5 || k == 7; }

int ceil_div(int a, int b) { return (a + b - 1) / b; }

std::string kind_name(OpKind k) {
  switch (k) {
    case OpKind::MBConv:
      return "MBConv";
    case OpKind::Conv:
      return "Conv";
    case OpKind::Skip:
      return "Skip";
  }
  return "OpKind(" + std::to_string(static_cast<int>(k)) + ")";
}

// Empty when the op is one of the names parse_op accepts, else why not.
std::string op_problem(const OpSpec& op) {
  switch (op.kind) {
    case OpKind::MBConv:
      if (valid_mb_k(op.k) && valid_mb_e(op.expand)) return {};
      break;
    case OpKind::Conv:
      if (valid_conv_k(op.k) && op.expand == 1) return {};
      break;
    case OpKind::Skip:
      return {};
  }
  return fmt::format("invalid op {{{}, k={}, expand={}}} ({})", kind_name(op.kind), op.k, op.expand,
                     kOpExpected);
}

[[noreturn]] void fail(std::string_view source, std::string_view path, std::string_view msg) {
  if (path.empty()) throw SpecError(fmt::format("{}: {}", source, msg));
  throw SpecError(fmt::format("{}: {}: {}", source, path, msg));
}

std::string shape_text(const LayerShape& s, size_t layer) {
  return fmt::format("layer {}: {} -> {}, stride {}", layer, s.cin, s.cout, s.stride);
}

void check_range(std::string_view src, std::string_view path, int v, int lo, int hi) {
  if (v < lo || v > hi)
    fail(src, path, fmt::format("{} (expected an integer in [{}, {}])", v, lo, hi));
}

void check_stride(std::string_view src, std::string_view path, int v) {
  if (v != 1 && v != 2) fail(src, path, fmt::format("{} (expected 1 or 2)", v));
}

// --- JSON reading: structure and types; semantic checks are left to validate(). ---

class Reader {
 public:
  explicit Reader(std::string_view source) : src_(source) {}

  // Checks that `j` is an object with only the `allowed` keys.
  void object(const json& j, const std::string& path,
              std::initializer_list<std::string_view> allowed) const {
    if (!j.is_object()) {
      fail(src_, path.empty() ? "(top level)" : path,
           fmt::format("{} (expected a JSON object)", short_dump(j)));
    }
    for (const auto& [key, value] : j.items()) {
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        fail(src_, join(path, key),
             fmt::format("unknown key (expected one of: {})", fmt::join(allowed, ", ")));
      }
    }
  }

  const json& required(const json& j, const std::string& path, std::string_view key,
                       std::string_view expected) const {
    auto it = j.find(key);
    if (it == j.end()) {
      fail(src_, join(path, key), fmt::format("missing required key (expected {})", expected));
    }
    return *it;
  }

  int integer(const json& v, const std::string& path) const {
    if (!v.is_number_integer())
      fail(src_, path, fmt::format("{} (expected an integer)", short_dump(v)));
    if (v.is_number_unsigned()) {
      auto u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
        fail(src_, path, fmt::format("{} (expected an integer that fits in 32 bits)", u));
      }
      return static_cast<int>(u);
    }
    auto s = v.get<int64_t>();
    if (s < std::numeric_limits<int>::min() || s > std::numeric_limits<int>::max()) {
      fail(src_, path, fmt::format("{} (expected an integer that fits in 32 bits)", s));
    }
    return static_cast<int>(s);
  }

  int req_int(const json& j, const std::string& path, std::string_view key) const {
    return integer(required(j, path, key, "an integer"), join(path, key));
  }

  int opt_int(const json& j, const std::string& path, std::string_view key, int dflt) const {
    auto it = j.find(key);
    return it == j.end() ? dflt : integer(*it, join(path, key));
  }

  std::string string(const json& v, const std::string& path) const {
    if (!v.is_string()) fail(src_, path, fmt::format("{} (expected a string)", short_dump(v)));
    return v.get<std::string>();
  }

  const json& array(const json& v, const std::string& path, std::string_view what) const {
    if (!v.is_array())
      fail(src_, path, fmt::format("{} (expected an array of {})", short_dump(v), what));
    return v;
  }

  OpSpec op(const json& v, const std::string& path) const {
    std::string name = string(v, path);
    try {
      return parse_op(name);
    } catch (const SpecError& e) {
      fail(src_, path, e.what());
    }
  }

  static std::string join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }

  static std::string index(const std::string& path, size_t i) {
    return fmt::format("{}[{}]", path, i);
  }

 private:
  static std::string short_dump(const json& v) { return json_preview(v, 40); }

  std::string_view src_;
};

template <class J>
J build_json(const Supernet& net) {
  J j;
  j["name"] = net.name;
  j["input"] = J{{"h", net.in_h}, {"w", net.in_w}, {"c", net.in_c}};
  j["classes"] = net.classes;
  j["act"] = net.act;
  j["stem"] =
      J{{"out_channels", net.stem.out_channels}, {"k", net.stem.k}, {"stride", net.stem.stride}};
  J layers = J::array();
  for (const auto& l : net.layers) {
    J choices = J::array();
    for (const auto& op : l.choices) choices.push_back(op_name(op));
    layers.push_back(
        J{{"out_channels", l.out_channels}, {"stride", l.stride}, {"choices", choices}});
  }
  j["layers"] = std::move(layers);
  j["head"] = J{{"channels", net.head.channels}};
  return j;
}

uint64_t u(int v) { return static_cast<uint64_t>(v); }

// kxk conv with `groups` == 1 or depthwise, plus its folded bias.
OpCost conv_cost(int ho, int wo, int cin_per_group, int cout, int k) {
  return {u(ho) * u(wo) * u(cout) * u(k) * u(k) * u(cin_per_group),
          u(k) * u(k) * u(cin_per_group) * u(cout) + u(cout)};
}

// `op` on a layer of shape `s` (op_cost, given the shape).
OpCost cost_on(const OpSpec& op, const LayerShape& s) {
  int ho = ceil_div(s.h, s.stride), wo = ceil_div(s.w, s.stride);
  OpCost cost;
  switch (op.kind) {
    case OpKind::Skip:
      break;
    case OpKind::Conv:
      cost = conv_cost(ho, wo, s.cin, s.cout, op.k);
      break;
    case OpKind::MBConv: {
      int mid = s.cin * op.expand;
      if (op.expand != 1) cost += conv_cost(s.h, s.w, s.cin, mid, 1);
      cost += conv_cost(ho, wo, 1, mid, op.k);  // depthwise: one input channel per group
      cost += conv_cost(ho, wo, mid, s.cout, 1);
      break;
    }
  }
  return cost;
}

}  // namespace

bool operator==(const OpSpec& a, const OpSpec& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == OpKind::Skip) return true;
  return a.k == b.k && a.expand == b.expand;
}

std::string op_name(const OpSpec& op) {
  switch (op.kind) {
    case OpKind::MBConv:
      return fmt::format("mb_k{}_e{}", op.k, op.expand);
    case OpKind::Conv:
      return fmt::format("conv_k{}", op.k);
    case OpKind::Skip:
      return "skip";
  }
  return kind_name(op.kind);
}

OpSpec parse_op(std::string_view name) {
  auto bad = [&]() -> SpecError {
    return SpecError(fmt::format("unknown op '{}' ({})", name, kOpExpected));
  };
  if (name == "skip") return {OpKind::Skip, 3, 1};
  // Names are short and fixed, so matching the canonical spelling rejects "mb_k03_e6" etc.
  for (int k : {3, 5, 7}) {
    for (int e : {1, 3, 6}) {
      if (name == fmt::format("mb_k{}_e{}", k, e)) return {OpKind::MBConv, k, e};
    }
  }
  for (int k : {1, 3, 5, 7}) {
    if (name == fmt::format("conv_k{}", k)) return {OpKind::Conv, k, 1};
  }
  throw bad();
}

void validate(const Supernet& net, std::string_view source) {
  std::string src = source.empty() ? fmt::format("supernet '{}'", net.name) : std::string(source);
  if (net.name.empty()) fail(src, "name", "empty (expected a non-empty string)");
  check_range(src, "input.h", net.in_h, 1, kMaxDim);
  check_range(src, "input.w", net.in_w, 1, kMaxDim);
  check_range(src, "input.c", net.in_c, 1, kMaxDim);
  check_range(src, "classes", net.classes, 2, kMaxClasses);
  if (net.act != "relu6" && net.act != "relu") {
    fail(src, "act", fmt::format("'{}' (expected \"relu6\" or \"relu\")", net.act));
  }
  check_range(src, "stem.out_channels", net.stem.out_channels, 1, kMaxDim);
  if (!valid_conv_k(net.stem.k))
    fail(src, "stem.k", fmt::format("{} (expected 1, 3, 5 or 7)", net.stem.k));
  check_stride(src, "stem.stride", net.stem.stride);
  if (net.layers.empty()) fail(src, "layers", "empty (expected at least one choice layer)");
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const auto& l = net.layers[i];
    std::string p = fmt::format("layers[{}]", i);
    check_range(src, p + ".out_channels", l.out_channels, 1, kMaxDim);
    check_stride(src, p + ".stride", l.stride);
    if (l.choices.empty()) fail(src, p + ".choices", "empty (expected at least one op)");
  }
  check_range(src, "head.channels", net.head.channels, 1, kMaxDim);

  // Shapes are well defined only now that every size and stride is.
  auto shapes = layer_shapes(net);
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const auto& choices = net.layers[i].choices;
    for (size_t c = 0; c < choices.size(); ++c) {
      std::string p = fmt::format("layers[{}].choices[{}]", i, c);
      if (auto why = op_problem(choices[c]); !why.empty()) fail(src, p, why);
      if (choices[c].kind == OpKind::Skip && !skip_allowed(net, i)) {
        fail(src, p,
             fmt::format("skip needs stride 1 and equal channels ({})", shape_text(shapes[i], i)));
      }
      for (size_t d = 0; d < c; ++d) {
        if (choices[d] == choices[c]) {
          fail(src, p,
               fmt::format("'{}' duplicates choices[{}] (expected distinct ops per layer)",
                           op_name(choices[c]), d));
        }
      }
    }
  }

  // The limits keep every op's cost below 2^63, but not a sum over many layers: the largest
  // candidate (the costliest op of every layer) must stay below 2^63 too, or candidate costs
  // wrap (found by fuzzing, docs/reliability.md).
  constexpr uint64_t kMaxCost = uint64_t{1} << 63;
  auto add = [&](uint64_t& sum, uint64_t v) { sum = v >= kMaxCost - sum ? kMaxCost : sum + v; };
  uint64_t macs = 0, params = 0;
  for (const OpCost& c : {stem_cost(net), head_cost(net)}) {
    add(macs, c.macs);
    add(params, c.params);
  }
  for (size_t i = 0; i < net.layers.size(); ++i) {
    uint64_t op_macs = 0, op_params = 0;
    for (const OpSpec& op : net.layers[i].choices) {
      const OpCost c = cost_on(op, shapes[i]);
      op_macs = std::max(op_macs, c.macs);
      op_params = std::max(op_params, c.params);
    }
    add(macs, op_macs);
    add(params, op_params);
  }
  if (macs == kMaxCost || params == kMaxCost) {
    fail(src, "layers",
         fmt::format("the largest candidate of these {} layers costs 2^63 or more {} (expected "
                     "fewer or smaller layers: costs are 64-bit)",
                     net.layers.size(), macs == kMaxCost ? "MACs" : "parameters"));
  }
}

LayerShape stem_output(const Supernet& net) {
  return {ceil_div(net.in_h, net.stem.stride), ceil_div(net.in_w, net.stem.stride),
          net.stem.out_channels, net.stem.out_channels, 1};
}

std::vector<LayerShape> layer_shapes(const Supernet& net) {
  std::vector<LayerShape> out;
  out.reserve(net.layers.size());
  LayerShape cur = stem_output(net);
  int h = cur.h, w = cur.w, c = net.stem.out_channels;
  for (const auto& l : net.layers) {
    out.push_back({h, w, c, l.out_channels, l.stride});
    h = ceil_div(h, l.stride);
    w = ceil_div(w, l.stride);
    c = l.out_channels;
  }
  return out;
}

bool skip_allowed(const Supernet& net, size_t layer) {
  if (layer >= net.layers.size()) {
    throw SpecError(
        fmt::format("skip_allowed: layer {} out of range [0, {})", layer, net.layers.size()));
  }
  int cin = layer == 0 ? net.stem.out_channels : net.layers[layer - 1].out_channels;
  return net.layers[layer].stride == 1 && cin == net.layers[layer].out_channels;
}

OpCost op_cost(const Supernet& net, size_t layer, size_t choice) {
  if (layer >= net.layers.size()) {
    throw SpecError(
        fmt::format("op_cost: layer {} out of range [0, {})", layer, net.layers.size()));
  }
  const auto& choices = net.layers[layer].choices;
  if (choice >= choices.size()) {
    throw SpecError(fmt::format("op_cost: layer {} choice {} out of range [0, {})", layer, choice,
                                choices.size()));
  }
  return cost_on(choices[choice], layer_shapes(net)[layer]);
}

OpCost stem_cost(const Supernet& net) {
  LayerShape s = stem_output(net);
  return conv_cost(s.h, s.w, net.in_c, net.stem.out_channels, net.stem.k);
}

OpCost head_cost(const Supernet& net) {
  LayerShape last = stem_output(net);
  if (!net.layers.empty()) {
    LayerShape l = layer_shapes(net).back();
    last = {ceil_div(l.h, l.stride), ceil_div(l.w, l.stride), l.cout, l.cout, 1};
  }
  OpCost cost = conv_cost(last.h, last.w, last.cout, net.head.channels, 1);
  cost += conv_cost(1, 1, net.head.channels, net.classes, 1);  // FC after global average pool
  return cost;
}

double search_space_size(const Supernet& net) {
  double n = 1.0;
  for (const auto& l : net.layers) n *= static_cast<double>(l.choices.size());
  return n;
}

std::string format_candidate(const Candidate& c) { return fmt::format("{}", fmt::join(c, "-")); }

void validate_candidate(const Supernet& net, const Candidate& c) {
  std::string src = fmt::format("candidate '{}'", format_candidate(c));
  if (c.size() != net.layers.size()) {
    throw SpecError(fmt::format("{}: {} choices for {} layers of supernet '{}' (expected {})", src,
                                c.size(), net.layers.size(), net.name, net.layers.size()));
  }
  for (size_t i = 0; i < c.size(); ++i) {
    const auto& choices = net.layers[i].choices;
    if (c[i] < 0 || static_cast<size_t>(c[i]) >= choices.size()) {
      throw SpecError(
          fmt::format("{}: layer {} choice {} out of range [0, {})", src, i, c[i], choices.size()));
    }
    if (choices[c[i]].kind == OpKind::Skip && !skip_allowed(net, i)) {
      throw SpecError(
          fmt::format("{}: layer {} choice {} is skip, which needs stride 1 and equal "
                      "channels ({})",
                      src, i, c[i], shape_text(layer_shapes(net)[i], i)));
    }
  }
}

Candidate parse_candidate(std::string_view text, const Supernet& net) {
  auto expected = [&] {
    return fmt::format("expected {} choice indices separated by '-', e.g. '{}'", net.layers.size(),
                       format_candidate(Candidate(net.layers.size(), 0)));
  };
  if (text.empty()) throw SpecError(fmt::format("candidate '': empty ({})", expected()));
  Candidate c;
  size_t pos = 0;
  while (true) {
    size_t dash = text.find('-', pos);
    std::string_view part =
        text.substr(pos, dash == std::string_view::npos ? text.npos : dash - pos);
    size_t layer = c.size();
    int v = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec == std::errc::result_out_of_range) {
      size_t k = layer < net.layers.size() ? net.layers[layer].choices.size() : 0;
      throw SpecError(fmt::format("candidate '{}': layer {} choice {} out of range [0, {})", text,
                                  layer, part, k));
    }
    if (part.empty() || ec != std::errc() || end != part.data() + part.size()) {
      throw SpecError(
          fmt::format("candidate '{}': layer {}: '{}' is not a non-negative integer ({})", text,
                      layer, part, expected()));
    }
    c.push_back(v);
    if (dash == std::string_view::npos) break;
    pos = dash + 1;
  }
  validate_candidate(net, c);
  return c;
}

Candidate candidate_from_json(const json& j, const Supernet& net) {
  if (!j.is_array()) {
    throw SpecError(fmt::format("candidate {}: expected a JSON array of {} integers",
                                json_preview(j, 80), net.layers.size()));
  }
  Candidate c;
  for (size_t i = 0; i < j.size(); ++i) {
    const json& v = j[i];
    // (an unsigned above INT64_MAX would read as a negative int64)
    const bool fits = v.is_number_unsigned()
                          ? v.get<uint64_t>() <= uint64_t{std::numeric_limits<int>::max()}
                          : v.is_number_integer() &&
                                v.get<int64_t>() >= std::numeric_limits<int>::min() &&
                                v.get<int64_t>() <= std::numeric_limits<int>::max();
    if (!fits) {
      throw SpecError(fmt::format("candidate {}: layer {}: {} is not an integer choice index",
                                  json_preview(j, 80), i, json_preview(v, 40)));
    }
    c.push_back(v.get<int>());
  }
  validate_candidate(net, c);
  return c;
}

json candidate_to_json(const Candidate& c) { return json(c); }

OpCost candidate_cost(const Supernet& net, const Candidate& c) {
  validate_candidate(net, c);
  OpCost cost = stem_cost(net);
  for (size_t i = 0; i < c.size(); ++i) cost += op_cost(net, i, static_cast<size_t>(c[i]));
  cost += head_cost(net);
  return cost;
}

uint64_t candidate_macs(const Supernet& net, const Candidate& c) {
  return candidate_cost(net, c).macs;
}

uint64_t candidate_params(const Supernet& net, const Candidate& c) {
  return candidate_cost(net, c).params;
}

Supernet parse_supernet(const json& j, std::string_view source_name) {
  std::string src = source_name.empty() ? "supernet" : std::string(source_name);
  Reader r(src);
  r.object(j, "", {"name", "input", "classes", "act", "stem", "layers", "head"});
  Supernet net;
  net.name = r.string(r.required(j, "", "name", "a string"), "name");

  const json& in = r.required(j, "", "input", "an object {\"h\", \"w\", \"c\"}");
  r.object(in, "input", {"h", "w", "c"});
  net.in_h = r.req_int(in, "input", "h");
  net.in_w = r.req_int(in, "input", "w");
  net.in_c = r.req_int(in, "input", "c");

  net.classes = r.req_int(j, "", "classes");
  if (auto it = j.find("act"); it != j.end()) net.act = r.string(*it, "act");

  const json& stem = r.required(j, "", "stem", "an object {\"out_channels\", \"k\", \"stride\"}");
  r.object(stem, "stem", {"out_channels", "k", "stride"});
  net.stem.out_channels = r.req_int(stem, "stem", "out_channels");
  net.stem.k = r.opt_int(stem, "stem", "k", net.stem.k);
  net.stem.stride = r.opt_int(stem, "stem", "stride", net.stem.stride);

  const json& layers =
      r.array(r.required(j, "", "layers", "an array of choice layers"), "layers", "choice layers");
  for (size_t i = 0; i < layers.size(); ++i) {
    std::string p = Reader::index("layers", i);
    const json& lj = layers[i];
    r.object(lj, p, {"out_channels", "stride", "choices"});
    ChoiceLayer l;
    l.out_channels = r.req_int(lj, p, "out_channels");
    l.stride = r.req_int(lj, p, "stride");
    std::string cp = p + ".choices";
    const json& cj = r.array(r.required(lj, p, "choices", "an array of op names"), cp, "op names");
    for (size_t c = 0; c < cj.size(); ++c) l.choices.push_back(r.op(cj[c], Reader::index(cp, c)));
    net.layers.push_back(std::move(l));
  }

  const json& head = r.required(j, "", "head", "an object {\"channels\"}");
  r.object(head, "head", {"channels"});
  net.head.channels = r.req_int(head, "head", "channels");

  validate(net, src);
  return net;
}

Supernet parse_supernet_text(std::string_view text, std::string_view source_name) {
  const std::string_view src = source_name.empty() ? "supernet" : source_name;
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e400
    throw SpecError(fmt::format("{}: invalid JSON: {}", src, e.what()));
  }
  return parse_supernet(j, src);
}

Supernet load_supernet(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw SpecError(
        fmt::format("cannot open supernet file '{}': {}", path.string(), std::strerror(errno)));
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_supernet_text(text, path.string());
}

json to_json(const Supernet& net) { return build_json<json>(net); }

void save_supernet(const std::filesystem::path& path, const Supernet& net) {
  validate(net);
  // Field order as documented, which nlohmann::json (sorted keys) would not keep.
  const std::string text = build_json<nlohmann::ordered_json>(net).dump(2) + "\n";
  try {
    write_file_atomic(path, text);
  } catch (const std::runtime_error& e) {
    throw SpecError(fmt::format("supernet file: {}", e.what()));
  }
}

}  // namespace nasa::spec
