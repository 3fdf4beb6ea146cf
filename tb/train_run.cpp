// Supernet training: determinism, loss going down, resume == uninterrupted, clear errors on a
// corrupt or mismatched checkpoint and on an output directory holding an earlier run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <numeric>
#include <random>
#include <string>

#include "nasa/data.h"
#include "nasa/float_eval.h"
#include "nasa/runtime.h"
#include "nasa/supernet_weights.h"
#include "nasa/train.h"
#include "random_batch.h"
#include "thrown_message.h"

namespace {

namespace fs = std::filesystem;
using nasa::train::Config;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

fs::path test_root() {
  return fs::temp_directory_path() / ("nasa_train_test_" + std::to_string(getpid()));
}

// Removes this process's scratch directories at exit.
struct ScratchCleanup {
  ~ScratchCleanup() {
    std::error_code ec;
    fs::remove_all(test_root(), ec);
  }
} scratch_cleanup;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = test_root() / name;
  fs::remove_all(d);
  return d;
}

const nasa::data::Dataset& small_dataset() {
  static const nasa::data::Dataset ds = nasa::data::load_fashion_mnist("train", 1500);
  return ds;
}

// 30 steps of 32 images; the last 500 images are the validation split. One thread: the tests
// share the machine with other tests.
Config tiny_config() {
  Config c;
  c.epochs = 1;
  c.batch = 32;
  c.lr = 0.4;
  c.seed = 7;
  c.threads = 1;
  c.train_images = 960;
  c.val_images = 500;
  c.eval_candidates = 2;
  c.eval_images = 200;
  c.dataset = small_dataset();
  return c;
}

// 32 images: one step an epoch, enough to write every file of a run, for the error-path tests.
Config one_step_config() {
  Config c = tiny_config();
  c.train_images = 32;
  return c;
}

// Trains into `dir`; returns the weights written there (what a refused run must leave alone).
std::string trained_weights(const nasa::spec::Supernet& net, const Config& cfg,
                            const fs::path& dir) {
  nasa::train::train_supernet(net, cfg, dir);
  return slurp(dir / "weights.safetensors");
}

std::string expect_error(const nasa::spec::Supernet& net, const Config& cfg, const fs::path& dir) {
  return nasa::testing::message_of<std::exception>(
      [&] { nasa::train::train_supernet(net, cfg, dir); }, "error");
}

// One path per step (plain SPOS; FairSamplingTrains below trains the default, fair sampling).
TEST(TrainRun, DeterministicAndLowersLoss) {
  const auto net = nasa::spec::builtin_space("fmnist-mb");
  const auto a = fresh_dir("det_a"), b = fresh_dir("det_b");
  Config cfg = tiny_config();
  cfg.paths_per_step = 1;
  const auto ra = nasa::train::train_supernet(net, cfg, a);
  const auto rb = nasa::train::train_supernet(net, cfg, b);
  ASSERT_EQ(ra.step_losses.size(), 30u);
  EXPECT_TRUE(ra.complete);
  EXPECT_EQ(ra.step_losses, rb.step_losses);
  EXPECT_EQ(slurp(a / "weights.safetensors"), slurp(b / "weights.safetensors"));
  EXPECT_FALSE(slurp(a / "weights.safetensors").empty());
  const auto& l = ra.step_losses;
  const double first = std::accumulate(l.begin(), l.begin() + 10, 0.0) / 10;
  const double last = std::accumulate(l.end() - 10, l.end(), 0.0) / 10;
  for (double x : l) std::printf("%.4f ", x);
  std::printf("\nmean loss of the first 10 steps %.4f, of the last 10 %.4f\n", first, last);
  EXPECT_LT(last, first - 0.05);
  EXPECT_LT(last, l.front() - 0.05);
  ASSERT_EQ(ra.candidates.size(), 2u);

  // The output is what `nasa eval --supernet DIR` loads, and the libtorch float model of the
  // trained weights still agrees with floatnet::forward.
  const auto loaded = nasa::runtime::load_supernet_dir(a);
  EXPECT_EQ(loaded.net, net);
  const auto img = nasa::floatnet::image_from_u8(small_dataset().image(1400).data(), 28, 28, 1);
  const auto& cand = ra.candidates[0].arch;
  const auto want = nasa::floatnet::forward(net, loaded.weights, cand, img);
  const auto got = nasa::train::torch_forward(net, loaded.weights, cand, img.v, 1);
  for (size_t k = 0; k < want.size(); ++k)
    EXPECT_NEAR(got[k], want[k], 1e-4 * (1 + std::fabs(want[k])));
  // float_accuracy on the exported weights equals the accuracy measured during training.
  EXPECT_DOUBLE_EQ(
      nasa::train::float_accuracy(net, loaded.weights, cand, small_dataset(), 1000, 200),
      ra.candidates[0].val_accuracy);
  EXPECT_TRUE(fs::exists(a / "train_log.jsonl"));
  EXPECT_TRUE(fs::exists(a / "train_log.csv"));
  EXPECT_TRUE(fs::exists(a / "checkpoint.pt"));
}

