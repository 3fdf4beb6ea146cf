#include "nasa/float_eval.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "nasa/hw_spec.h"

namespace nasa::floatnet {
namespace {

const weights::Tensor& get(const weights::TensorFile& wf, const std::string& name) {
  return wf.at(name);
}

// Convolution (same padding, groups 1 or depthwise) + inference BatchNorm + optional activation.
Tensor conv_bn(const weights::TensorFile& wf, const std::string& prefix, const Tensor& in,
               int stride, bool depthwise, int act /* hw::Act */) {
  const auto& wt = get(wf, prefix + ".conv.weight");
  if (wt.shape.size() != 4) {
    throw std::runtime_error(fmt::format("tensor '{}.conv.weight' is not 4-D", prefix));
  }
  const auto w = wt.f32();
  const int cout = static_cast<int>(wt.shape[0]), cin_g = static_cast<int>(wt.shape[1]);
  const int k = static_cast<int>(wt.shape[2]);
  if ((depthwise && (cin_g != 1 || cout != in.c)) || (!depthwise && cin_g != in.c)) {
    throw std::runtime_error(
        fmt::format("tensor '{}.conv.weight' [{},{},{},{}] does not fit an "
                    "input of {} channels",
                    prefix, cout, cin_g, k, k, in.c));
  }
  const auto gamma = get(wf, prefix + ".bn.weight").f32();
  const auto beta = get(wf, prefix + ".bn.bias").f32();
  const auto mean = get(wf, prefix + ".bn.running_mean").f32();
  const auto var = get(wf, prefix + ".bn.running_var").f32();
  const int pad = (k - 1) / 2;
  Tensor out{cout, (in.h + stride - 1) / stride, (in.w + stride - 1) / stride, {}};
  out.v.assign(static_cast<size_t>(out.c) * out.h * out.w, 0.0f);
  for (int co = 0; co < cout; ++co) {
    const float g = gamma[co] / std::sqrt(var[co] + 1e-5f);
    const float b = beta[co] - mean[co] * g;
    for (int oy = 0; oy < out.h; ++oy) {
      for (int ox = 0; ox < out.w; ++ox) {
        double acc = 0;
        for (int ci = 0; ci < cin_g; ++ci) {
          const int c_in = depthwise ? co : ci;
          for (int ky = 0; ky < k; ++ky) {
            const int iy = oy * stride - pad + ky;
            if (iy < 0 || iy >= in.h) continue;
            for (int kx = 0; kx < k; ++kx) {
              const int ix = ox * stride - pad + kx;
              if (ix < 0 || ix >= in.w) continue;
              acc += double{in.at(c_in, iy, ix)} *
                     w[((static_cast<size_t>(co) * cin_g + ci) * k + ky) * k + kx];
            }
          }
        }
        float y = static_cast<float>(acc) * g + b;
        if (act != static_cast<int>(hw::Act::None)) y = std::max(y, 0.0f);
        if (act == static_cast<int>(hw::Act::Relu6)) y = std::min(y, 6.0f);
        out.at(co, oy, ox) = y;
      }
    }
  }
  return out;
}

}  // namespace

float Normalization::max_abs() const {
  if (empty()) return 1.0f;
  float m = 0.0f;
  for (size_t c = 0; c < mean.size(); ++c) {
    m = std::max(
        {m, std::fabs(apply(0, static_cast<int>(c))), std::fabs(apply(255, static_cast<int>(c)))});
  }
  return m;
}

Normalization channel_normalization(const data::Dataset& d, size_t from, size_t to) {
  if (from >= to || to > d.size()) {
    throw std::out_of_range(fmt::format(
        "normalization: images [{}, {}) requested from a dataset of {}", from, to, d.size()));
  }
  const size_t ch = d.channels, px = d.rows * d.cols;
  std::vector<uint64_t> sum(ch, 0), sq(ch, 0);
  for (size_t i = from; i < to; ++i) {
    const auto img = d.image(i);
    for (size_t p = 0; p < px; ++p) {
      for (size_t c = 0; c < ch; ++c) {
        const uint64_t v = img[p * ch + c];
        sum[c] += v;
        sq[c] += v * v;
      }
    }
  }
  Normalization n;
  const double count = static_cast<double>(to - from) * static_cast<double>(px);
  for (size_t c = 0; c < ch; ++c) {
    const double mean = static_cast<double>(sum[c]) / count;
    const double var = std::max(0.0, static_cast<double>(sq[c]) / count - mean * mean);
    const double sd = std::sqrt(var) / 255.0;
    n.mean.push_back(static_cast<float>(mean / 255.0));
    // under one pixel level of spread the channel is constant: dividing by it would make the
    // (per-tensor) int8 input scale useless for every other channel
    n.std.push_back(sd >= 1.0 / 255 ? static_cast<float>(sd) : 1.0f);
  }
  return n;
}

nlohmann::json normalization_json(const Normalization& n) {
  return n.empty() ? nlohmann::json(nullptr) : nlohmann::json{{"mean", n.mean}, {"std", n.std}};
}

void write_normalization(weights::TensorFile& wf, const Normalization& n) {
  if (n.empty()) {
    wf.metadata.erase(kNormalizationKey);
    return;
  }
  wf.metadata[kNormalizationKey] = normalization_json(n).dump();
}

Normalization read_normalization(const weights::TensorFile& wf, int channels,
                                 std::string_view source) {
  const auto it = wf.metadata.find(kNormalizationKey);
  if (it == wf.metadata.end()) return {};
  auto bad = [&](const std::string& what) {
    return std::runtime_error(
        fmt::format("{}: metadata '{}' {} (expected {{\"mean\": [{} numbers], "
                    "\"std\": [{} positive numbers]}})",
                    source, kNormalizationKey, what, channels, channels));
  };
  const auto j = nlohmann::json::parse(it->second, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw bad("is not a JSON object");
  Normalization n;
  for (const char* key : {"mean", "std"}) {
    const auto v = j.find(key);
    if (v == j.end() || !v->is_array() || v->size() != static_cast<size_t>(channels)) {
      throw bad(fmt::format("has no '{}' list of {} entries", key, channels));
    }
    auto& out = std::string_view(key) == "mean" ? n.mean : n.std;
    for (const auto& x : *v) {
      if (!x.is_number() || !std::isfinite(x.get<float>())) {
        throw bad(fmt::format("'{}' holds {}", key, x.dump()));
      }
      out.push_back(x.get<float>());
    }
  }
  for (float s : n.std) {
    if (!(s >= 1e-6f)) throw bad(fmt::format("'std' holds {} (at least 1e-6)", s));
  }
  return n;
}

Tensor image_from_u8(const uint8_t* pixels, int h, int w, int c, const Normalization& n) {
  if (!n.empty() && n.mean.size() != static_cast<size_t>(c)) {
    throw std::invalid_argument(
        fmt::format("image of {} channels, normalization of {}", c, n.mean.size()));
  }
  Tensor t{c, h, w, std::vector<float>(static_cast<size_t>(c) * h * w)};
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int ci = 0; ci < c; ++ci) {
        t.at(ci, y, x) = n.apply(pixels[(static_cast<size_t>(y) * w + x) * c + ci], ci);
      }
    }
  }
  return t;
}

