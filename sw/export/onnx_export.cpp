#include "nasa/onnx_export.h"

#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <tuple>
#include <variant>
#include <vector>

#include "nasa/files.h"
#include "nasa/float_eval.h"
#include "nasa/quant.h"
#include "nasa/supernet_weights.h"

namespace nasa::onnx {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::ModelProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;

// A GraphProto under construction: initializers, nodes with unique output names.
class Graph {
 public:
  explicit Graph(GraphProto& g) : g_(g) {}

  template <typename T>
  std::string constant(const std::string& name, std::vector<int64_t> dims, std::span<const T> v,
                       int type) {
    TensorProto* t = g_.add_initializer();
    t->set_name(unique(name));
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    // raw_data is little-endian, as this host (x86-64, aarch64) stores them
    t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)));
    return t->name();
  }
  std::string f32(const std::string& name, std::vector<int64_t> dims, std::span<const float> v) {
    return constant(name, std::move(dims), v, TensorProto::FLOAT);
  }
  std::string i8(const std::string& name, std::vector<int64_t> dims, std::span<const int8_t> v) {
    return constant(name, std::move(dims), v, TensorProto::INT8);
  }
  std::string i32(const std::string& name, std::vector<int64_t> dims, std::span<const int32_t> v) {
    return constant(name, std::move(dims), v, TensorProto::INT32);
  }
  std::string scalar(const std::string& name, float v) {
    return f32(name, {}, std::span<const float>(&v, 1));
  }

  // One node; returns its output's name (`out` made unique).
  std::string node(const std::string& op, std::initializer_list<std::string> inputs,
                   const std::string& out, std::initializer_list<AttributeProto> attrs = {}) {
    NodeProto* n = g_.add_node();
    n->set_op_type(op);
    for (const auto& i : inputs) n->add_input(i);
    const std::string o = unique(out);
    n->add_output(o);
    n->set_name(o);
    for (const auto& a : attrs) *n->add_attribute() = a;
    return o;
  }

 private:
  std::string unique(const std::string& name) {
    const int k = used_[name]++;
    return k == 0 ? name : fmt::format("{}_{}", name, k);
  }
  GraphProto& g_;
  std::map<std::string, int> used_;
};

AttributeProto attr(const std::string& name, int64_t v) {
  AttributeProto a;
  a.set_name(name);
  a.set_type(AttributeProto::INT);
  a.set_i(v);
  return a;
}

