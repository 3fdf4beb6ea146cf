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

namespace {
// The device an evaluation's runs share (candidate programs of several image runs, batch runs):
// made at the first run and made anew, and then written whole, only when a run's image is larger
// than its memory. A small address space (the board's) is made whole at once. `memory`: what it
// holds (write_image).
class DeviceSlot {
 public:
  DeviceSlot(const DeviceFactory& factory, const hw::Config& cfg,
             const device::Device::ProgressFn& progress)
      : factory_(factory), cfg_(cfg), progress_(progress) {}
  device::Device& get(uint64_t bytes) {
    if (!dev_ || bytes > bytes_) {
      constexpr uint64_t kWhole = uint64_t{16} << 20;
      bytes_ = std::max(bytes, cfg_.addr_space() <= kWhole ? cfg_.addr_space() : 0);
      dev_ = factory_(cfg_, bytes_);
      if (progress_) dev_->set_progress(progress_);
      memory = {};
    }
    return *dev_;
  }
  MemoryState memory;

 private:
  const DeviceFactory& factory_;
  const hw::Config& cfg_;
  const device::Device::ProgressFn& progress_;
  std::unique_ptr<device::Device> dev_;
  uint64_t bytes_ = 0;
};
}  // namespace

EvalResult Runtime::evaluate(const spec::Candidate& c, std::span<const std::vector<uint8_t>> images,
                             std::span<const uint8_t> labels) {
  if (labels.size() != images.size()) {
    throw std::invalid_argument(
        fmt::format("evaluate: {} images but {} labels", images.size(), labels.size()));
  }
  EvalResult r;
  r.candidate = c;
  r.images = images.size();
  // the images in as many programs as the address space needs (one when they all fit), on one
  // device: a program after the first rewrites what changed (its images), not the weights
  DeviceSlot slot(factory_, cfg_, progress_);
  const size_t per = std::max<size_t>(1, compile::images_per_program(q_, c, images.size(), cfg_));
  for (size_t i0 = 0; i0 == 0 || i0 < images.size(); i0 += per) {
    const size_t ni = std::min(per, images.size() - i0);
    const auto part = images.subspan(i0, ni);
    const compile::Program p = compile::compile(q_, c, part, cfg_);
    device::Device* dev = &slot.get(p.image.size());
    write_image(*dev, p, slot.memory);
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
    const int classes = q_.net.classes;
    std::vector<uint8_t> raw(static_cast<size_t>(classes));
    for (size_t n = 0; n < ni; ++n) {
      dev->read_memory(p.logits_addr[n], raw);
      int best = 0;
      for (int k = 0; k < classes; ++k) {
        const auto v = static_cast<int8_t>(raw[static_cast<size_t>(k)]);
        r.logits.push_back(v);
        if (v > static_cast<int8_t>(raw[static_cast<size_t>(best)])) best = k;
      }
      r.correct += best == labels[i0 + n];
    }
    EvalResult part_costs;
    take_counters(*dev, part_costs);
    for (size_t i = 0; i < r.counters.size(); ++i) r.counters[i] += part_costs.counters[i];
    r.cycles += part_costs.cycles;
    r.macs += part_costs.macs;
    r.dram_read += part_costs.dram_read;
    r.dram_written += part_costs.dram_written;
    ++r.programs;
  }
  r.logits_sha256 = sha256_hex(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(r.logits.data()), r.logits.size()));
  return r;
}

uint64_t write_image(device::Device& dev, const compile::Program& p, MemoryState& st) {
  const std::vector<uint8_t>& image = p.image;
  const size_t held_end = std::min(image.size(), st.bytes.size());
  auto held = [&](size_t i) { return i < held_end && st.held[i] && image[i] == st.bytes[i]; };
  uint64_t written = 0;
  // stretches of bytes to write, joined across held gaps shorter than a write's own cost
  constexpr size_t kJoin = 64;
  for (size_t i = 0; i < image.size();) {
    if (held(i)) {
      ++i;
      continue;
    }
    size_t end = i + 1, gap = 0;
    for (size_t j = i + 1; j < image.size() && gap < kJoin; ++j) {
      if (held(j)) {
        ++gap;
      } else {
        gap = 0;
        end = j + 1;
      }
    }
    dev.write_memory(i, std::span<const uint8_t>(image).subspan(i, end - i));
    written += end - i;
    i = end;
  }
  st.bytes = image;
  st.held.assign(image.size(), false);
  for (const compile::Region& r : p.regions) {
    if (!r.input) continue;
    const uint64_t end = std::min<uint64_t>(image.size(), uint64_t{r.addr} + r.size);
    for (uint64_t a = r.addr; a < end; ++a) st.held[a] = true;
  }
  return written;
}

