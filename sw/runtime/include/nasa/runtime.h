// Runtime facade: a quantized supernet plus a backend (any Device); evaluates candidates on a
// batch of labelled images and reports per-candidate logits, correct count, cycles and counters.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nasa/compiler.h"
#include "nasa/device.h"

namespace nasa::runtime {

using DeviceFactory =
    std::function<std::unique_ptr<device::Device>(const hw::Config& cfg, uint64_t memory_bytes)>;

struct EvalResult {
  spec::Candidate candidate;
  size_t images = 0, correct = 0;
  std::vector<int8_t> logits;  // images x classes, image order
  uint64_t cycles = 0, macs = 0, dram_read = 0, dram_written = 0;
  std::array<uint64_t, hw::kNumCounters> counters{};
  std::string logits_sha256;  // hex SHA-256 over `logits`
  size_t programs = 0;        // programs run: the images in as many as the address space needs
  double accuracy() const { return images ? static_cast<double>(correct) / images : 0.0; }
};

// A fused batch run (docs/fusion.md): per-candidate results plus what the hardware reported.
struct FusedResult {
  std::vector<spec::Candidate> candidates;  // as evaluated (the generated ones with --generate)
  std::vector<uint32_t> leaf;               // per candidate: its leaf node
  std::vector<size_t> correct;              // per candidate
  size_t images = 0;
  // node table as read back: parent | layer << 16 | choice << 24 (several batch runs: their
  // groups' tables one after the other, parents rebased)
  std::vector<uint32_t> nodes;
  // batch runs (compile::plan_batch: candidate groups x image runs; counters are their sums)
  size_t runs = 0;
  // per candidate, images x classes (only with BatchOptions::dump_logits)
  std::vector<std::vector<int8_t>> logits;
  uint64_t cycles = 0, macs = 0, dram_read = 0, dram_written = 0, layers = 0;
  std::array<uint64_t, hw::kNumCounters> counters{};
  // where the cycles went, by node and opcode (targets that model it: the reference device)
  std::optional<batch::Profile> profile;
};

// A supernet directory as `nasa init` / `nasa train` write it: supernet.json and
// weights.safetensors, checked against each other (errors name the file and the tensor).
struct FloatSupernet {
  spec::Supernet net;
  weights::TensorFile weights;
};
// `path` is that directory or its supernet.json (a spec file of another name has no weights: an
// error says so).
FloatSupernet load_supernet_dir(const std::filesystem::path& path);

class Runtime {
 public:
  Runtime(compile::QSupernet q, const hw::Config& cfg, DeviceFactory factory,
          std::string backend_name);
  const compile::QSupernet& supernet() const { return q_; }
  const hw::Config& config() const { return cfg_; }
  const std::string& backend() const { return backend_; }
  void set_backend(DeviceFactory factory, std::string backend_name) {
    factory_ = std::move(factory);
    backend_ = std::move(backend_name);
  }
  // Forwarded to every device this runtime creates (long RTL runs report their progress).
  void set_progress(device::Device::ProgressFn fn) { progress_ = std::move(fn); }
  // images: HWC uint8 of the supernet's input shape; labels: one per image.
  EvalResult evaluate(const spec::Candidate& c, std::span<const std::vector<uint8_t>> images,
                      std::span<const uint8_t> labels);
  // The whole batch fused on the device: `cands` from memory, or `generate` > 0 candidates
  // made by cand_gen (opt.gen_*). Throws with the device's error code on a failed run.
  FusedResult evaluate_fused(std::span<const spec::Candidate> cands, size_t generate,
                             std::span<const std::vector<uint8_t>> images,
                             std::span<const uint8_t> labels,
                             const compile::BatchOptions& opt = {});

 private:
  compile::QSupernet q_;
  hw::Config cfg_;
  DeviceFactory factory_;
  std::string backend_;
  device::Device::ProgressFn progress_;
};

// What a device's memory is known to hold: the image written last, and which of its bytes the
// hardware only reads (compile::Region::input: weights, templates, images, labels), so holds still.
struct MemoryState {
  std::vector<uint8_t> bytes;
  std::vector<bool> held;
};
// Writes program `p`'s memory image to the device from address 0: all of it when `st` is empty,
// else everything but the stretches `st` says the device holds already. A run that follows
// another on the same device so rewrites what changed (its images, another group's weights), not
// the weights and templates the two share. Returns the bytes written.
uint64_t write_image(device::Device& dev, const compile::Program& p, MemoryState& st);

// Writes a batch program's memory image (with `st`: as write_image), batch CSRs and tables to a
// device (not started).
void program_batch(device::Device& dev, const compile::BatchProgram& bp,
                   MemoryState* st = nullptr);

std::string sha256_hex(std::span<const uint8_t> bytes);

}  // namespace nasa::runtime