// Fair sampling: within a step each layer's choices are taken equally often (to one), every
// choice at least once when there are as many paths as choices; one path is a plain draw.
TEST(TrainRun, FairPathsTakeEveryChoiceEquallyOften) {
  const auto net = nasa::spec::builtin_space("fmnist-mb14");
  std::mt19937_64 rng(3);
  for (const size_t n : {1, 2, 4, 5, 6, 7, 12, 13}) {
    for (int draw = 0; draw < 20; ++draw) {
      const auto paths = nasa::train::sample_paths(net, n, rng);
      ASSERT_EQ(paths.size(), n);
      for (const auto& p : paths) nasa::spec::validate_candidate(net, p);
      for (size_t l = 0; l < net.layers.size(); ++l) {
        const size_t m = net.layers[l].choices.size();
        std::map<int, size_t> count;
        for (const auto& p : paths) ++count[p[l]];
        for (size_t c = 0; c < m; ++c) {
          const size_t k = count[static_cast<int>(c)];
          EXPECT_TRUE(k == n / m || k == (n + m - 1) / m)
              << "n " << n << " layer " << l << " choice " << c << " taken " << k << " times";
        }
      }
    }
  }
  // the permutations are random: two steps' paths differ
  EXPECT_NE(nasa::train::sample_paths(net, 6, rng), nasa::train::sample_paths(net, 6, rng));
}

// With as many paths as the widest layer has choices, one step reaches every choice of every
// layer (a gradient for each choice's tensors); one path reaches one choice per layer; the
// activations stay channels-last throughout.
TEST(TrainRun, FairStepReachesEveryChoice) {
  const auto net = nasa::spec::builtin_space("fmnist-mb14");
  const auto w = nasa::weights::random_weights(net, 5);
  const auto batch = nasa::testing::random_batch(net, 24, 9);
  std::mt19937_64 rng(9);
  size_t widest = 0;
  for (const auto& layer : net.layers) widest = std::max(widest, layer.choices.size());
  nasa::dist::Comm self;
  for (const size_t n_paths : {widest, size_t{1}}) {
    const auto paths = nasa::train::sample_paths(net, n_paths, rng);
    const auto g = nasa::train::step_gradients(net, w, paths, batch.images, batch.labels, self);
    // every layer's output channels-last, the one-channel input's stem included
    EXPECT_EQ(g.nchw_activations, 0) << n_paths << " paths";
    for (size_t l = 0; l < net.layers.size(); ++l) {
      for (size_t c = 0; c < net.layers[l].choices.size(); ++c) {
        if (net.layers[l].choices[c].kind == nasa::spec::OpKind::Skip) continue;
        const std::string prefix =
            "layers." + std::to_string(l) + ".choices." + std::to_string(c) + ".";
        bool reached = false;
        for (const auto& [name, v] : g.grad) {
          if (!name.starts_with(prefix)) continue;
          for (float x : v) reached = reached || x != 0.0f;
        }
        bool on_path = false;
        for (const auto& p : paths) on_path = on_path || p[l] == static_cast<int>(c);
        EXPECT_EQ(reached, on_path) << n_paths << " paths: " << prefix;
        if (n_paths == widest) {
          EXPECT_TRUE(on_path) << prefix;
        }
      }
    }
  }
}

