#include "nasa/runtime.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <stdexcept>

#include "nasa/desc.h"
#include "nasa/supernet_weights.h"

namespace nasa::runtime {

FloatSupernet load_supernet_dir(const std::filesystem::path& path) {
  // --supernet means the same everywhere: a spec file or the directory holding it. With weights,
  // a spec file must be the directory's supernet.json (its weights.safetensors lies beside it).
  std::filesystem::path dir = path;
  if (std::filesystem::is_regular_file(path)) {
    if (path.filename() != "supernet.json") {
      throw std::runtime_error(fmt::format(
          "supernet '{}' is a spec file without weights: give the directory that `nasa init` "
          "or `nasa train` wrote (its supernet.json and weights.safetensors)",
          path.string()));
    }
    dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  } else if (!std::filesystem::is_directory(path)) {
    throw std::runtime_error(
        fmt::format("supernet directory '{}' does not exist (expected the "
                    "output of `nasa init` or `nasa train`)",
                    path.string()));
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

namespace {
// A finished run's counters, and the ones a result names.
template <class Result>
void take_counters(device::Device& dev, Result& r) {
  for (int i = 0; i < hw::kNumCounters; ++i) {
    r.counters[static_cast<size_t>(i)] = dev.counter(static_cast<hw::Counter>(i));
  }
  r.cycles = r.counters[static_cast<size_t>(hw::Counter::Cycles)];
  r.macs = r.counters[static_cast<size_t>(hw::Counter::Macs)];
  r.dram_read = r.counters[static_cast<size_t>(hw::Counter::DramRdBytes)];
  r.dram_written = r.counters[static_cast<size_t>(hw::Counter::DramWrBytes)];
}
}  // namespace

EvalResult Runtime::evaluate(const spec::Candidate& c, std::span<const std::vector<uint8_t>> images,
                             std::span<const uint8_t> labels) {
  if (labels.size() != images.size()) {
    throw std::invalid_argument(
        fmt::format("evaluate: {} images but {} labels", images.size(), labels.size()));
  }
  const compile::Program p = compile::compile(q_, c, images, cfg_);
  auto dev = factory_(cfg_, p.image.size());
  if (progress_) dev->set_progress(progress_);
  dev->write_memory(0, p.image);
  const uint64_t timeout = 4'000'000'000ull;
  const device::WaitResult w =
      dev->run(p.desc_addr, p.desc_count, p.win_base, p.win_limit, timeout, p.scratch_base);
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
  take_counters(*dev, r);
  r.logits_sha256 = sha256_hex(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(r.logits.data()), r.logits.size()));
  return r;
}

void program_batch(device::Device& dev, const compile::BatchProgram& bp) {
  const batch::Regs& r = bp.regs;
  dev.write_memory(0, bp.program.image);
  auto csr = [&](hw::Csr c, uint32_t v) { dev.write_csr(static_cast<uint32_t>(c), v); };
  csr(hw::Csr::NumLayers, r.num_layers);
  csr(hw::Csr::CandAddr, r.cand_addr);
  csr(hw::Csr::CandStride, r.cand_stride);
  csr(hw::Csr::CandCount, r.cand_count);
  csr(hw::Csr::TplAddr, r.tpl_addr);
  csr(hw::Csr::StemTpl, r.stem_tpl);
  csr(hw::Csr::HeadTpl, r.head_tpl);
  csr(hw::Csr::ImgAddr, r.img_addr);
  csr(hw::Csr::ImgStride, r.img_stride);
  csr(hw::Csr::ImgCount, r.img_count);
  csr(hw::Csr::LabelAddr, r.label_addr);
  csr(hw::Csr::MiniBatch, r.mini_batch);
  csr(hw::Csr::Classes, r.classes);
  csr(hw::Csr::LogitsAddr, r.logits_addr);
  csr(hw::Csr::LogitsStride, r.logits_stride);
  csr(hw::Csr::ScratchStride, r.scratch_stride);
  if (dev.config().scratch_bytes != 0) csr(hw::Csr::ScratchBase, bp.program.scratch_base);
  csr(hw::Csr::GenMode, r.gen_mode);
  csr(hw::Csr::GenSeed, r.gen_seed);
  csr(hw::Csr::GenProb, r.gen_prob);
  csr(hw::Csr::ParentAddr, r.parent_addr);
  csr(hw::Csr::ParentCount, r.parent_count);
  dev.write_table(hw::Table::OpTab, r.optab);
  dev.write_table(hw::Table::LayerK, r.layer_k);
  dev.write_table(hw::Table::ArenaAddr, r.arena_addr);
  dev.write_table(hw::Table::ArenaStride, r.arena_stride);
}

FusedResult Runtime::evaluate_fused(std::span<const spec::Candidate> cands, size_t generate,
                                    std::span<const std::vector<uint8_t>> images,
                                    std::span<const uint8_t> labels,
                                    const compile::BatchOptions& opt) {
  const compile::BatchProgram bp =
      compile::compile_batch(q_, cands, generate, images, labels, cfg_, opt);
  const compile::Program& p = bp.program;
  const batch::Regs& r = bp.regs;
  auto dev = factory_(cfg_, p.image.size());
  if (progress_) dev->set_progress(progress_);
  program_batch(*dev, bp);
  const device::WaitResult w = dev->run_batch(p.win_base, p.win_limit, 40'000'000'000ull);
  if (!w.done || w.timeout) {
    throw std::runtime_error(fmt::format("{} backend: the batch run did not finish", dev->name()));
  }
  if (w.err != hw::Err::None) {
    throw std::runtime_error(
        fmt::format("{} backend: the batch run stopped with error {} ({}), "
                    "ERR_INDEX {}",
                    dev->name(), static_cast<int>(w.err), err_name(w.err), w.err_index));
  }
  FusedResult res;
  res.images = images.size();
  const size_t L = r.num_layers;
  // the candidates as the hardware saw them (generated ones are read back)
  std::vector<uint8_t> vec(static_cast<size_t>(r.cand_count) * L);
  dev->read_memory(r.cand_addr, vec);
  for (size_t j = 0; j < r.cand_count; ++j) {
    res.candidates.emplace_back(vec.begin() + static_cast<std::ptrdiff_t>(j * L),
                                vec.begin() + static_cast<std::ptrdiff_t>((j + 1) * L));
  }
  const uint32_t n_nodes = dev->read_csr(static_cast<uint32_t>(hw::Csr::NodeCount));
  res.nodes = dev->read_table(hw::Table::Node, n_nodes);
  res.leaf = dev->read_table(hw::Table::Leaf, r.cand_count);
  const auto correct = dev->read_table(hw::Table::Correct, n_nodes);
  for (uint32_t l : res.leaf) {
    if (l >= n_nodes) {
      throw std::runtime_error(
          fmt::format("{} backend: leaf {} beyond the {} nodes", dev->name(), l, n_nodes));
    }
    res.correct.push_back(correct[l]);
  }
  if (r.logits_stride != 0) {
    for (uint32_t l : res.leaf) {
      std::vector<uint8_t> raw(r.logits_stride);
      dev->read_memory(uint64_t{r.logits_addr} + uint64_t{l} * r.logits_stride, raw);
      res.logits.emplace_back(raw.begin(), raw.end());
    }
  }
  take_counters(*dev, res);
  res.layers = w.layers_done;
  res.profile = dev->batch_profile();
  return res;
}

}  // namespace nasa::runtime
