#include "nasa/runtime.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <stdexcept>

#include "nasa/supernet_weights.h"

namespace nasa::runtime {

FloatSupernet load_supernet_dir(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) {
    throw std::runtime_error(
        fmt::format("supernet directory '{}' does not exist (expected the "
                    "output of `nasa init` or `nasa train`)",
                    dir.string()));
  }
  FloatSupernet f{spec::load_supernet(dir / "supernet.json"), {}};
  const auto wpath = dir / "weights.safetensors";
  f.weights = weights::read_safetensors(wpath);
  weights::check_weights(f.net, f.weights, wpath.string());
  return f;
}

std::string sha256_hex(std::span<const uint8_t> bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 failed (libcrypto)");
  }
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

Runtime::Runtime(compile::QSupernet q, const hw::Config& cfg, DeviceFactory factory,
                 std::string backend_name)
    : q_(std::move(q)),
      cfg_(cfg),
      factory_(std::move(factory)),
      backend_(std::move(backend_name)) {}

EvalResult Runtime::evaluate(const spec::Candidate& c, std::span<const std::vector<uint8_t>> images,
                             std::span<const uint8_t> labels) {
  if (labels.size() != images.size()) {
    throw std::invalid_argument(
        fmt::format("evaluate: {} images but {} labels", images.size(), labels.size()));
  }
  const compile::Program p = compile::compile(q_, c, images, cfg_);
  auto dev = factory_(cfg_, p.image.size());
  dev->write_memory(0, p.image);
  const uint64_t timeout = 4'000'000'000ull;
  const device::WaitResult w =
      dev->run(p.desc_addr, p.desc_count, p.win_base, p.win_limit, timeout);
  if (!w.done || w.timeout) {
    throw std::runtime_error(fmt::format("{} backend: candidate {} did not finish", dev->name(),
                                         spec::format_candidate(c)));
  }
  if (w.err != hw::Err::None) {
    throw std::runtime_error(fmt::format("{} backend: candidate {} stopped at descriptor {}: {}",
                                         dev->name(), spec::format_candidate(c), w.err_index,
                                         err_name(w.err)));
  }
  EvalResult r;
  r.candidate = c;
  r.images = images.size();
  const int classes = q_.net.classes;
  std::vector<uint8_t> raw(static_cast<size_t>(classes));
  for (size_t n = 0; n < images.size(); ++n) {
    dev->read_memory(p.logits_addr[n], raw);
    int best = 0;
    for (int k = 0; k < classes; ++k) {
      const auto v = static_cast<int8_t>(raw[static_cast<size_t>(k)]);
      r.logits.push_back(v);
      if (v > static_cast<int8_t>(raw[static_cast<size_t>(best)])) best = k;
    }
    r.correct += best == labels[n];
  }
  r.cycles = dev->counter(hw::Counter::Cycles);
  r.macs = dev->counter(hw::Counter::Macs);
  r.dram_read = dev->counter(hw::Counter::DramRdBytes);
  r.dram_written = dev->counter(hw::Counter::DramWrBytes);
  r.logits_sha256 = sha256_hex(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(r.logits.data()), r.logits.size()));
  return r;
}

}  // namespace nasa::runtime
