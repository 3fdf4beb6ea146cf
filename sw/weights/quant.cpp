#include "nasa/quant.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nasa::quant {
namespace {

constexpr int kMaxShift = 47;
constexpr int64_t kMaxM = 65535;

void check_scale(float scale, std::string_view what) {
  if (!(scale > 0.0f) || !std::isfinite(scale)) {
    throw std::invalid_argument(
        fmt::format("{} must be a positive finite number, got {}", what, scale));
  }
}

void check_count(int n, std::string_view what) {
  if (n < 1) throw std::invalid_argument(fmt::format("{} must be at least 1, got {}", what, n));
}

Requant choose_for(double ratio, const std::string& where) {
  try {
    return choose_requant(ratio);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + ": " + e.what());
  }
}

}  // namespace

Requant choose_requant(double ratio) {
  if (std::isnan(ratio) || ratio <= 0.0) {
    throw std::invalid_argument(fmt::format(
        "requant ratio must be positive, got {} (a scale is zero, negative or NaN)", ratio));
  }
  if (ratio < kMinRatio) {
    throw std::invalid_argument(
        fmt::format("requant ratio {:g} is too small: M/2^S (M <= 65535, S <= 47) represents "
                    "[{:g}, {:g}) to 2^-15; check the scales (output scale too large?)",
                    ratio, kMinRatio, kMaxRatio));
  }
  if (ratio >= kMaxRatio) {
    throw std::invalid_argument(
        fmt::format("requant ratio {:g} is too large: M/2^S (M <= 65535, S >= 1) represents "
                    "[{:g}, {:g}); check the scales (output scale too small?)",
                    ratio, kMinRatio, kMaxRatio));
  }
  // Scaling by 2^s is exact in double, so each candidate M is the correctly rounded ratio * 2^s;
  // M grows with s, so the first fitting s from the top is the largest.
  for (int s = kMaxShift; s >= 1; --s) {
    const int64_t m = std::llround(std::ldexp(ratio, s));
    if (m <= kMaxM) return {static_cast<uint16_t>(m), static_cast<uint8_t>(s)};
  }
  throw std::logic_error("choose_requant: no shift fits an in-range ratio");  // unreachable
}

float activation_scale(std::span<const float> values, double percentile) {
  if (values.empty()) throw std::invalid_argument("activation_scale: no calibration values");
  if (!(percentile > 0.0 && percentile <= 1.0)) {
    throw std::invalid_argument(
        fmt::format("activation_scale: percentile must be in (0, 1], got {}", percentile));
  }
  std::vector<float> mag(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      throw std::invalid_argument(
          fmt::format("activation_scale: calibration value {} is {}", i, values[i]));
    }
    mag[i] = std::fabs(values[i]);
  }
  // Nearest-rank quantile: the smallest |x| with at least percentile*n values <= it.
  const double rank = std::ceil(percentile * static_cast<double>(mag.size()));
  const size_t k = std::clamp<size_t>(static_cast<size_t>(rank), 1, mag.size()) - 1;
  std::nth_element(mag.begin(), mag.begin() + static_cast<std::ptrdiff_t>(k), mag.end());
  return std::max(mag[k] / 127.0f, kMinActivationScale);
}

void fold_bn(std::vector<float>& weight, std::vector<float>& bias, size_t cout,
             const BatchNorm& bn) {
  if (cout == 0) throw std::invalid_argument("fold_bn: cout must be at least 1");
  if (weight.empty() || weight.size() % cout != 0) {
    throw std::invalid_argument(
        fmt::format("fold_bn: {} weights do not split into {} non-empty output-channel rows",
                    weight.size(), cout));
  }
  const auto check = [&](const std::vector<float>& v, const char* name) {
    if (v.size() != cout) {
      throw std::invalid_argument(fmt::format(
          "fold_bn: BatchNorm {} has {} entries, expected cout = {}", name, v.size(), cout));
    }
  };
  check(bn.gamma, "gamma");
  check(bn.beta, "beta");
  check(bn.mean, "mean");
  check(bn.var, "var");
  if (!bias.empty() && bias.size() != cout) {
    throw std::invalid_argument(fmt::format(
        "fold_bn: bias has {} entries, expected cout = {} (or none for zeros)", bias.size(), cout));
  }
  if (bias.empty()) bias.assign(cout, 0.0f);
  const size_t row = weight.size() / cout;
  for (size_t c = 0; c < cout; ++c) {
    const double denom = static_cast<double>(bn.var[c]) + static_cast<double>(bn.eps);
    if (!(denom > 0.0)) {
      throw std::invalid_argument(
          fmt::format("fold_bn: channel {}: var + eps = {} must be positive (var {}, eps {})", c,
                      denom, bn.var[c], bn.eps));
    }
    const double g = static_cast<double>(bn.gamma[c]) / std::sqrt(denom);
    for (size_t i = c * row; i < (c + 1) * row; ++i) {
      weight[i] = static_cast<float>(static_cast<double>(weight[i]) * g);
    }
    bias[c] = static_cast<float>((static_cast<double>(bias[c]) - bn.mean[c]) * g + bn.beta[c]);
  }
}