// Training with fair sampling (6 paths a step; the default for fmnist-mb, whose widest layer has
// 6 choices): lowers the loss, is its own run (other weights than one path per step), and an
// impossible path count is a clear error.
TEST(TrainRun, FairSamplingTrains) {
  const auto net = nasa::spec::builtin_space("fmnist-mb");
  Config cfg = tiny_config();
  cfg.paths_per_step = 6;
  const auto dir = fresh_dir("fair");
  const auto r = nasa::train::train_supernet(net, cfg, dir);
  const auto& l = r.step_losses;
  ASSERT_EQ(l.size(), 30u);
  const double first = std::accumulate(l.begin(), l.begin() + 10, 0.0) / 10;
  const double last = std::accumulate(l.end() - 10, l.end(), 0.0) / 10;
  EXPECT_LT(last, first - 0.05);
  Config one_path = tiny_config();
  one_path.paths_per_step = 1;
  EXPECT_NE(slurp(dir / "weights.safetensors"),
            trained_weights(net, one_path, fresh_dir("fair_plain")));
  for (const int bad : {-1, 33}) {
    Config c = one_step_config();
    c.paths_per_step = bad;
    const std::string e = expect_error(net, c, fresh_dir("fair_bad"));
    EXPECT_NE(e.find("--paths-per-step"), std::string::npos) << e;
  }
}

TEST(TrainRun, ResumeEqualsUninterrupted) {
  const auto net = nasa::spec::builtin_space("fmnist-mb");
  Config cfg = tiny_config();
  cfg.epochs = 2;
  cfg.batch = 16;
  cfg.train_images = 160;  // 10 steps per epoch
  cfg.optimizer = "sgd";
  const auto full = fresh_dir("full"), part = fresh_dir("part");
  const auto r_full = nasa::train::train_supernet(net, cfg, full);
  EXPECT_EQ(r_full.steps_done, 20);

  Config first = cfg;
  first.stop_after_epochs = 1;
  const auto r1 = nasa::train::train_supernet(net, first, part);
  EXPECT_FALSE(r1.complete);
  EXPECT_EQ(r1.epochs_done, 1);
  EXPECT_NE(slurp(part / "weights.safetensors"), slurp(full / "weights.safetensors"));

  Config second = cfg;
  second.resume = true;
  const auto r2 = nasa::train::train_supernet(net, second, part);
  EXPECT_TRUE(r2.resumed);
  EXPECT_TRUE(r2.complete);
  EXPECT_EQ(r2.steps_done, 20);
  EXPECT_EQ(slurp(part / "weights.safetensors"), slurp(full / "weights.safetensors"));

  // Resuming with other settings is refused, naming the setting.
  Config other = second;
  other.batch = 32;
  const std::string e = expect_error(net, other, part);
  EXPECT_NE(e.find("checkpoint.pt"), std::string::npos) << e;
  EXPECT_NE(e.find("batch"), std::string::npos) << e;
}

TEST(TrainRun, CorruptCheckpointIsAClearError) {
  const auto net = nasa::spec::builtin_space("fmnist-mb");
  Config cfg = one_step_config();
  cfg.epochs = 2;
  cfg.stop_after_epochs = 1;
  const auto dir = fresh_dir("corrupt");
  const std::string before = trained_weights(net, cfg, dir);
  {
    const std::string ck = slurp(dir / "checkpoint.pt");
    std::ofstream f(dir / "checkpoint.pt", std::ios::binary | std::ios::trunc);
    f << ck.substr(0, ck.size() / 2);
  }
  Config resume = cfg;
  resume.resume = true;
  resume.stop_after_epochs = 0;
  const std::string e = expect_error(net, resume, dir);
  EXPECT_NE(e.find("checkpoint.pt"), std::string::npos) << e;
  EXPECT_NE(e.find("corrupt"), std::string::npos) << e;
  EXPECT_EQ(slurp(dir / "weights.safetensors"), before);  // nothing overwritten

  std::ofstream(dir / "checkpoint.pt", std::ios::trunc) << "garbage";
  const std::string e2 = expect_error(net, resume, dir);
  EXPECT_NE(e2.find("corrupt"), std::string::npos) << e2;
}

