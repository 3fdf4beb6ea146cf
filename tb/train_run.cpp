// Supernet training: determinism, loss going down, resume == uninterrupted, clear errors on a
// corrupt or mismatched checkpoint and on an output directory holding an earlier run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>

#include "nasa/data.h"
#include "nasa/float_eval.h"
#include "nasa/runtime.h"
#include "nasa/train.h"
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

TEST(TrainRun, DeterministicAndLowersLoss) {
  const auto net = nasa::spec::builtin_space("fmnist-mb");
  const auto a = fresh_dir("det_a"), b = fresh_dir("det_b");
  const auto ra = nasa::train::train_supernet(net, tiny_config(), a);
  const auto rb = nasa::train::train_supernet(net, tiny_config(), b);
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
