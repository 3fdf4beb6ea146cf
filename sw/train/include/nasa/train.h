// Supernet training (libtorch, CPU): one-shot training (SPOS, fair sampling) of a spec's supernet
// on Fashion-MNIST, with resumable checkpoints, and a libtorch float forward of single candidates.
// The header is torch-free so the CLI and tests need no torch headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nasa/data.h"
#include "nasa/dist.h"
#include "nasa/safetensors.h"
#include "nasa/spec.h"

namespace nasa::train {

// Reported every few steps (and once at the end of every epoch).
struct Progress {
  int epoch = 0, epochs = 0;                               // epoch is 1-based
  int64_t step = 0, steps_per_epoch = 0, total_steps = 0;  // step: global, 1-based
  double loss = 0;  // mean loss over the steps since the last report
  double lr = 0;
  double images_per_s = 0;  // since the start of this (resumed) run
  bool epoch_end = false;
};

struct Config {
  int epochs = 1;  // the default fits the 6-minute budget on 2 cores
  int batch = 128;
  std::string optimizer = "sgd";  // "sgd" (Nesterov momentum 0.9) or "adam"
  double lr = 0.2;                // peak; cosine decay to 0 over all steps
  double weight_decay = 4e-5;
  uint64_t seed = 1;
  int threads = 2;
  // Training images: the first train_images of the training set (0: all but the validation
  // split). The validation split is always the last val_images of the training set.
  size_t train_images = 0;
  size_t val_images = 10000;
  // Augmentation of the training batches: a random shift by up to this many pixels (0: none)
  // and, with augment_flip, random left-right mirroring (for data where that keeps the class).
  int augment_shift = 0;
  bool augment_flip = false;
  double label_smoothing = 0;  // of the cross-entropy loss's targets
  // Paths per training step (fair sampling, docs/nas-job.md "Supernet training"): the batch is
  // split among this many paths whose choices, layer by layer, are random permutations of the
  // layer's choices (sample_paths), so with as many paths as the widest layer has choices every
  // choice of every layer gets a gradient in every step. 0: that many (at most the batch);
  // 1: one uniformly drawn path per step (plain SPOS). With ranks: at least one path per rank.
  int paths_per_step = 0;
  int eval_candidates = 3;  // random candidates whose val accuracy is reported at the end
  size_t eval_images = 0;   // val images used for that report (0: all)
  // Standalone training (the SPOS final step): every step trains this candidate's path only,
  // BN is recalibrated on it, and the end-of-run evaluation reports it (eval_candidates unused).
  std::optional<spec::Candidate> arch;
  // Start from these weights (laid out as weights::supernet_tensors) instead of random ones:
  // the inherited supernet weights when fine-tuning `arch`.
  std::optional<weights::TensorFile> init;
  bool resume = false;      // continue DIR/checkpoint.pt
  bool force = false;       // start over even if DIR holds a previous run
  // Tests: stop (as if interrupted) after this many epochs of this run, 0 = never.
  int stop_after_epochs = 0;
  // `--data` and tests: use this dataset (training set layout: train split then val split)
  // instead of loading Fashion-MNIST.
  std::optional<data::Dataset> dataset;
  std::function<void(const Progress&)> on_progress;
  // Data-parallel training over the ranks of an mpirun job (docs/mpi.md; nullptr: this process
  // alone): every rank calls train_supernet with the same settings; per step every rank draws the
  // step's paths (at least one per rank) from one sampler and trains paths r, r + N, ... each on
  // its share of the batch, the gradients are summed over the ranks (a choice no path used gets
  // none), so every rank holds the same weights. Rank 0 writes the directory; the others write
  // nothing.
  dist::Comm* ranks = nullptr;
};

struct CandidateAccuracy {
  spec::Candidate arch;
  double val_accuracy = 0;  // fraction in [0,1]
};

struct Result {
  std::filesystem::path dir;
  int epochs_done = 0;  // total, including epochs of a resumed run
  int64_t steps_done = 0;
  bool complete = false;  // all epochs done (false when stopped by stop_after_epochs)
  bool resumed = false;
  double seconds = 0;  // wall time of this run (training + final evaluation)
  double train_seconds = 0;
  std::vector<double> step_losses;            // every step of this run, in order
  std::vector<CandidateAccuracy> candidates;  // filled when complete
};

// What train_supernet writes into its directory, as a list to show the user.
inline constexpr std::string_view kTrainFiles =
    "supernet.json, weights.safetensors, train_log.jsonl, train_log.csv, checkpoint.pt";

// Trains `net` and writes DIR/supernet.json, DIR/weights.safetensors (the tensors of
// weights::supernet_tensors, readable by runtime::load_supernet_dir; its metadata records the
// input normalization: the training split's per-channel statistics, or those of `init`),
// DIR/train_log.jsonl, DIR/train_log.csv and DIR/checkpoint.pt (after every epoch). Throws
// std::runtime_error naming the file on a corrupt or mismatched checkpoint, on a DIR holding
// another spec or a previous run (unless force), on bad configuration values.
Result train_supernet(const spec::Supernet& net, const Config& cfg,
                      const std::filesystem::path& dir);

// The paths of one training step (Config::paths_per_step): n == 1, one path drawn uniformly
// (each layer's choice independently); n > 1, in every layer the paths' choices are consecutive
// random permutations of the layer's choices, so within the step each choice is taken
// floor(n / choices) or ceil(n / choices) times, every choice at least once when n >= choices.
std::vector<spec::Candidate> sample_paths(const spec::Supernet& net, size_t n,
                                          std::mt19937_64& rng);
// Config::paths_per_step with 0 resolved (the widest layer's choice count, at most the batch).
size_t resolved_paths_per_step(const spec::Supernet& net, const Config& cfg);

// The gradients of one data-parallel training step as train_supernet takes it, for tests: the
// model of `weights` (laid out as weights::supernet_tensors) in training mode; path r of `paths`
// runs on share r of the n images (`images`: n CHW inputs as the network takes them) with its
// loss weighted by its share of the batch; this process computes the paths r with
// r mod ranks.size() == ranks.rank() and the gradients are summed over the ranks. Returns each
// parameter's gradient by tensor name (supernet_tensors' names), all zeros where no path reached
// it, and the batch's loss; and how many of the step's layer outputs were in NCHW memory instead
// of NHWC (channels-last, which trains about 1.5x faster here: docs/nas-job.md).
struct StepGradients {
  std::map<std::string, std::vector<float>> grad;
  double loss = 0;
  int64_t nchw_activations = 0;
};
StepGradients step_gradients(const spec::Supernet& net, const weights::TensorFile& weights,
                             std::span<const spec::Candidate> paths, std::span<const float> images,
                             std::span<const int64_t> labels, dist::Comm& ranks);

// Float forward (libtorch, BatchNorm in eval mode) of one candidate with weights from a
// TensorFile laid out as weights::supernet_tensors. `images` holds n images, each CHW, scaled
// as the network expects (floatnet::image_from_u8 with the weights' normalization). Returns
// n * classes logits.
std::vector<float> torch_forward(const spec::Supernet& net, const weights::TensorFile& weights,
                                 const spec::Candidate& candidate, std::span<const float> images,
                                 int n, int threads = 2);

// Top-1 accuracy (fraction) of `candidate` on images [begin, begin+count) of `ds`, normalized as
// the weights record.
double float_accuracy(const spec::Supernet& net, const weights::TensorFile& weights,
                      const spec::Candidate& candidate, const data::Dataset& ds, size_t begin,
                      size_t count, int threads = 2);

// Per-candidate BatchNorm recalibration, fused over the candidates' trie (docs/nas-job.md
// "Per-candidate BN recalibration"): before a candidate is judged, its BatchNorm statistics are
// re-estimated on `calib_n` training images run through its own path (SPOS); a BN's statistics
// depend only on the path up to it, so candidates that share a prefix share them, and each
// distinct prefix (a trie node) is computed once. Then every candidate's float top-1 accuracy on
// images [begin, begin+count) of `eval`, each node's output also computed once.
struct Recalibrated {
  std::vector<double> accuracy;  // per candidate (fraction), in the order given
  size_t nodes = 0;              // distinct (layer, prefix) ops: the trie's nodes below the root
  // MACs of the recalibration forwards per calibration image: over the trie, and candidate by
  // candidate (the MACs fusing saves: macs_alone - macs_fused)
  uint64_t macs_fused = 0, macs_alone = 0;
};
Recalibrated recalibrated_accuracy(const spec::Supernet& net, const weights::TensorFile& weights,
                                   std::span<const spec::Candidate> candidates,
                                   const data::Dataset& calib, size_t calib_n,
                                   const data::Dataset& eval, size_t begin, size_t count,
                                   int threads = 2);
// The same recalibration, giving each candidate its own weights: `weights` with every BatchNorm
// on the candidate's path (stem, its choices, head) holding the candidate's recalibrated
// statistics, the rest as given (metadata kept). What compile::quantize takes to quantize a
// candidate with its own statistics (weights::extract_subnet, then quantize).
std::vector<weights::TensorFile> recalibrated_weights(const spec::Supernet& net,
                                                      const weights::TensorFile& weights,
                                                      std::span<const spec::Candidate> candidates,
                                                      const data::Dataset& calib, size_t calib_n,
                                                      int threads = 2);

}  // namespace nasa::train
