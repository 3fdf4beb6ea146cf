// Float -> int8 quantization building blocks for the compiler: requant (M, S) selection, activation
// scale calibration, BatchNorm folding, per-channel weight quantization and per-layer parameters.
// Everything is deterministic; the integer arithmetic it targets is docs/engine.md "Numerics".
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace nasa::quant {

// Multiplier and shift of the engine's requant(acc, M, S) = (acc * M + 2^(S-1)) >> S.
struct Requant {
  uint16_t m = 1;
  uint8_t s = 1;
  bool operator==(const Requant&) const = default;
};

// Ratios choose_requant accepts: [kMinRatio, kMaxRatio). Below 2^-33 the 16-bit M at S = 47 would
// keep fewer than 15 significant bits; at or above 32767.75 even S = 1 would need M > 65535.
inline constexpr double kMinRatio = 0x1p-33;
inline constexpr double kMaxRatio = 32767.75;
// Bound on |M / 2^S - ratio| / ratio for every accepted ratio (2^-16 for ratios >= 2^-32).
inline constexpr double kRequantRelError = 0x1p-15;

// The (M, S), M in [1, 65535] and S in [1, 47], with M / 2^S = round(ratio * 2^S) / 2^S for the
// largest S whose M still fits 16 bits (most precision). Throws std::invalid_argument for a ratio
// that is not positive, NaN, or outside [kMinRatio, kMaxRatio).
Requant choose_requant(double ratio);

// Smallest scale activation_scale returns (an all-zero calibration range).
inline constexpr float kMinActivationScale = 1e-5f;

// Symmetric per-tensor activation scale from calibration values: the `percentile` quantile of |x|
// (1.0 = max |x|, lower values ignore outliers), divided by 127, at least kMinActivationScale.
// Throws on no values, a non-finite value, or percentile outside (0, 1].
float activation_scale(std::span<const float> values, double percentile = 1.0);

struct BatchNorm {
  std::vector<float> gamma, beta, mean, var;
  float eps = 1e-5f;
};

// Folds an inference BatchNorm after a conv/fc into its weights (`cout` rows of any length) and
// bias (empty = zeros; resized to cout): w' = w*g, b' = (b - mean)*g + beta with
// g = gamma / sqrt(var + eps).
void fold_bn(std::vector<float>& weight, std::vector<float>& bias, size_t cout,
             const BatchNorm& bn);

struct QuantWeights {
  std::vector<int8_t> w;     // same layout as the float weights
  std::vector<float> scale;  // per output channel: w ~= code * scale[c]
};

// Per-output-channel symmetric int8 weights: `cout` equal rows, scale_c = max|w_c| / 127, codes
// rounded half away from zero and clamped to [-127, 127]; an all-zero row (or one so small that
// max|w| / 127 underflows to 0) gets scale 1, codes 0.
QuantWeights quantize_weights(std::span<const float> w, size_t cout);

// One per-channel parameter record of Conv/DwConv/Fc (docs/engine.md "Memory layout").
struct ChannelParams {
  int32_t bias = 0;
  uint16_t m = 1;
  uint8_t s = 1;
  bool operator==(const ChannelParams&) const = default;
};

// Parameters for an int8 layer with float (folded) bias, per-channel weight scales and the input
// and output activation scales: bias_q = round(bias / (in*w_scale)) saturated to int32, (M, S) =
// choose_requant(in*w_scale/out). A channel whose ratio is below kMinRatio gets (1, 47): every
// int32 accumulator then requantizes to 0, which is what the exact ratio gives too.
std::vector<ChannelParams> conv_params(std::span<const float> bias, std::span<const float> w_scale,
                                       float in_scale, float out_scale);

// Tensor-level (M, S) of the other ops. AvgPool sums `window` taps (padding counts as 0), Gap sums
// `pixels`; Add rescales each input to the output scale (first: a, second: b).
Requant avgpool_requant(float in_scale, float out_scale, int window = 9);
Requant gap_requant(float in_scale, float out_scale, int pixels);
std::pair<Requant, Requant> add_requant(float a_scale, float b_scale, float out_scale);

// round(x / scale) half away from zero, saturated to [-128, 127]; throws on NaN x or scale <= 0.
int8_t quantize_value(float x, float scale);
inline float dequantize(int8_t q, float scale) { return static_cast<float>(q) * scale; }

}  // namespace nasa::quant