QuantWeights quantize_weights(std::span<const float> w, size_t cout) {
  if (cout == 0) throw std::invalid_argument("quantize_weights: cout must be at least 1");
  if (w.empty() || w.size() % cout != 0) {
    throw std::invalid_argument(fmt::format(
        "quantize_weights: {} weights do not split into {} non-empty output-channel rows", w.size(),
        cout));
  }
  const size_t row = w.size() / cout;
  QuantWeights q;
  q.w.resize(w.size());
  q.scale.resize(cout);
  for (size_t c = 0; c < cout; ++c) {
    const auto r = w.subspan(c * row, row);
    float mx = 0.0f;
    for (size_t i = 0; i < row; ++i) {
      if (!std::isfinite(r[i])) {
        throw std::invalid_argument(
            fmt::format("quantize_weights: weight {} of output channel {} is {}", i, c, r[i]));
      }
      mx = std::max(mx, std::fabs(r[i]));
    }
    // Scale 1 (codes 0) also when max|w| is so small that max|w| / 127 underflows to 0: dividing
    // by that gave NaN codes (found by fuzzing, docs/reliability.md).
    const float scale = mx / 127.0f > 0.0f ? mx / 127.0f : 1.0f;
    q.scale[c] = scale;
    for (size_t i = 0; i < row; ++i) {
      const double v = std::round(static_cast<double>(r[i]) / scale);
      q.w[c * row + i] = static_cast<int8_t>(std::clamp(v, -127.0, 127.0));
    }
  }
  return q;
}

std::vector<ChannelParams> conv_params(std::span<const float> bias, std::span<const float> w_scale,
                                       float in_scale, float out_scale) {
  if (bias.size() != w_scale.size()) {
    throw std::invalid_argument(
        fmt::format("conv_params: {} biases but {} weight scales (one each per output channel)",
                    bias.size(), w_scale.size()));
  }
  check_scale(in_scale, "conv_params: input scale");
  check_scale(out_scale, "conv_params: output scale");
  std::vector<ChannelParams> p(bias.size());
  for (size_t c = 0; c < bias.size(); ++c) {
    if (!(w_scale[c] > 0.0f) || !std::isfinite(w_scale[c])) {
      throw std::invalid_argument(
          fmt::format("conv_params: weight scale of channel {} must be positive and finite, got {}",
                      c, w_scale[c]));
    }
    if (!std::isfinite(bias[c])) {
      throw std::invalid_argument(fmt::format("conv_params: bias of channel {} is {}", c, bias[c]));
    }
    const double acc_scale = static_cast<double>(in_scale) * w_scale[c];
    const double b = std::round(static_cast<double>(bias[c]) / acc_scale);
    constexpr double lo = std::numeric_limits<int32_t>::min();
    constexpr double hi = std::numeric_limits<int32_t>::max();
    p[c].bias = static_cast<int32_t>(std::clamp(b, lo, hi));
    const double ratio = acc_scale / out_scale;
    // |acc| <= 2^31, so ratio < 2^-33 maps every accumulator to |acc*ratio| < 1/4, i.e. 0; so
    // does (1, 47) for |acc| < 2^46.
    const Requant r = (ratio > 0.0 && ratio < kMinRatio)
                          ? Requant{1, kMaxShift}
                          : choose_for(ratio, fmt::format("conv_params: channel {}", c));
    p[c].m = r.m;
    p[c].s = r.s;
  }
  return p;
}

namespace {
// (M, S) that turn a sum of `count` inputs at `in_scale` into their mean at `out_scale`.
Requant mean_requant(float in_scale, float out_scale, int count, const std::string& what,
                     const char* count_name) {
  check_scale(in_scale, what + ": input scale");
  check_scale(out_scale, what + ": output scale");
  check_count(count, what + ": " + count_name);
  return choose_for(static_cast<double>(in_scale) / (count * static_cast<double>(out_scale)),
                    what);
}
}  // namespace

Requant avgpool_requant(float in_scale, float out_scale, int window) {
  return mean_requant(in_scale, out_scale, window, "avgpool_requant", "window");
}

Requant gap_requant(float in_scale, float out_scale, int pixels) {
  return mean_requant(in_scale, out_scale, pixels, "gap_requant", "pixels");
}

std::pair<Requant, Requant> add_requant(float a_scale, float b_scale, float out_scale) {
  check_scale(a_scale, "add_requant: first input scale");
  check_scale(b_scale, "add_requant: second input scale");
  check_scale(out_scale, "add_requant: output scale");
  return {choose_for(static_cast<double>(a_scale) / out_scale, "add_requant: first input"),
          choose_for(static_cast<double>(b_scale) / out_scale, "add_requant: second input")};
}

int8_t quantize_value(float x, float scale) {
  check_scale(scale, "quantize_value: scale");
  if (std::isnan(x)) throw std::invalid_argument("quantize_value: value is NaN");
  const double v = std::round(static_cast<double>(x) / scale);
  return static_cast<int8_t>(std::clamp(v, -128.0, 127.0));
}

}  // namespace nasa::quant