AttributeProto attr(const std::string& name, std::initializer_list<int64_t> v) {
  AttributeProto a;
  a.set_name(name);
  a.set_type(AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return a;
}

// A tensor of the network: its float value `f` and, in the int8 network, the int8 codes `q` it
// is the DequantizeLinear of, at `scale`.
struct Value {
  std::string f, q;
  float scale = 0.0f;
};

// The engine's requant ratio M / 2^S (exact as a double; a 16-bit M is exact in float too).
double ratio(uint16_t m, uint8_t s) { return std::ldexp(static_cast<double>(m), -s); }

// The network of one candidate, float or QDQ. The QDQ network reproduces the accelerator's
// integer arithmetic (docs/engine.md "Numerics") up to rounding ties: every requantization the
// engine does with (M, S) is a DequantizeLinear/QuantizeLinear pair whose scales have exactly the
// ratio M / 2^S (the weight scale of a channel is M / 2^S x out / in, so the float convolution
// times 1 / out is acc x M / 2^S; an Add requantizes each input separately, as the engine does).
class Builder {
 public:
  Builder(Graph& g, const spec::Supernet& net, const weights::TensorFile& wf,
          const compile::QSupernet* q)
      : g_(g), net_(net), wf_(wf), q_(q) {}

  // x -> QuantizeLinear(scale) -> DequantizeLinear.
  Value qdq(const std::string& x, float scale, const std::string& name) {
    const std::string s = g_.scalar(name + ".scale", scale);
    const std::string qx = g_.node("QuantizeLinear", {x, s, zero(name)}, name + ".q");
    return {g_.node("DequantizeLinear", {qx, s, zero(name)}, name + ".dq"), qx, scale};
  }
  // The int8 codes of `v` read at another scale.
  std::string redq(const Value& v, double scale, const std::string& name) {
    return g_.node("DequantizeLinear",
                   {v.q, g_.scalar(name + ".scale", static_cast<float>(scale)), zero(name)},
                   name + ".dq");
  }

  // Conv (+ folded BatchNorm) + activation of the weights under `prefix`; `qc` its int8 layer.
  Value conv(const Value& x, const std::string& prefix, int stride, bool depthwise, hw::Act act,
             const compile::QConv* qc) {
    const compile::FoldedConv f = compile::fold_conv(wf_, prefix);
    const std::vector<int64_t> wdims = {f.cout, f.cin_g, f.k, f.k};
    const auto [w, b] = weights(prefix, f, wdims, x, qc);
    const int64_t p = (f.k - 1) / 2;
    const std::string y =
        g_.node("Conv", {x.f, w, b}, prefix + ".conv",
                {attr("kernel_shape", {f.k, f.k}), attr("pads", {p, p, p, p}),
                 attr("strides", {stride, stride}), attr("group", depthwise ? f.cout : 1)});
    return output(activation(y, act, prefix), qc, prefix + ".out");
  }

  // The classifier: Flatten + Gemm of head.fc.
  Value fc(const Value& x) {
    const compile::FoldedConv f = compile::fold_fc(wf_, net_);
    const compile::QConv* qc = q_ ? &q_->fc : nullptr;
    const auto [w, b] = weights("head.fc", f, {f.cout, f.cin_g}, x, qc);
    const std::string flat = g_.node("Flatten", {x.f}, "head.flatten", {attr("axis", 1)});
    return output(g_.node("Gemm", {flat, w, b}, "head.fc", {attr("transB", 1)}), qc, "logits");
  }

  // The residual add of the int8 network, as the engine computes it: each input's codes
  // requantized to the output scale on its own, without saturation (floor(v x M / 2^S + 1/2),
  // exact in float: 8-bit codes times a 16-bit M), summed, saturated to int8.
  Value add(const Value& a, const Value& b, const compile::QOp& qo, float out,
            const std::string& name) {
    const std::string ta = requant_wide(a, qo.add_a, name + ".a");
    const std::string tb = requant_wide(b, qo.add_b, name + ".b");
    const std::string sum = g_.node("Add", {ta, tb}, name);
    const std::string one = g_.scalar(name + ".unit", 1.0f);
    const std::string codes = g_.node("QuantizeLinear", {sum, one, zero(name)}, name + ".q");
    return {g_.node("DequantizeLinear", {codes, g_.scalar(name + ".scale", out), zero(name)},
                    name + ".dq"),
            codes, out};
  }

  // Global average pooling; in the int8 network the engine's requant(sum, M, S).
  Value gap(const Value& x, int pixels) {
    if (q_ == nullptr) return {g_.node("GlobalAveragePool", {x.f}, "head.gap"), "", 0.0f};
    const float out = q_->fc.in_scale;
    const std::string in = redq(x, out * pixels * ratio(q_->gap.m, q_->gap.s), "head.gap.in");
    return qdq(g_.node("GlobalAveragePool", {in}, "head.gap"), out, "head.gap.out");
  }

 private:
  std::string zero(const std::string& name) {
    const int8_t z = 0;
    return g_.i8(name + ".zero_point", {}, std::span<const int8_t>(&z, 1));
  }

  // requant_wide(v, M, S) of the engine on int8 codes: floor(v x M / 2^S + 1/2), in float.
  std::string requant_wide(const Value& v, const quant::Requant& r, const std::string& name) {
    const std::string x = redq(v, ratio(r.m, r.s), name);
    if (half_.empty()) half_ = g_.scalar("half", 0.5f);
    return g_.node("Floor", {g_.node("Add", {x, half_}, name + ".plus_half")}, name + ".requant");
  }

  Value output(const std::string& y, const compile::QConv* qc, const std::string& name) {
    return q_ == nullptr ? Value{y, "", 0.0f} : qdq(y, qc->out_scale, name);
  }

  // The float weights and bias; in the int8 network the accelerator's per-channel int8 weight
  // codes (quant::quantize_weights of the folded weights) and int32 bias codes (the layer's
  // records), dequantized with per-channel scales whose product with the input's scale is the
  // channel's M / 2^S x output scale.
  std::pair<std::string, std::string> weights(const std::string& prefix,
                                              const compile::FoldedConv& f,
                                              const std::vector<int64_t>& wdims, const Value& x,
                                              const compile::QConv* qc) {
    if (q_ == nullptr) {
      return {g_.f32(prefix + ".weight", wdims, f.w), g_.f32(prefix + ".bias", {f.cout}, f.b)};
    }
    const quant::QuantWeights qw = quant::quantize_weights(f.w, static_cast<size_t>(f.cout));
    if (qc->prm.size() != static_cast<size_t>(f.cout)) {
      throw std::logic_error(fmt::format("export: '{}' has {} channel records for {} channels",
                                         prefix, qc->prm.size(), f.cout));
    }
    std::vector<int32_t> bias(qc->prm.size());
    std::vector<float> w_scale(qc->prm.size()), b_scale(qc->prm.size());
    for (size_t c = 0; c < bias.size(); ++c) {
      const auto& r = qc->prm[c];
      bias[c] = r.bias;
      w_scale[c] = static_cast<float>(ratio(r.m, r.s) * qc->out_scale / x.scale);
      b_scale[c] = x.scale * w_scale[c];
    }
    const std::vector<int8_t> wz(static_cast<size_t>(f.cout), 0);
    const std::vector<int32_t> bz(static_cast<size_t>(f.cout), 0);
    const std::string w = g_.node("DequantizeLinear",
                                  {g_.i8(prefix + ".weight_int8", wdims, qw.w),
                                   g_.f32(prefix + ".weight_scale", {f.cout}, w_scale),
                                   g_.i8(prefix + ".weight_zero_point", {f.cout}, wz)},
                                  prefix + ".weight", {attr("axis", 0)});
    const std::string b = g_.node("DequantizeLinear",
                                  {g_.i32(prefix + ".bias_int32", {f.cout}, bias),
                                   g_.f32(prefix + ".bias_scale", {f.cout}, b_scale),
                                   g_.i32(prefix + ".bias_zero_point", {f.cout}, bz)},
                                  prefix + ".bias", {attr("axis", 0)});
    return {w, b};
  }

  std::string activation(const std::string& y, hw::Act act, const std::string& prefix) {
    switch (act) {
      case hw::Act::None:
        return y;
      case hw::Act::Relu:
        return g_.node("Relu", {y}, prefix + ".relu");
      case hw::Act::Relu6:
        // The engine clamps ReLU6 layers at code 127 (q6, compile's conv_desc), which is 6.0
        // only when the output scale is 6/127: a scale tied across a skip choice can be larger.
        // QuantizeLinear saturates at 127, so Relu is the engine's clamp.
        if (q_ != nullptr) return g_.node("Relu", {y}, prefix + ".relu6");
        if (relu6_min_.empty()) {
          relu6_min_ = g_.scalar("relu6.min", 0.0f);
          relu6_max_ = g_.scalar("relu6.max", 6.0f);
        }
        return g_.node("Clip", {y, relu6_min_, relu6_max_}, prefix + ".relu6");
    }
    throw std::logic_error("export: unknown activation");
  }

  Graph& g_;
  const spec::Supernet& net_;
  const weights::TensorFile& wf_;
  const compile::QSupernet* q_;
  std::string relu6_min_, relu6_max_, half_;
};

void add_tensor_info(::onnx::ValueInfoProto* v, const std::string& name,
                     std::initializer_list<std::variant<int64_t, std::string>> dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(TensorProto::FLOAT);
  for (const auto& d : dims) {
    auto* dim = tt->mutable_shape()->add_dim();
    if (std::holds_alternative<int64_t>(d)) {
      dim->set_dim_value(std::get<int64_t>(d));
    } else {
      dim->set_dim_param(std::get<std::string>(d));
    }
  }
}

}  // namespace