void program_batch(device::Device& dev, const compile::BatchProgram& bp,
                   MemoryState* st) {
  const batch::Regs& r = bp.regs;
  if (st != nullptr) {
    write_image(dev, bp.program, *st);
  } else {
    dev.write_memory(0, bp.program.image);
  }
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

namespace {
// One batch run on the slot's device: its result as the hardware reports it.
FusedResult run_batch_once(const compile::QSupernet& q, const hw::Config& cfg, DeviceSlot& slot,
                           std::span<const spec::Candidate> cands, size_t generate,
                           std::span<const std::vector<uint8_t>> images,
                           std::span<const uint8_t> labels, const compile::BatchOptions& opt) {
  const compile::BatchProgram bp =
      compile::compile_batch(q, cands, generate, images, labels, cfg, opt);
  const compile::Program& p = bp.program;
  const batch::Regs& r = bp.regs;
  device::Device* dev = &slot.get(p.image.size());
  program_batch(*dev, bp, &slot.memory);
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
  res.runs = 1;
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

// `run`'s counters, profile and descriptors added to `sum`'s
void add_costs(FusedResult& sum, const FusedResult& run, size_t node_base) {
  for (size_t i = 0; i < sum.counters.size(); ++i) sum.counters[i] += run.counters[i];
  sum.cycles += run.cycles;
  sum.macs += run.macs;
  sum.dram_read += run.dram_read;
  sum.dram_written += run.dram_written;
  sum.layers += run.layers;
  sum.runs += run.runs;
  if (!run.profile) {
    sum.profile.reset();
    return;
  }
  if (sum.runs == 1) {
    sum.profile = run.profile;  // (node ids already at node_base 0)
    return;
  }
  if (!sum.profile) return;
  batch::Profile& p = *sum.profile;
  const batch::Profile& q = *run.profile;
  if (p.by_node.size() < node_base + q.by_node.size())
    p.by_node.resize(node_base + q.by_node.size());
  for (size_t n = 0; n < q.by_node.size(); ++n) {
    batch::Usage& u = p.by_node[node_base + n];
    u.cycles += q.by_node[n].cycles;
    u.macs += q.by_node[n].macs;
    u.layers += q.by_node[n].layers;
  }
  for (size_t o = 0; o < p.by_op.size(); ++o) {
    p.by_op[o].cycles += q.by_op[o].cycles;
    p.by_op[o].macs += q.by_op[o].macs;
    p.by_op[o].layers += q.by_op[o].layers;
  }
  p.control_cycles += q.control_cycles;
}
}  // namespace

FusedResult Runtime::evaluate_fused(std::span<const spec::Candidate> cands, size_t generate,
                                    std::span<const std::vector<uint8_t>> images,
                                    std::span<const uint8_t> labels,
                                    const compile::BatchOptions& opt) {
  if (labels.size() != images.size()) {
    throw std::invalid_argument(
        fmt::format("evaluate_fused: {} images but {} labels", images.size(), labels.size()));
  }
  const auto plan = compile::plan_batch(q_, cands, generate, images.size(), cfg_, opt);
  // the runs on one device: a run after the first rewrites what changed (images, weights of
  // another candidate group), not what it shares with the run before
  DeviceSlot slot(factory_, cfg_, progress_);
  FusedResult res;
  res.images = images.size();
  size_t node_base = 0;  // the group's first node in the merged node table
  for (size_t k = 0; k < plan.size(); ++k) {
    const compile::BatchRun& br = plan[k];
    compile::BatchOptions o = opt;
    o.mini_batch = br.mini_batch;
    const size_t i0 = br.img_begin, ni = br.img_end - br.img_begin;
    const FusedResult run = run_batch_once(
        q_, cfg_, slot, cands.subspan(br.cand_begin, br.cand_end - br.cand_begin), generate,
        images.subspan(i0, ni), labels.subspan(i0, ni), o);
    const bool first_of_group = i0 == 0;
    if (first_of_group) {
      // a new group of candidates: its nodes after the previous groups' (parents rebased; the
      // root's "no parent" stays), its candidates, leaves and counts
      if (k > 0) node_base = res.nodes.size();
      for (uint32_t w : run.nodes) {
        const uint32_t parent = w & 0xFFFFu;
        res.nodes.push_back(
            parent == hw::kNoNode ? w : (w & ~0xFFFFu) | static_cast<uint32_t>(parent + node_base));
      }
      for (size_t j = 0; j < run.candidates.size(); ++j) {
        res.candidates.push_back(run.candidates[j]);
        res.leaf.push_back(static_cast<uint32_t>(run.leaf[j] + node_base));
        res.correct.push_back(run.correct[j]);
        if (!run.logits.empty()) res.logits.push_back(run.logits[j]);
      }
    } else {
      // the same candidates on the next images: counts add up, logits follow in image order
      const size_t j0 = res.candidates.size() - run.candidates.size();
      for (size_t j = 0; j < run.candidates.size(); ++j) {
        if (run.candidates[j] != res.candidates[j0 + j]) {
          throw std::logic_error("evaluate_fused: a group's runs evaluated different candidates");
        }
        res.correct[j0 + j] += run.correct[j];
        if (!run.logits.empty()) {
          res.logits[j0 + j].insert(res.logits[j0 + j].end(), run.logits[j].begin(),
                                    run.logits[j].end());
        }
      }
    }
    add_costs(res, run, node_base);
  }
  return res;
}

}  // namespace nasa::runtime
