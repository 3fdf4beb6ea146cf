// The NAS job end to end (`nasa run`, `make run`): train the supernet (or reuse a trained one of
// the same spec, seed and settings), search it with random and evolutionary search on the
// accelerator (fused batches), re-evaluate the top candidates on the test set in int8 and float,
// fine-tune the chosen one standalone from its inherited weights, quantize it, cross-check it on
// the RTL, and write result.json, report.md and pareto.svg under runs/<name>/.
// The header is torch-free; the implementation lives in nasa_train (it trains with libtorch).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "nasa/runtime.h"
#include "nasa/search.h"
#include "nasa/spec.h"
#include "nasa/timeline.h"
#include "nasa/train.h"

namespace nasa::pipeline {

struct Options {
  spec::Supernet net;
  std::filesystem::path runs_dir = "runs";
  // Run directory runs_dir/<name>. Empty: "<space>-seed<seed>", or the first of "-2", "-3", ...
  // appended that does not exist yet. A given name that exists is an error (never overwritten),
  // unless `resume` is set.
  std::string name;
  // Continue the interrupted run `name` (its run.json must hold the same settings): finished
  // trainings are reused, an interrupted one continues from its last checkpoint, the rest is
  // redone; result.json comes out identical to an uninterrupted run's. A run that does not
  // exist yet is started; a complete one (result.json) is left as it is.
  bool resume = false;
  uint64_t seed = 1;  // training, search and fine-tuning seeds derive from it
  // The data (docs/data.md): empty, Fashion-MNIST (the last 10,000 training images the
  // validation split); else a dataset directory, its validation split `val_split` (a count or a
  // fraction, default 0.1) chosen with `seed`.
  std::filesystem::path data;
  std::string val_split;
  // Supernet training (its seed is `seed`). Trained supernets are kept under
  // runs_dir/supernets/ and reused when spec, seed and settings match.
  train::Config train;
  // A trained supernet directory (supernet.json of `net`, weights.safetensors) to search instead
  // of training one: `train` is then unused, and result.json records the directory and the
  // weights' SHA-256.
  std::filesystem::path trained_supernet;
  // Evolution (SPOS protocol); random search runs with the same budget and seed for comparison.
  search::SearchConfig search;
  size_t val_images = 500;    // search objective: the first of the validation split
  size_t calib_images = 256;  // activation calibration: the first training images
  // Measured: from the 4-epoch supernet's weights, 3-2-4-3-1-0 reached 87.0% float validation
  // accuracy after 2 epochs at lr 0.05, 90.3% after 3 at 0.2 and 91.7% after 5 at 0.2.
  int finetune_epochs = 5;
  double finetune_lr = 0.2;
  // fine-tuning augmentation (train::Config::augment_shift, augment_flip)
  int finetune_shift = 0;
  bool finetune_flip = false;
  double finetune_smoothing = 0;  // fine-tuning's label smoothing (train::Config)
  std::string preset;  // the `--preset` the options came from, recorded in result.json ("": none)
  // Finalists (docs/nas-job.md "Finalists"): the top `finalists` of each search, each with its
  // BatchNorm statistics recalibrated on `recal_images` training images (at most as many as the
  // training split has; 0: the supernet's),
  // quantized with them and ranked on the first `finalist_images` of the validation split (0: all
  // of it); the first is the result.
  size_t finalists = 5;
  size_t recal_images = 2048;
  size_t finalist_images = 0;
  size_t top_n = 5;            // finalists evaluated on the test set
  size_t test_images = 10000;  // of the test set
  size_t rtl_images = 256;     // RTL cross-check of the final model (0: skipped)
  std::string hw_config = "sim";
  runtime::DeviceFactory ref_factory;  // backend of search and test evaluation
  runtime::DeviceFactory rtl_factory;  // the Verilated model; required when rtl_images > 0
  std::function<void(const std::string&)> log;  // one status line at a time
};

using report::Stage;  // name, seconds, what it did (timeline.svg draws them)

struct Result {
  std::filesystem::path dir;
  nlohmann::json result;  // what result.json holds
  std::vector<Stage> stages;
  std::string summary;  // the final table, as printed
  bool complete_before = false;  // resume found the run complete: nothing was done
};

// A named budget for `nasa run` (`--preset`, docs/nas-job.md "Presets"): the defaults of the
// options it names; an option given on the command line wins. `max_macs` is the search's MAC
// limit for Fashion-MNIST-sized spaces: it applies when the space's smallest candidate is within
// it (else the search runs without a MAC limit, and says so).
struct Preset {
  std::string name;
  std::string summary;
  int epochs = 2;  // supernet training
  int finetune_epochs = 5;
  int finetune_shift = 0;  // fine-tuning augmentation (train::Config::augment_shift)
  bool finetune_flip = false;
  double finetune_smoothing = 0;  // fine-tuning's label smoothing
  uint64_t max_macs = 0;
};
const std::vector<Preset>& presets();
// The preset called `name`; throws std::invalid_argument naming the available ones.
const Preset& find_preset(std::string_view name);

// Candidates judged as the job's finalists are (docs/nas-job.md "Finalists"): each with its own
// recalibrated BatchNorm statistics (train::recalibrated_weights on the first `recal_images` of
// `train_set`; 0: the supernet's), then its subnet quantized on its own (activation scales
// calibrated on the first `calib_images`) into a runtime on `cfg` whose supernet is the candidate
// alone: evaluate it as Candidate(layers, 0).
struct Recalibrated {
  weights::TensorFile weights;  // supernet layout, the candidate's statistics on its path
  runtime::Runtime rt;
};
std::vector<Recalibrated> recalibrated_candidates(
    const runtime::FloatSupernet& sn, std::span<const spec::Candidate> cands,
    const data::Dataset& train_set, size_t recal_images, size_t calib_images, const hw::Config& cfg,
    const runtime::DeviceFactory& factory, int threads);

// Checks everything that can be checked before hours of work (settings, constraints against the
// cheapest candidate, the run directory) and throws std::invalid_argument /
// search::SearchError naming the problem.
void preflight(const Options& o);

// Runs the job. Throws on any error; files of earlier runs are never touched.
Result run(const Options& o);

// Directory of the cached trained supernet for these options (runs_dir/supernets/...).
std::filesystem::path supernet_dir(const Options& o);

}  // namespace nasa::pipeline