std::string export_model(const spec::Supernet& net, const weights::TensorFile& wf,
                         const spec::Candidate& cand, const ExportOptions& opt) {
  spec::validate_candidate(net, cand);
  weights::check_weights(net, wf, "weights");
  const compile::QSupernet* q = opt.int8;
  if (q != nullptr && !(q->net == net)) {
    throw std::invalid_argument(fmt::format(
        "export: the int8 supernet is '{}', the network exported '{}'", q->net.name, net.name));
  }
  const floatnet::Normalization norm = floatnet::read_normalization(wf, net.in_c, "weights");
  const hw::Act act = net.act == "relu" ? hw::Act::Relu : hw::Act::Relu6;

  ModelProto model;
  model.set_ir_version(::onnx::IR_VERSION);
  model.set_producer_name("nasa");
  model.set_producer_version(NASA_VERSION);
  model.set_model_version(1);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOpset);
  GraphProto* gp = model.mutable_graph();
  gp->set_name(fmt::format("{} {}", net.name, spec::format_candidate(cand)));
  add_tensor_info(gp->add_input(), kInputName,
                  {std::string("N"), int64_t{net.in_c}, int64_t{net.in_h}, int64_t{net.in_w}});
  add_tensor_info(gp->add_output(), kOutputName, {std::string("N"), int64_t{net.classes}});

  Graph g(*gp);
  Builder b(g, net, wf, q);
  Value x{kInputName, "", 0.0f};
  if (!norm.empty()) {
    const std::vector<int64_t> cdims = {1, net.in_c, 1, 1};
    x.f = g.node("Sub", {x.f, g.f32("input.mean", cdims, norm.mean)}, "input.centered");
    x.f = g.node("Div", {x.f, g.f32("input.std", cdims, norm.std)}, "input.normalized");
  }
  if (q != nullptr) x = b.qdq(x.f, q->in_scale, "input");
  x = b.conv(x, "stem", net.stem.stride, false, act, q ? &q->stem : nullptr);
  const auto shapes = spec::layer_shapes(net);
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const auto& layer = net.layers[i];
    const auto j = static_cast<size_t>(cand[i]);
    const spec::OpSpec& op = layer.choices[j];
    const std::string prefix = fmt::format("layers.{}.choices.{}", i, j);
    const compile::QOp* qo = q ? &q->ops[i][j] : nullptr;
    auto qconv = [&](size_t k) { return qo ? &qo->convs.at(k) : nullptr; };
    switch (op.kind) {
      case spec::OpKind::MBConv: {
        Value t = x;
        size_t k = 0;
        if (op.expand != 1) t = b.conv(t, prefix + ".expand", 1, false, act, qconv(k++));
        t = b.conv(t, prefix + ".dw", layer.stride, true, act, qconv(k++));
        t = b.conv(t, prefix + ".project", 1, false, hw::Act::None, qconv(k++));
        if (layer.stride == 1 && shapes[i].cin == shapes[i].cout) {
          t = q ? b.add(t, x, *qo, q->scale[i + 1], prefix + ".add")
                : Value{g.node("Add", {t.f, x.f}, prefix + ".add"), "", 0.0f};
        }
        x = t;
        break;
      }
      case spec::OpKind::Conv:
        x = b.conv(x, prefix, layer.stride, false, act, qconv(0));
        break;
      case spec::OpKind::Skip:
        break;
    }
  }
  x = b.conv(x, "head", 1, false, act, q ? &q->head_conv : nullptr);
  const auto head = compile::head_input(net);
  x = b.gap(x, head.h * head.w);
  x = b.fc(x);
  NodeProto* out = gp->add_node();
  out->set_op_type("Identity");
  out->add_input(x.f);
  out->add_output(kOutputName);
  out->set_name(kOutputName);
  if (q != nullptr) {
    // the int8 codes of the logits: what the accelerator writes, byte for byte
    NodeProto* codes = gp->add_node();
    codes->set_op_type("Identity");
    codes->add_input(x.q);
    codes->add_output(kInt8OutputName);
    codes->set_name(kInt8OutputName);
    auto* v = gp->add_output();
    add_tensor_info(v, kInt8OutputName, {std::string("N"), int64_t{net.classes}});
    v->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::INT8);
  }

  auto meta = [&](const std::string& k, const std::string& v) {
    auto* p = model.add_metadata_props();
    p->set_key(k);
    p->set_value(v);
  };
  meta("nasa.spec", spec::to_json(net).dump());
  meta("nasa.arch", spec::format_candidate(cand));
  meta("nasa.input_normalization",
       norm.empty() ? std::string("none") : floatnet::normalization_json(norm).dump());
  meta("nasa.input",
       fmt::format("'{}': float32 [N, {}, {}, {}] = pixel / 255{}", kInputName, net.in_c, net.in_h,
                   net.in_w, norm.empty() ? "" : "; the graph normalizes it"));
  if (q != nullptr) meta("nasa.logits_int8_scale", fmt::format("{:.9g}", q->logit_scale));
  meta("nasa.quantization",
       q == nullptr
           ? std::string("float32, BatchNorm folded")
           : std::string("int8 QDQ: the accelerator's per-channel weight codes, int32 bias "
                         "codes and per-tensor activation scales"));
  for (const auto& [k, v] : opt.metadata) meta(k, v);

  try {
    ::onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw std::logic_error(fmt::format("export: the ONNX checker rejects the model: {}", e.what()));
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    throw std::runtime_error("export: the ONNX model does not serialize (over 2 GiB?)");
  }
  return bytes;
}

void write_model(const std::filesystem::path& path, const std::string& bytes) {
  write_file_atomic(path, bytes);
}

}  // namespace nasa::onnx