TEST(TrainRun, RefusesToOverwriteOrMix) {
  const auto net = nasa::spec::builtin_space("fmnist-mb");
  Config cfg = one_step_config();
  cfg.eval_candidates = 0;
  const auto dir = fresh_dir("refuse");
  const std::string before = trained_weights(net, cfg, dir);

  std::string e = expect_error(net, cfg, dir);  // no --resume, no --force
  EXPECT_NE(e.find("already holds"), std::string::npos) << e;
  EXPECT_EQ(slurp(dir / "weights.safetensors"), before);

  auto other = net;  // a different spec in the same directory
  other.head.channels = 64;
  Config resume = cfg;
  resume.resume = true;
  e = expect_error(other, resume, dir);
  EXPECT_NE(e.find("differs"), std::string::npos) << e;

  Config missing = cfg;
  missing.resume = true;
  e = expect_error(net, missing, fresh_dir("nothing"));
  EXPECT_NE(e.find("nothing to resume"), std::string::npos) << e;

  Config force = cfg;
  force.force = true;
  force.seed = 8;
  EXPECT_NO_THROW(nasa::train::train_supernet(net, force, dir));
  EXPECT_NE(slurp(dir / "weights.safetensors"), before);
}

}  // namespace

// Augmentation (shift, flip) and label smoothing: deterministic in the seed, and they change
// what is trained (the same settings twice give the same weights, other settings others).
TEST(TrainRun, AugmentationIsDeterministic) {
  const auto net = nasa::spec::builtin_space("fmnist-mb14");
  Config cfg = tiny_config();
  cfg.augment_shift = 2;
  cfg.augment_flip = true;
  cfg.label_smoothing = 0.1;
  const auto a = fresh_dir("aug_a"), b = fresh_dir("aug_b"), plain = fresh_dir("aug_plain");
  const auto ra = nasa::train::train_supernet(net, cfg, a);
  const auto rb = nasa::train::train_supernet(net, cfg, b);
  const auto rp = nasa::train::train_supernet(net, tiny_config(), plain);
  EXPECT_EQ(ra.step_losses, rb.step_losses);
  EXPECT_EQ(slurp(a / "weights.safetensors"), slurp(b / "weights.safetensors"));
  EXPECT_NE(ra.step_losses, rp.step_losses);
  cfg.augment_shift = 9;
  EXPECT_NE(expect_error(net, cfg, fresh_dir("aug_bad")).find("--augment-shift must be in [0, 8]"),
            std::string::npos);
}

