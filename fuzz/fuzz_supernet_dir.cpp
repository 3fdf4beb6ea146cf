// A supernet directory as the runtime reads it (runtime::load_supernet_dir: supernet.json and
// weights.safetensors, checked against each other), framed as one input (fuzz_common.h split()):
// the spec text, then the weight file. Each stage's documented error (SpecError, then
// std::runtime_error naming the weight file) is the expected answer to bad input; a directory
// that loads must give every candidate's subnet (extract_subnet, what `nasa run` fine-tunes).
// Small supernets then go the way of `nasa eval`: quantize (calibrated on one image), compile a
// candidate for the `sim` configuration and run it on the reference model. Weights that cannot
// be quantized (NaN, infinities, a negative BatchNorm variance, scales out of range) must be a
// std::invalid_argument naming the tensor; a program that compiles must run without an error.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "nasa/compiler.h"
#include "nasa/float_eval.h"
#include "nasa/refmodel.h"
#include "nasa/safetensors.h"
#include "nasa/spec.h"
#include "nasa/supernet_weights.h"

namespace hw = nasa::hw;
namespace spec = nasa::spec;
namespace w = nasa::weights;
using nasa::fuzz::accepts;
using nasa::fuzz::check;

namespace {

// Quantization evaluates every choice of every layer on the calibration image: bounded here.
constexpr uint64_t kMaxMacs = 1 << 16;

uint64_t all_macs(const spec::Supernet& net) {
  uint64_t macs = spec::stem_cost(net).macs + spec::head_cost(net).macs;
  for (size_t i = 0; i < net.layers.size(); ++i) {
    for (size_t c = 0; c < net.layers[i].choices.size(); ++c) macs += spec::op_cost(net, i, c).macs;
  }
  return macs;
}

void quantize_compile_run(const spec::Supernet& net, const w::TensorFile& file,
                          const spec::Candidate& c) {
  const size_t in_bytes = static_cast<size_t>(net.in_h) * net.in_w * net.in_c;
  std::vector<uint8_t> pixels(in_bytes);
  for (size_t i = 0; i < in_bytes; ++i) pixels[i] = static_cast<uint8_t>(i * 37);
  const nasa::floatnet::Tensor image =
      nasa::floatnet::image_from_u8(pixels.data(), net.in_h, net.in_w, net.in_c);
  std::optional<nasa::compile::QSupernet> q;
  try {
    q = nasa::compile::quantize(net, file, {&image, 1});
  } catch (const std::invalid_argument& e) {
    // Where: the tensor (stem, head or layers.<i>.choices.<j>) whose values cannot be quantized.
    const std::string_view msg = e.what();
    if (msg.find("stem") == msg.npos && msg.find("head") == msg.npos &&
        msg.find("layers.") == msg.npos) {
      nasa::fuzz::finding(std::string("a quantization error does not name the tensor: ") +
                          e.what());
    }
    return;
  }
  const hw::Config& cfg = nasa::config_by_name("sim");
  std::optional<nasa::compile::Program> p;
  if (!accepts<std::runtime_error>("compile: ", [&] {
        p = nasa::compile::compile(*q, c, std::vector<std::vector<uint8_t>>{pixels}, cfg);
      })) {
    return;  // too large for the configuration
  }
  const nasa::ref::RunResult r =
      nasa::ref::run(p->image, cfg, p->desc_addr, p->desc_count, p->win_base, p->win_limit);
  if (r.err != hw::Err::None || r.layers_done != p->desc_count) {
    nasa::fuzz::finding("a compiled program fails on the reference model: " +
                        nasa::err_name(r.err) + " at descriptor " + std::to_string(r.err_index));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = nasa::fuzz::split(data, size, 2);
  std::optional<spec::Supernet> net;
  if (!accepts<spec::SpecError>("supernet.json", [&] {
        net = spec::parse_supernet_text(nasa::fuzz::text_of(parts[0]), "supernet.json");
      })) {
    return 0;
  }
  std::optional<w::TensorFile> file;
  if (!accepts<std::runtime_error>("weights.safetensors", [&] {
        file = w::parse_safetensors(parts[1], "weights.safetensors");
      })) {
    return 0;
  }
  if (!accepts<std::runtime_error>("weights.safetensors",
                                   [&] { w::check_weights(*net, *file, "weights.safetensors"); })) {
    return 0;
  }
  // Loaded: the candidate named by the last choice of every layer (any valid one would do;
  // the last differs from the all-zero one whenever a layer has a choice).
  spec::Candidate c(net->layers.size());
  for (size_t i = 0; i < c.size(); ++i) {
    c[i] = static_cast<int>(net->layers[i].choices.size() - 1);
  }
  const w::Subnet sub = w::extract_subnet(*net, *file, c);
  w::check_weights(sub.net, sub.weights, "subnet");
  check(sub.net.layers.size() == net->layers.size(), "subnet layer count");
  if (all_macs(*net) <= kMaxMacs) quantize_compile_run(*net, *file, c);
  return 0;
}