std::vector<Tensor> dataset_images(const data::Dataset& d, size_t from, size_t to,
                                   const Normalization& n) {
  if (from > to || to > d.size()) {
    throw std::out_of_range(
        fmt::format("images [{}, {}) requested from a dataset of {}", from, to, d.size()));
  }
  std::vector<Tensor> out;
  out.reserve(to - from);
  for (size_t i = from; i < to; ++i) {
    out.push_back(image_from_u8(d.image(i).data(), static_cast<int>(d.rows),
                                static_cast<int>(d.cols), static_cast<int>(d.channels), n));
  }
  return out;
}

std::vector<float> forward(const spec::Supernet& net, const weights::TensorFile& wf,
                           const spec::Candidate& cand, const Tensor& image,
                           const Observer& observe) {
  spec::validate_candidate(net, cand);
  if (image.c != net.in_c || image.h != net.in_h || image.w != net.in_w) {
    throw std::invalid_argument(
        fmt::format("image is {}x{}x{} (CxHxW), supernet '{}' expects {}x{}x{}", image.c, image.h,
                    image.w, net.name, net.in_c, net.in_h, net.in_w));
  }
  const int act = static_cast<int>(net.act == "relu" ? hw::Act::Relu : hw::Act::Relu6);
  auto emit = [&](std::string_view name, const Tensor& t) {
    if (observe) observe(name, t);
  };
  Tensor x = conv_bn(wf, "stem", image, net.stem.stride, false, act);
  emit("stem", x);
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const auto& layer = net.layers[i];
    const spec::OpSpec& op = layer.choices[static_cast<size_t>(cand[i])];
    const std::string prefix = fmt::format("layers.{}.choices.{}", i, cand[i]);
    switch (op.kind) {
      case spec::OpKind::MBConv: {
        Tensor t = x;
        if (op.expand != 1) {
          t = conv_bn(wf, prefix + ".expand", t, 1, false, act);
          emit(prefix + ".expand", t);
        }
        t = conv_bn(wf, prefix + ".dw", t, layer.stride, true, act);
        emit(prefix + ".dw", t);
        t = conv_bn(wf, prefix + ".project", t, 1, false, 0);
        emit(prefix + ".project", t);
        if (layer.stride == 1 && x.c == t.c) {
          for (size_t j = 0; j < t.v.size(); ++j) t.v[j] += x.v[j];
        }
        x = std::move(t);
        break;
      }
      case spec::OpKind::Conv:
        x = conv_bn(wf, prefix, x, layer.stride, false, act);
        break;
      case spec::OpKind::Skip:
        break;
    }
    emit(fmt::format("layers.{}.out", i), x);
  }
  x = conv_bn(wf, "head", x, 1, false, act);
  emit("head.conv", x);
  Tensor gap{x.c, 1, 1, std::vector<float>(static_cast<size_t>(x.c))};
  for (int c = 0; c < x.c; ++c) {
    double s = 0;
    for (int p = 0; p < x.h * x.w; ++p) s += x.v[static_cast<size_t>(c) * x.h * x.w + p];
    gap.v[static_cast<size_t>(c)] = static_cast<float>(s / (x.h * x.w));
  }
  emit("head.gap", gap);
  const auto& fw = get(wf, "head.fc.weight");
  const auto fb = get(wf, "head.fc.bias").f32();
  const auto fwv = fw.f32();
  std::vector<float> logits(static_cast<size_t>(net.classes));
  for (int o = 0; o < net.classes; ++o) {
    double s = fb[static_cast<size_t>(o)];
    for (int c = 0; c < gap.c; ++c) {
      s += double{gap.v[static_cast<size_t>(c)]} * fwv[static_cast<size_t>(o) * gap.c + c];
    }
    logits[static_cast<size_t>(o)] = static_cast<float>(s);
  }
  Tensor lt{net.classes, 1, 1, logits};
  emit("logits", lt);
  return logits;
}

}  // namespace nasa::floatnet