// Per-candidate BN recalibration over the trie gives each candidate exactly what recalibrating
// it alone gives, and computes each shared prefix once.
TEST(TrainRun, FusedRecalibrationEqualsOneByOne) {
  const auto net = nasa::spec::builtin_space("fmnist-mb14");
  const auto dir = fresh_dir("recal");
  nasa::train::train_supernet(net, one_step_config(), dir);
  const auto w = nasa::runtime::load_supernet_dir(dir).weights;
  // three share the first three layers, two of them the first five; one is a duplicate
  const std::vector<nasa::spec::Candidate> cands = {{0, 1, 2, 3, 4, 5},
                                                    {0, 1, 2, 3, 4, 0},
                                                    {0, 1, 2, 0, 1, 2},
                                                    {3, 4, 4, 5, 0, 1},
                                                    {0, 1, 2, 3, 4, 5}};
  const auto& ds = small_dataset();
  const auto fused = nasa::train::recalibrated_accuracy(net, w, cands, ds, 64, ds, 1000, 300, 1);
  ASSERT_EQ(fused.accuracy.size(), cands.size());
  // nodes: 0-1-2 (3), then 3-4 with leaves 5 and 0 (2 + 2), 0-1-2 (3), and 3-4-4-5-0-1 (6)
  EXPECT_EQ(fused.nodes, 16u);
  uint64_t alone = 0;
  for (size_t i = 0; i < cands.size(); ++i) {
    const auto one =
        nasa::train::recalibrated_accuracy(net, w, {&cands[i], 1}, ds, 64, ds, 1000, 300, 1);
    EXPECT_EQ(one.accuracy[0], fused.accuracy[i]) << "candidate " << i;
    EXPECT_EQ(one.macs_fused, one.macs_alone);
    alone += one.macs_alone;
  }
  EXPECT_EQ(fused.macs_alone, alone);
  EXPECT_LT(fused.macs_fused, fused.macs_alone);
  EXPECT_EQ(fused.accuracy[0], fused.accuracy[4]);
  std::printf("recalibration MACs per image: %llu fused, %llu one by one\n",
              static_cast<unsigned long long>(fused.macs_fused),
              static_cast<unsigned long long>(fused.macs_alone));
}

// Each candidate's recalibrated weights carry its own statistics: evaluated alone they give the
// fused recalibration's accuracy, and a BatchNorm on the path differs from the supernet's.
TEST(TrainRun, RecalibratedWeightsCarryEachCandidatesStatistics) {
  const auto net = nasa::spec::builtin_space("fmnist-mb14");
  const auto dir = fresh_dir("recal_weights");
  nasa::train::train_supernet(net, one_step_config(), dir);
  const auto w = nasa::runtime::load_supernet_dir(dir).weights;
  const std::vector<nasa::spec::Candidate> cands = {
      {0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 1, 5}, {3, 4, 4, 5, 0, 1}, {0, 1, 2, 3, 4, 5}};
  const auto& ds = small_dataset();
  const auto fused = nasa::train::recalibrated_accuracy(net, w, cands, ds, 64, ds, 1000, 300, 1);
  const auto ws = nasa::train::recalibrated_weights(net, w, cands, ds, 64, 1);
  ASSERT_EQ(ws.size(), cands.size());
  auto values = [](const nasa::weights::TensorFile& f, const std::string& name) {
    const auto v = f.at(name).f32();
    return std::vector<float>(v.begin(), v.end());
  };
  for (size_t i = 0; i < cands.size(); ++i) {
    EXPECT_EQ(ws[i].metadata, w.metadata);
    // one image's worth: the two forwards batch the images differently
    EXPECT_NEAR(nasa::train::float_accuracy(net, ws[i], cands[i], ds, 1000, 300, 1),
                fused.accuracy[i], 1.01 / 300)
        << "candidate " << i;
    EXPECT_NE(values(ws[i], "head.bn.running_mean"), values(w, "head.bn.running_mean"));
  }
  // candidates 0 and 1 share layers 0-3, so those statistics; their heads differ (layer 4
  // changes the shape: no residual path that an untrained block could leave as the identity)
  const std::string l4 = "layers.3.choices.3";
  bool any_bn = false;
  for (const auto& [name, t] : ws[0].tensors) {
    if (name.starts_with(l4) && name.ends_with("running_var")) {
      any_bn = true;
      EXPECT_EQ(values(ws[0], name), values(ws[1], name)) << name;
      EXPECT_NE(values(ws[0], name), values(w, name)) << name;
    }
  }
  EXPECT_TRUE(any_bn);
  EXPECT_NE(values(ws[0], "head.bn.running_mean"), values(ws[1], "head.bn.running_mean"));
  for (const auto& [name, t] : ws[0].tensors) {
    EXPECT_EQ(values(ws[0], name), values(ws[3], name)) << name;  // the duplicate
  }
}
