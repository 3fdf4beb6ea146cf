#include "nasa/pipeline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>

#include "nasa/compiler.h"
#include "nasa/data.h"
#include "nasa/dist.h"
#include "nasa/files.h"
#include "nasa/float_eval.h"
#include "nasa/interrupt.h"
#include "nasa/parallel.h"
#include "nasa/report.h"
#include "nasa/supernet_weights.h"

namespace nasa::pipeline {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Fashion-MNIST: the validation split is the last 10,000 of the 60,000 training images.
constexpr size_t kTrainSet = 60000, kValSplit = 10000, kTestSet = 10000;
// Test-set evaluation on the reference backend runs in pieces of this many images (the memory
// image of one program holds every image and its activations).
constexpr size_t kEvalChunk = 1000;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void say(const Options& o, const std::string& line) {
  if (o.log) o.log(line);
}

// Every file a run writes is named as it is written; a directory of files with what it holds.
void wrote(const Options& o, const fs::path& p, std::string_view holding = {}) {
  say(o, wrote_message(p, holding));
}

// A file-system-friendly form of a supernet name.
std::string safe_name(std::string s) {
  for (char& c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) c = '_';
  }
  return s.empty() ? std::string("supernet") : s;
}

// The training settings that decide what a trained supernet is (the cache key with the spec).
// The data a run uses, as its records name it: nothing for the default Fashion-MNIST (so the
// default job's keys stay what they were), else the directory and the validation split.
json data_key(const Options& o) {
  if (o.data.empty() && o.val_split.empty()) return nullptr;
  return {{"data", o.data.empty() ? std::string("fashion-mnist")
                                  : fs::absolute(o.data).lexically_normal().string()},
          {"val_split", o.val_split}};
}

json train_key(const Options& o) {
  const auto& t = o.train;
  json k = {{"epochs", t.epochs},
            {"batch", t.batch},
            {"optimizer", t.optimizer},
            {"lr", t.lr},
            {"weight_decay", t.weight_decay},
            {"paths_per_step", train::resolved_paths_per_step(o.net, t)},
            {"seed", o.seed},
            {"train_images", t.train_images},
            {"val_split_images", t.val_images},
            {"input_normalization", "per channel, training split"},
            // libtorch's CPU kernels split reductions by thread: results depend on the count
            {"threads", t.threads}};
  if (const json d = data_key(o); !d.is_null()) k["data"] = d;
  return k;
}

// What decided the supernet's weights: its training settings, or the trained directory given.
json supernet_record(const Options& o) {
  if (o.trained_supernet.empty()) return train_key(o);
  const fs::path w = o.trained_supernet / "weights.safetensors";
  std::ifstream in(w, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) throw std::runtime_error("cannot read " + w.string());
  return {{"trained_supernet", fs::absolute(o.trained_supernet).lexically_normal().string()},
          {"weights_sha256", runtime::sha256_hex(bytes)}};
}

void write_text(const fs::path& p, const std::string& s) { write_file_atomic(p, s); }

std::string pct(double f) { return fmt::format("{:.2f}%", 100.0 * f); }

// The fine-tuning's augmentation as the records show it.
json augment_json(const Options& o) {
  return {{"shift", o.finetune_shift},
          {"flip", o.finetune_flip},
          {"label_smoothing", o.finetune_smoothing}};
}

// Everything that decides a run's result.json: a resumed run must have the same.
json run_key(const Options& o) {
  // the pipeline runs both strategies with the run's seed: the record says so
  json search = report::search_settings_json(o.search);
  search["strategy"] = "both";
  search["seed"] = o.seed;
  json k = {{"spec", spec::to_json(o.net)},
            {"seed", o.seed},
            {"train", supernet_record(o)},
            {"search", search},
            {"finetune_epochs", o.finetune_epochs},
            {"finetune_lr", o.finetune_lr},
            {"finetune_augment", augment_json(o)},
            {"val_images", o.val_images},
            {"calib_images", o.calib_images},
            {"top", o.top_n},
            {"finalists", o.finalists},
            {"recal_images", o.recal_images},
            {"finalist_images", o.finalist_images},
            {"test_images", o.test_images},
            {"rtl_images", o.rtl_images},
            {"hw_config", o.hw_config}};
  if (const json d = data_key(o); !d.is_null()) k["data"] = d;  // (the default's key unchanged)
  return k;
}

// The first setting where `now` differs from `was` ("search.population: 6 vs 8"), or "".
std::string first_difference(const json& was, const json& now, const std::string& at = "") {
  for (const auto& [k, v] : now.items()) {
    const std::string key = at.empty() ? k : at + "." + k;
    if (!was.contains(k)) return fmt::format("{}: absent vs {}", key, v.dump());
    if (v.is_object() && was[k].is_object() && key != "spec") {
      const std::string d = first_difference(was[k], v, key);
      if (!d.empty()) return d;
    } else if (was[k] != v) {
      return key == "spec" ? std::string("the supernet spec")
                           : fmt::format("{}: {} vs {}", key, was[k].dump(), v.dump());
    }
  }
  return "";
}

// Whether `dir` holds nothing but temporaries of an interrupted write (a run killed between
// creating its directory and writing run.json).
bool starts_empty(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!is_atomic_temporary(e.path())) return false;
  }
  return true;
}

// Reopens the unfinished run `dir` of the same settings (--resume).
void reopen_run_dir(const Options& o, const fs::path& dir) {
  const fs::path key_file = dir / "run.json";
  if (!fs::exists(key_file) && starts_empty(dir)) return;  // killed before run.json was written
  if (!fs::exists(key_file)) {
    throw std::invalid_argument(fmt::format(
        "--resume: '{}' has no run.json, so it is not a run directory of nasa run (a run killed "
        "before it wrote run.json leaves at most a temporary, which --resume starts afresh)",
        dir.string()));
  }
  json was;
  try {
    std::ifstream in(key_file);
    was = json::parse(in);
  } catch (const json::exception& e) {
    throw std::invalid_argument(
        fmt::format("--resume: '{}' is not valid JSON: {}", key_file.string(), e.what()));
  }
  const std::string d = first_difference(was, run_key(o));
  if (!d.empty()) {
    throw std::invalid_argument(fmt::format(
        "--resume: run '{}' was started with other settings ({} now); resume with the same "
        "options or choose another --name",
        dir.string(), d));
  }
}

// Creates the run directory: never one that exists (earlier results are never touched).
fs::path make_run_dir(const Options& o) {
  fs::create_directories(o.runs_dir);
  if (!o.name.empty()) {
    const fs::path p = o.runs_dir / o.name;
    if (!fs::create_directory(p)) {
      throw std::invalid_argument(fmt::format(
          "run directory '{}' already exists: an earlier run's results are never overwritten; "
          "choose another --name or remove it",
          p.string()));
    }
    return p;
  }
  const std::string base = fmt::format("{}-seed{}", safe_name(o.net.name), o.seed);
  for (int k = 1;; ++k) {
    const fs::path p = o.runs_dir / (k == 1 ? base : fmt::format("{}-{}", base, k));
    if (fs::create_directory(p)) return p;
  }
}

// Splits `images` into chunks of kEvalChunk run in parallel, fn(k, begin, end) for chunk k, with
// a progress line per finished chunk.
void for_image_chunks(size_t images, const Options& o, const std::string& what,
                        const std::function<void(size_t, size_t, size_t)>& fn) {
  const size_t chunks = (images + kEvalChunk - 1) / kEvalChunk;
  const auto t0 = Clock::now();
  size_t done = 0;
  std::mutex log_mu;
  parallel_for(chunks, o.train.threads, [&](size_t k) {
    throw_if_interrupted(what.c_str());
    const size_t b = k * kEvalChunk, e = std::min(images, b + kEvalChunk);
    fn(k, b, e);
    const std::lock_guard<std::mutex> lock(log_mu);
    done += e - b;
    say(o, fmt::format("{}: {}/{} images, {:.0f} s", what, done, images, since(t0)));
  });
}

// Int8 correct counts of `cands` on images, fused on the runtime's device, in parallel chunks
// (each chunk is its own batch run; the counts add up exactly). Each chunk runs on a copy of the
// runtime: a device per run keeps the threads apart.
std::vector<size_t> fused_correct(const runtime::Runtime& rt,
                                  std::span<const spec::Candidate> cands,
                                  std::span<const std::vector<uint8_t>> images,
                                  std::span<const uint8_t> labels, uint32_t mini_batch,
                                  const Options& o, const std::string& what) {
  std::vector<std::vector<size_t>> per((images.size() + kEvalChunk - 1) / kEvalChunk);
  compile::BatchOptions bo;
  bo.mini_batch = mini_batch;
  for_image_chunks(images.size(), o, what, [&](size_t k, size_t b, size_t e) {
    runtime::Runtime local = rt;
    per[k] = local.evaluate_fused(cands, 0, images.subspan(b, e - b), labels.subspan(b, e - b), bo)
                 .correct;
  });
  std::vector<size_t> correct(cands.size(), 0);
  for (const auto& c : per) {
    for (size_t i = 0; i < cands.size(); ++i) correct[i] += c.at(i);
  }
  return correct;
}

// One candidate on the runtime's device, in parallel chunks: correct count and the logits of
// every image in order.
runtime::EvalResult eval_chunked(const runtime::Runtime& rt, const spec::Candidate& c,
                                 std::span<const std::vector<uint8_t>> images,
                                 std::span<const uint8_t> labels, const Options& o,
                                 const std::string& what) {
  std::vector<runtime::EvalResult> per((images.size() + kEvalChunk - 1) / kEvalChunk);
  for_image_chunks(images.size(), o, what, [&](size_t k, size_t b, size_t e) {
    runtime::Runtime local = rt;
    per[k] = local.evaluate(c, images.subspan(b, e - b), labels.subspan(b, e - b));
  });
  runtime::EvalResult all;
  all.candidate = c;
  for (const auto& r : per) {
    all.images += r.images;
    all.correct += r.correct;
    all.logits.insert(all.logits.end(), r.logits.begin(), r.logits.end());
    all.cycles += r.cycles;
    all.macs += r.macs;
  }
  return all;
}

// `val_images`: the search's, for the 95% confidence interval of val_accuracy.
json candidate_entry(const search::Evaluated& e, size_t val_images) {
  const auto ci = search::accuracy_ci95(e.correct, val_images);
  return {{"arch", spec::format_candidate(e.arch)},
          {"val_accuracy", e.val_accuracy},
          {"val_ci95", {ci.lo, ci.hi}},
          {"macs_per_image", e.macs},
          {"params", e.params},
          {"cycles_per_image_alone", e.cycles}};
}

}  // namespace

fs::path supernet_dir(const Options& o) {
  const json key = {{"spec", spec::to_json(o.net)}, {"train", train_key(o)}};
  const std::string d = key.dump();
  const std::string h = runtime::sha256_hex(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(d.data()), d.size()));
  return o.runs_dir / "supernets" /
         fmt::format("{}-seed{}-{}", safe_name(o.net.name), o.seed, h.substr(0, 10));
}

namespace {

// The image counts asked for against the data's: validation split, training images, test set.
void check_sizes(const Options& o, size_t val, size_t train, size_t test) {
  auto bad = [](const std::string& m) { throw std::invalid_argument(m); };
  if (o.val_images < 1 || o.val_images > val) {
    bad(fmt::format("--val-images {}: expected 1..{} (the validation split)", o.val_images, val));
  }
  if (o.calib_images < 1 || o.calib_images > train) {
    bad(fmt::format("--calib {}: expected 1..{}", o.calib_images, train));
  }
  if (o.finalist_images > val) {
    bad(fmt::format("--finalist-images {}: expected 0..{} (the validation split; 0: all)",
                    o.finalist_images, val));
  }
  if (test == 0) bad("the data has no test split (docs/data.md): `nasa run` tests on it");
  if (o.test_images < 1 || o.test_images > test) {
    bad(fmt::format("--test-images {}: expected 1..{}", o.test_images, test));
  }
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> p = {
      {"default", "the 15-minute job of `make run`", 2, 25, 0, true, 0.1, 1'500'000},
      {"long", "about 25 minutes: longer training, smaller networks", 4, 120, 0, true, 0.1,
       1'000'000},
  };
  return p;
}

const Preset& find_preset(std::string_view name) {
  std::vector<std::string> names;
  for (const auto& p : presets()) {
    if (p.name == name) return p;
    names.push_back(p.name);
  }
  throw std::invalid_argument(
      fmt::format("--preset '{}': unknown (available: {})", name, fmt::join(names, ", ")));
}

std::vector<Recalibrated> recalibrated_candidates(
    const runtime::FloatSupernet& sn, std::span<const spec::Candidate> cands,
    const data::Dataset& train_set, size_t recal_images, size_t calib_images, const hw::Config& cfg,
    const runtime::DeviceFactory& factory, int threads) {
  std::vector<weights::TensorFile> w =
      recal_images
          ? train::recalibrated_weights(sn.net, sn.weights, cands, train_set, recal_images, threads)
          : std::vector<weights::TensorFile>(cands.size(), sn.weights);
  std::vector<Recalibrated> out;
  for (size_t i = 0; i < cands.size(); ++i) {
    const weights::Subnet s = weights::extract_subnet(sn.net, w[i], cands[i]);
    runtime::Runtime rt(
        compile::quantize(s.net, s.weights, train_set, calib_images, nullptr, threads), cfg,
        factory, "ref");
    out.push_back({std::move(w[i]), std::move(rt)});
  }
  return out;
}

void preflight(const Options& o) {
  auto bad = [](const std::string& m) { throw std::invalid_argument(m); };
  spec::validate(o.net);
  if (o.finetune_epochs < 1) bad(fmt::format("--finetune-epochs {}: expected >= 1", o.finetune_epochs));
  if (!(o.finetune_lr > 0)) bad(fmt::format("--finetune-lr {}: expected > 0", o.finetune_lr));
  if (!(o.finetune_smoothing >= 0 && o.finetune_smoothing < 1)) {
    bad(fmt::format("--finetune-smoothing {}: expected [0, 1)", o.finetune_smoothing));
  }
  if (o.finetune_shift < 0 || o.finetune_shift > 8) {
    bad(fmt::format("--finetune-shift {}: expected 0..8 pixels", o.finetune_shift));
  }
  if (o.top_n < 1) bad(fmt::format("--top {}: expected >= 1", o.top_n));
  if (o.finalists < 1) bad(fmt::format("--finalists {}: expected >= 1", o.finalists));
  // (against the default Fashion-MNIST's sizes here; a --data directory's are checked once it
  // is read, check_data)
  if (o.data.empty() && o.val_split.empty())
    check_sizes(o, kValSplit, kTrainSet - kValSplit, kTestSet);
  if (o.rtl_images > o.test_images) {
    bad(fmt::format("--rtl-images {}: at most --test-images ({})", o.rtl_images, o.test_images));
  }
  if (!o.ref_factory) bad("pipeline: no reference backend");
  if (o.rtl_images > 0 && !o.rtl_factory) {
    bad("pipeline: no RTL backend for the cross-check (built without the Verilated model?); "
        "pass --rtl-images 0 to skip it");
  }
  if (o.data.empty() && o.val_split.empty() && o.train.val_images != kValSplit) {
    bad(fmt::format("training validation split {}: the job uses the last {} training images",
                    o.train.val_images, kValSplit));
  }
  const auto& cfg = config_by_name(o.hw_config);
  for (auto s : {search::Strategy::Random, search::Strategy::Evolution}) {
    auto c = o.search;
    c.strategy = s;
    search::validate(c);
  }
  // Every op against the configuration (docs/cli.md "Preflight") and the constraints against
  // the space, before any training: both depend on shapes only, so any weights will do.
  const compile::QSupernet shapes = compile::quantize_shapes(o.net, o.seed);
  compile::preflight(shapes, cfg);
  search::check_feasible(shapes, cfg, o.search);
  if (!o.name.empty()) {
    if (o.name.find('/') != std::string::npos || o.name == "." || o.name == ".." ||
        o.name == "supernets") {
      bad(fmt::format("--name '{}': expected a plain directory name (not 'supernets')", o.name));
    }
    if (o.resume && fs::exists(o.runs_dir / o.name)) {
      reopen_run_dir(o, o.runs_dir / o.name);
    } else if (fs::exists(o.runs_dir / o.name)) {
      bad(fmt::format(
          "run directory '{}' already exists: an earlier run's results are never overwritten; "
          "choose another --name, remove it, or pass --resume to continue an interrupted run",
          (o.runs_dir / o.name).string()));
    }
  } else if (o.resume) {
    bad("--resume needs --name: the run to continue");
  }
}

namespace {

// A run that failed before it finished anything leaves no directory behind (its name stays
// free): the directory holds nothing but run.json. Not after Ctrl-C, which --resume continues.
void drop_if_unstarted(const fs::path& dir) {
  // (never throws: it runs while the run's own error is on its way)
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() != "run.json") return;
  }
  if (!ec) fs::remove_all(dir, ec);
}

// Stage 2, the searches: random, then evolution, same budget and seed, one fused batch per
// generation; evolution runs on the accelerator only the candidates random search did not
// (search::run_searches), each generation's work on the threads; on every rank of an mpirun job
// (docs/mpi.md), each with its share of the validation images' shards, every rank with the same
// results.
struct Searched {
  runtime::Runtime rt;
  std::vector<search::SearchResult> runs;
  dist::Traffic traffic;  // this rank's collectives of the searches (timing.json)
};
Searched search_both(const Options& o, const data::JobData& jd, const runtime::FloatSupernet& sn,
                     const hw::Config& cfg) {
  const data::Dataset& train_set = jd.train;
  const size_t val0 = jd.train_only();
  const auto val_imgs = train_set.byte_images(val0, val0 + o.val_images);
  const auto val_labels = train_set.label_range(val0, val0 + o.val_images);
  // the calibration too is shared by the ranks (the same scales on any number)
  Searched out{runtime::Runtime(compile::quantize(sn.net, sn.weights, train_set, o.calib_images,
                                                  &dist::world(), o.train.threads),
                                cfg, o.ref_factory, "ref"),
               {},
               {}};
  const std::array<search::Strategy, 2> strategies = {search::Strategy::Random,
                                                      search::Strategy::Evolution};
  dist::Comm comm = dist::world().dup();  // the searches' collectives, counted apart
  auto c = o.search;
  c.seed = o.seed;
  out.runs = search::run_searches(
      out.rt, cfg, c, strategies, val_imgs, val_labels,
      [&](const auto& p) { say(o, search::progress_line(p)); }, o.train.threads, &comm);
  for (auto& r : out.runs) r.calib_images = o.calib_images;
  out.traffic = comm.traffic();
  return out;
}

// Rank 0 of an mpirun job tells the other ranks (run_worker) the next step they take part in:
// "train" (the supernet, data-parallel), "search", "finetune" (data-parallel) or "done", with
// what rank 0 decided from the files it found (a directory, whether it resumes).
void tell_workers(json msg) {
  dist::Comm& w = dist::world();
  if (w.size() <= 1) return;
  std::string s = msg.dump();
  w.broadcast(s);
}

// The training settings of the chosen candidate's fine-tuning (stage 4), on every rank.
train::Config finetune_config(const Options& o, const spec::Candidate& best,
                              const weights::TensorFile& inherited) {
  train::Config fc = o.train;
  fc.seed = o.seed;
  fc.epochs = o.finetune_epochs;
  fc.lr = o.finetune_lr;
  fc.augment_shift = o.finetune_shift;
  fc.augment_flip = o.finetune_flip;
  fc.label_smoothing = o.finetune_smoothing;
  fc.arch = best;
  fc.init = inherited;
  fc.ranks = &dist::world();
  return fc;
}

// A rank other than 0 of an mpirun job (docs/mpi.md): takes its part in the steps rank 0 tells
// it (the supernet's training, the searches, the fine-tuning), with rank 0's settings and data;
// writes nothing.
void run_worker(const Options& o_in) {
  const data::JobData jd = data::job_data(o_in.data, o_in.val_split, o_in.seed, {});
  Options o = o_in;
  o.train.val_images = jd.val;
  o.train.dataset = jd.train;
  std::optional<runtime::FloatSupernet> sn;
  std::optional<spec::Candidate> best;
  for (;;) {
    std::string s;
    dist::world().broadcast(s);
    const json msg = json::parse(s);
    const std::string step = msg.at("step");
    if (step == "done") return;
    const fs::path dir = msg.at("dir").get<std::string>();
    if (step == "train") {
      train::Config tc = o.train;
      tc.seed = o.seed;
      tc.arch.reset();
      tc.init.reset();
      tc.resume = msg.at("resume");
      tc.force = msg.at("force");
      tc.ranks = &dist::world();
      train::train_supernet(o.net, tc, dir);
    } else if (step == "search") {
      sn = runtime::load_supernet_dir(dir);
      const Searched sr = search_both(o, jd, *sn, config_by_name(o.hw_config));
      const auto& evo = sr.runs.back();
      if (evo.best) best = evo.evaluated[*evo.best].arch;
    } else if (step == "finetune") {
      if (!sn || !best) throw std::logic_error("finetune before the search");
      train::Config fc = finetune_config(o, *best, sn->weights);
      fc.resume = msg.at("resume");
      fc.force = msg.at("force");
      train::train_supernet(o.net, fc, dir);
    } else {
      throw std::runtime_error(
          fmt::format("{}: unknown step '{}' from rank 0", dist::rank_label(), step));
    }
  }
}

Result run_in(const Options& o_in, fs::path& created) {
  preflight(o_in);
  // The data, read and checked before anything is written.
  const data::JobData jd =
      data::job_data(o_in.data, o_in.val_split, o_in.seed, [&](size_t done, size_t total) {
        say(o_in, fmt::format("data: {} / {} images decoded", done, total));
      });
  data::check_fits(jd.train, o_in.net.name, o_in.net.in_h, o_in.net.in_w, o_in.net.in_c,
                   o_in.net.classes, fmt::format("the data ({})", jd.source));
  data::check_fits(jd.test, o_in.net.name, o_in.net.in_h, o_in.net.in_w, o_in.net.in_c,
                   o_in.net.classes, fmt::format("the test split of {}", jd.source));
  check_sizes(o_in, jd.val, jd.train_only(), jd.test.size());
  Options o = o_in;  // training (supernet, fine-tuning) on this data
  o.train.val_images = jd.val;
  o.train.dataset = jd.train;
  const auto& cfg = config_by_name(o.hw_config);
  const auto t_all = Clock::now();
  Result res;
  const json key = run_key(o);  // run.json; its supernet record goes into result.json too
  const bool resuming = o.resume && fs::exists(o.runs_dir / o.name);
  if (resuming) {
    res.dir = o.runs_dir / o.name;
    const size_t stale = remove_stale_temporaries(res.dir);
    if (fs::exists(res.dir / "result.json")) {
      // result.json is written last: the run is complete, nothing is redone.
      std::ifstream in(res.dir / "result.json");
      res.result = json::parse(in);
      res.complete_before = true;
      res.summary = fmt::format("run '{}' is already complete; nothing to resume\n",
                                res.dir.string());
      return res;
    }
    if (!fs::exists(res.dir / "run.json")) {
      write_text(res.dir / "run.json", key.dump(2) + "\n");
      wrote(o, res.dir / "run.json");
    }
    say(o, fmt::format("run directory {} (resuming{})", res.dir.string(),
                       stale ? fmt::format("; {} partial files of the interrupted run removed",
                                           stale)
                             : std::string()));
  } else {
    res.dir = make_run_dir(o);
    created = res.dir;
    write_text(res.dir / "run.json", key.dump(2) + "\n");
    say(o, fmt::format("run directory {}", res.dir.string()));
    wrote(o, res.dir / "run.json");
  }
  auto stage = [&](const std::string& name, Clock::time_point t0, const std::string& detail) {
    res.stages.push_back({name, since(t0), detail});
    say(o, fmt::format("stage {} done in {:.1f} s: {}", name, res.stages.back().seconds, detail));
  };

  // 1. The supernet: the trained one given, or reuse a trained one of the same spec, seed and
  // settings, or train it.
  auto t0 = Clock::now();
  const fs::path sdir = o.trained_supernet.empty() ? supernet_dir(o) : o.trained_supernet;
  const fs::path marker = sdir / "trained.json";
  std::string train_detail;
  if (!o.trained_supernet.empty()) {
    train_detail = fmt::format("given {}", sdir.string());
    say(o, fmt::format("train: none, the supernet is the trained one in {}", sdir.string()));
  } else if (fs::exists(marker)) {
    train_detail = fmt::format("reused {}", sdir.string());
    say(o, fmt::format("train: {} (same spec, seed and settings)", train_detail));
  } else {
    train::Config tc = o.train;
    tc.seed = o.seed;
    tc.arch.reset();
    tc.init.reset();
    // An interrupted earlier training of the same key continues where it stopped.
    tc.resume = fs::exists(sdir / "checkpoint.pt");
    tc.force = !tc.resume && fs::exists(sdir);
    tc.ranks = &dist::world();
    tell_workers(
        {{"step", "train"}, {"dir", sdir.string()}, {"resume", tc.resume}, {"force", tc.force}});
    say(o, fmt::format("train: supernet {} for {} epochs into {}{}", o.net.name, tc.epochs,
                       sdir.string(), tc.resume ? " (resuming)" : ""));
    const train::Result tr = train::train_supernet(o.net, tc, sdir);
    json cands = json::array();
    for (const auto& c : tr.candidates) {
      cands.push_back(
          {{"arch", spec::format_candidate(c.arch)}, {"val_accuracy_float", c.val_accuracy}});
    }
    write_text(marker, json{{"spec", spec::to_json(o.net)},
                            {"train", train_key(o)},
                            {"epochs_done", tr.epochs_done},
                            {"seconds", tr.seconds},
                            {"random_candidates", cands}}
                           .dump(2));
    wrote(o, sdir, fmt::format("the trained supernet: {}, trained.json", train::kTrainFiles));
    train_detail = fmt::format("{} epochs, {:.0f} images/s", tr.epochs_done,
                               static_cast<double>(tr.steps_done) * tc.batch /
                                   std::max(tr.train_seconds, 1e-9));
  }
  runtime::FloatSupernet sn = runtime::load_supernet_dir(sdir);
  if (!(sn.net == o.net)) {
    throw std::runtime_error(fmt::format("'{}' holds supernet '{}', not the '{}' of this run",
                                         (sdir / "supernet.json").string(), sn.net.name,
                                         o.net.name));
  }
  stage("train", t0, train_detail);

  // 2. Search: random, then evolution, same budget and seed, one fused batch per generation.
  t0 = Clock::now();
  const data::Dataset& train_set = jd.train;
  const data::Dataset& test_set = jd.test;
  // the other ranks of an mpirun job search with this one (run_worker)
  tell_workers({{"step", "search"}, {"dir", sdir.string()}});
  const Searched sr = search_both(o, jd, sn, cfg);
  const std::vector<search::SearchResult>& runs = sr.runs;
  report::write_outputs(res.dir / "search", runs, resuming);
  wrote(o, res.dir / "search", "result.json, report.md, pareto.svg");
  const search::SearchResult& evo = runs.back();
  const search::SearchResult& rnd = runs.front();
  if (!evo.best) throw std::runtime_error("search: no candidate was evaluated");
  {
    const search::Evaluated& b = evo.evaluated[*evo.best];
    stage("search", t0,
          fmt::format("{} + {} candidates (random + evolution), best val {} ({})",
                      rnd.evaluated.size(), evo.evaluated.size(), pct(b.val_accuracy),
                      spec::format_candidate(b.arch)));
  }

  // 3. The finalists (docs/nas-job.md "Finalists"): the top candidates of both searches, each
  // with its BatchNorm statistics recalibrated on its own path (SPOS; fused over their trie) and
  // quantized with them, ranked by int8 accuracy on the whole validation split; the first is the
  // result. Then the first top_n on the test set, int8 and float, with those statistics.
  t0 = Clock::now();
  std::vector<search::Evaluated> fin_c;
  {
    std::set<spec::Candidate> have;
    for (const search::SearchResult* r : {&evo, &rnd}) {
      for (size_t i : r->top(o.finalists)) {
        if (have.insert(r->evaluated[i].arch).second) fin_c.push_back(r->evaluated[i]);
      }
    }
  }
  std::vector<spec::Candidate> fin_arch;
  for (const auto& e : fin_c) fin_arch.push_back(e.arch);
  const size_t n_val = o.finalist_images ? o.finalist_images : jd.val;
  // "a few hundred" training images, at most as many as there are
  const size_t n_recal = std::min(o.recal_images, jd.train_only());
  say(o, fmt::format("finalists: {} candidates, BN recalibrated on {} training images, int8 on {} "
                     "validation images",
                     fin_c.size(), n_recal, n_val));
  const std::vector<Recalibrated> fin_q = recalibrated_candidates(
      sn, fin_arch, train_set, n_recal, o.calib_images, cfg, o.ref_factory, o.train.threads);
  const auto val_all = train_set.byte_images(jd.train_only(), jd.train_only() + n_val);
  const auto val_all_labels = train_set.label_range(jd.train_only(), jd.train_only() + n_val);
  std::vector<size_t> fin_correct;
  const spec::Candidate alone(o.net.layers.size(), 0);
  for (size_t i = 0; i < fin_c.size(); ++i) {
    fin_correct.push_back(fused_correct(fin_q[i].rt, {&alone, 1}, val_all, val_all_labels,
                                        o.search.mini_batch, o, "finalists (int8)")
                              .at(0));
    say(o, fmt::format("finalist {} of {}: {}: {} on the validation split (search: {})", i + 1,
                       fin_c.size(), spec::format_candidate(fin_arch[i]),
                       pct(static_cast<double>(fin_correct.back()) / n_val),
                       pct(fin_c[i].val_accuracy)));
  }
  // most correct first; ties: fewer MACs, then the order above
  std::vector<size_t> fin_rank(fin_c.size());
  for (size_t i = 0; i < fin_rank.size(); ++i) fin_rank[i] = i;
  std::stable_sort(fin_rank.begin(), fin_rank.end(), [&](size_t a, size_t b) {
    if (fin_correct[a] != fin_correct[b]) return fin_correct[a] > fin_correct[b];
    return fin_c[a].macs < fin_c[b].macs;
  });
  const search::Evaluated best = fin_c.at(fin_rank.at(0));
  auto finalist_json = [&](size_t i) {
    json e = candidate_entry(fin_c[i], o.val_images);
    const auto ci = search::accuracy_ci95(fin_correct[i], n_val);
    e["finalist_val_accuracy_int8"] = static_cast<double>(fin_correct[i]) / n_val;
    e["finalist_val_ci95"] = {ci.lo, ci.hi};
    return e;
  };
  json finalists_json = json::array();
  for (size_t i : fin_rank) finalists_json.push_back(finalist_json(i));
  const auto test_imgs = test_set.byte_images(0, o.test_images);
  const auto test_labels = test_set.label_range(0, o.test_images);
  json top_json = json::array();
  for (size_t r = 0; r < fin_rank.size() && r < o.top_n; ++r) {
    const size_t i = fin_rank[r];
    json e = finalist_json(i);
    e["test_accuracy_int8"] =
        static_cast<double>(fused_correct(fin_q[i].rt, {&alone, 1}, test_imgs, test_labels,
                                          o.search.mini_batch, o, "test top (int8)")
                                .at(0)) /
        o.test_images;
    e["test_accuracy_float"] = train::float_accuracy(sn.net, fin_q[i].weights, fin_arch[i],
                                                     test_set, 0, o.test_images, o.train.threads);
    e["weights"] = n_recal ? "inherited, BatchNorm recalibrated" : "inherited";
    top_json.push_back(e);
    say(o, fmt::format("test {}: int8 {}, float {} ({} weights)", e["arch"].get<std::string>(),
                       pct(e["test_accuracy_int8"]), pct(e["test_accuracy_float"]),
                       e["weights"].get<std::string>()));
  }
  stage("finalists", t0,
        fmt::format("{} candidates x {} validation images, int8 (ref){}; the first {} on {} test "
                    "images; best {}",
                    fin_c.size(), n_val, n_recal ? ", BN recalibrated" : "", top_json.size(),
                    o.test_images, spec::format_candidate(best.arch)));

  // 4. The chosen candidate trained standalone from its inherited weights.
  t0 = Clock::now();
  train::Config fc = finetune_config(o, best.arch, sn.weights);
  const fs::path ft_dir = res.dir / "final" / "train";
  // A resumed run continues an interrupted fine-tuning from its last epoch's checkpoint.
  fc.resume = resuming && fs::exists(ft_dir / "checkpoint.pt");
  fc.force = resuming && !fc.resume;
  tell_workers(
      {{"step", "finetune"}, {"dir", ft_dir.string()}, {"resume", fc.resume}, {"force", fc.force}});
  say(o, fmt::format("finetune: {} for {} epochs (lr {}) from inherited weights",
                     spec::format_candidate(best.arch), fc.epochs, fc.lr));
  const train::Result ft = train::train_supernet(o.net, fc, ft_dir);
  const runtime::FloatSupernet tuned = runtime::load_supernet_dir(ft_dir);
  const weights::Subnet sub = weights::extract_subnet(tuned.net, tuned.weights, best.arch);
  const fs::path model_dir = res.dir / "final" / "model";
  fs::create_directories(model_dir);
  spec::save_supernet(model_dir / "supernet.json", sub.net);
  weights::write_safetensors(model_dir / "weights.safetensors", sub.weights);
  wrote(o, ft_dir, fmt::format("the fine-tuning: {}", train::kTrainFiles));
  wrote(o, model_dir, "the final model: supernet.json, weights.safetensors");
  const double ft_val = ft.candidates.empty() ? 0.0 : ft.candidates.front().val_accuracy;
  stage("finetune", t0,
        fmt::format("{} epochs, float val {}", ft.epochs_done, pct(ft_val)));

  // 5. The final model quantized on its own and evaluated on the test set.
  t0 = Clock::now();
  const spec::Candidate only(sub.net.layers.size(), 0);
  runtime::Runtime final_rt(
      compile::quantize(sub.net, sub.weights, train_set, o.calib_images, nullptr, o.train.threads),
      cfg, o.ref_factory, "ref");
  const runtime::EvalResult fin =
      eval_chunked(final_rt, only, test_imgs, test_labels, o, "test final (int8)");
  const double fin_int8 = static_cast<double>(fin.correct) / o.test_images;
  const double fin_float =
      train::float_accuracy(sub.net, sub.weights, only, test_set, 0, o.test_images, o.train.threads);
  const uint64_t cycles_per_image = search::CycleModel(final_rt.supernet(), cfg).cycles(only);
  stage("test-final", t0,
        fmt::format("int8 {}, float {} on {} test images", pct(fin_int8), pct(fin_float),
                    o.test_images));

  // 6. RTL cross-check of the final model on the first test images.
  json rtl = nullptr;
  bool rtl_ok = true;
  if (o.rtl_images > 0) {
    t0 = Clock::now();
    const auto imgs = std::span(test_imgs).subspan(0, o.rtl_images);
    const auto labels = std::span(test_labels).subspan(0, o.rtl_images);
    // One Verilated model per thread (each has its own context), images split between them;
    // the reference runs the same pieces, so logits and cycle counts compare piece by piece.
    const size_t pieces = std::min<size_t>(static_cast<size_t>(std::max(o.train.threads, 1)),
                                           o.rtl_images);
    std::vector<runtime::EvalResult> rtl_part(pieces), ref_part(pieces);
    std::mutex rtl_mu;
    parallel_for(pieces, o.train.threads, [&](size_t k) {
      const size_t b = o.rtl_images * k / pieces, e = o.rtl_images * (k + 1) / pieces;
      runtime::Runtime rtl_rt(final_rt.supernet(), cfg, o.rtl_factory, "rtl");
      rtl_rt.set_progress([&, k, t1 = Clock::now()](uint64_t cycles, uint32_t descs) {
        throw_if_interrupted("the RTL cross-check");
        const std::lock_guard<std::mutex> lock(rtl_mu);
        say(o, fmt::format("rtl[{}]: {:.1f} M cycles, {} descriptors, {:.0f} s", k, cycles / 1e6,
                           descs, since(t1)));
      });
      rtl_part[k] = rtl_rt.evaluate(only, imgs.subspan(b, e - b), labels.subspan(b, e - b));
      runtime::Runtime ref_rt = final_rt;
      ref_part[k] = ref_rt.evaluate(only, imgs.subspan(b, e - b), labels.subspan(b, e - b));
    });
    runtime::EvalResult rr, rf;
    for (size_t k = 0; k < pieces; ++k) {
      for (auto [dst, src] : {std::pair{&rr, &rtl_part[k]}, std::pair{&rf, &ref_part[k]}}) {
        dst->logits.insert(dst->logits.end(), src->logits.begin(), src->logits.end());
        dst->correct += src->correct;
        dst->cycles += src->cycles;
      }
    }
    rr.logits_sha256 = runtime::sha256_hex(std::span<const uint8_t>(
        reinterpret_cast<const uint8_t*>(rr.logits.data()), rr.logits.size()));
    const size_t classes = static_cast<size_t>(sub.net.classes);
    const bool same_as_chunked = std::equal(rf.logits.begin(), rf.logits.end(), fin.logits.begin());
    size_t mismatched = 0;
    for (size_t i = 0; i < rr.logits.size() && i < rf.logits.size(); ++i) {
      mismatched += rr.logits[i] != rf.logits[i];
    }
    rtl_ok = rr.logits.size() == o.rtl_images * classes && rr.logits == rf.logits &&
             same_as_chunked && rr.correct == rf.correct && rr.cycles == rf.cycles;
    rtl = {{"images", o.rtl_images},
           {"programs", pieces},
           {"logits_identical", rtl_ok},
           {"mismatched_logits", mismatched},
           {"logits_sha256", rr.logits_sha256},
           {"correct", rr.correct},
           {"rtl_cycles", rr.cycles},
           {"ref_model_cycles", rf.cycles},
           {"cycles_per_image_batch", static_cast<double>(rr.cycles) / o.rtl_images},
           {"cycle_error_pct", rr.cycles ? 100.0 *
                                               std::abs(static_cast<double>(rr.cycles) -
                                                        static_cast<double>(rf.cycles)) /
                                               static_cast<double>(rr.cycles)
                                         : 0.0},
           {"hw_config", o.hw_config}};
    stage("rtl-check", t0,
          fmt::format("{} images on the Verilated {} model: logits {}, {} cycles (ref model {})",
                      o.rtl_images, o.hw_config, rtl_ok ? "identical" : "DIFFER", rr.cycles,
                      rf.cycles));
  }

  // 7. result.json (seeds decide it all: no times in it), report.md, pareto.svg, timing.json.
  json best_json = candidate_entry(best, o.val_images);
  best_json["test_accuracy_int8"] = fin_int8;
  best_json["test_accuracy_float"] = fin_float;
  best_json["inherited_test_accuracy_int8"] = top_json.at(0)["test_accuracy_int8"];
  best_json["inherited_test_accuracy_float"] = top_json.at(0)["test_accuracy_float"];
  best_json["weights"] = "fine-tuned";
  best_json["finetune"] = {{"epochs", o.finetune_epochs},
                           {"lr", o.finetune_lr},
                           {"augment", augment_json(o)},
                           {"val_accuracy_float", ft_val}};
  best_json["final_cycles_per_image_alone"] = cycles_per_image;
  best_json["model_dir"] = "final/model";
  best_json["rtl"] = rtl;
  const json search_all = report::result_json(runs);
  json result = {{"supernet", o.net.name},
                 {"seed", o.seed},
                 {"settings",
                  {{"train", key["train"]},
                   {"search", search_all["settings"]},
                   {"finetune_epochs", o.finetune_epochs},
                   {"finetune_lr", o.finetune_lr},
                   {"finetune_augment", augment_json(o)},
                   {"preset", o.preset},
                   {"val_images", o.val_images},
                   {"calib_images", o.calib_images},
                   {"finalists", o.finalists},
                   {"recal_images", n_recal},
                   {"finalist_images", n_val},
                   {"test_images", o.test_images},
                   {"rtl_images", o.rtl_images},
                   {"hw_config", o.hw_config}}},
                 {"best", best_json},
                 {"top", top_json},
                 {"finalists", finalists_json},
                 {"pareto", search_all["pareto"]},
                 {"comparison", search_all.value("comparison", json::object())},
                 {"evaluated_count", evo.evaluated.size()},
                 {"evaluated", search_all["evaluated"]},
                 {"files",
                  {{"search", "search/result.json"},
                   {"report", "report.md"},
                   {"pareto_svg", "pareto.svg"},
                   {"timeline_svg", "timeline.svg"},
                   {"final_model", "final/model"}}}};
  if (!o.data.empty() || !o.val_split.empty()) {
    // what the images were (docs/data.md); an image folder's classes by their folder names
    result["data"] = {{"source", jd.source},
                      {"format", jd.format},
                      {"classes", jd.class_names},
                      {"train_images", jd.train_only()},
                      {"val_split_images", jd.val},
                      {"test_images", jd.test.size()},
                      {"shape", {jd.train.rows, jd.train.cols, jd.train.channels}}};
  }
  // the input normalization the networks take (docs/data.md "Normalization"); null: pixel / 255
  result["input_normalization"] = floatnet::normalization_json(
      floatnet::read_normalization(sn.weights, o.net.in_c, "supernet weights"));
  res.result = result;
  write_text(res.dir / "pareto.svg", report::pareto_svg(runs));
  wrote(o, res.dir / "pareto.svg");

  // The summary table (stdout and report.md).
  std::string table;
  table += fmt::format("{:<11} {:>9}  {}\n", "stage", "seconds", "detail");
  for (const auto& s : res.stages) {
    table += fmt::format("{:<11} {:>9.1f}  {}\n", s.name, s.seconds, s.detail);
  }
  table += fmt::format("{:<11} {:>9.1f}\n\n", "total", since(t_all));
  table += fmt::format("{:<4} {:<22} {:>8} {:>8} {:>10} {:>10} {:>10} {:>8} {:>11}\n", "rank",
                       "arch", "val*", "val fin*", "test int8", "test float", "MACs/img", "params",
                       "cycles/img*");
  for (size_t i = 0; i < top_json.size(); ++i) {
    const auto& e = top_json[i];
    table += fmt::format("{:<4} {:<22} {:>8} {:>8} {:>10} {:>10} {:>10} {:>8} {:>11}\n", i + 1,
                         e["arch"].get<std::string>(), pct(e["val_accuracy"]),
                         pct(e["finalist_val_accuracy_int8"]), pct(e["test_accuracy_int8"]),
                         pct(e["test_accuracy_float"]), e["macs_per_image"].get<uint64_t>(),
                         e["params"].get<uint64_t>(), e["cycles_per_image_alone"].get<uint64_t>());
  }
  table += fmt::format("{:<4} {:<22} {:>8} {:>8} {:>10} {:>10} {:>10} {:>8} {:>11}\n", "best",
                       spec::format_candidate(best.arch) + " (fine-tuned)", pct(best.val_accuracy),
                       pct(finalists_json.at(0)["finalist_val_accuracy_int8"]), pct(fin_int8),
                       pct(fin_float), best.macs, best.params, cycles_per_image);
  table += fmt::format(
      "* val: the search's int8 accuracy on {} validation images; val fin: the finalists' on {} "
      "validation images{}; cycles/img: accelerator cycles of one image run alone "
      "(cycles_per_image_alone)\n",
      o.val_images, n_val, n_recal ? ", BatchNorm recalibrated" : "");
  const auto cmp = [](const search::SearchResult& r) {
    return r.best ? r.evaluated[*r.best].correct : size_t{0};
  };
  const std::string verdict = cmp(evo) > cmp(rnd)    ? "beats"
                              : cmp(evo) == cmp(rnd) ? "ties with"
                                                     : "loses to";
  table += fmt::format("\nevolution {} random at {} evaluations each: best val {} vs {}\n",
                       verdict, evo.evaluated.size(),
                       pct(evo.best ? evo.evaluated[*evo.best].val_accuracy : 0),
                       pct(rnd.best ? rnd.evaluated[*rnd.best].val_accuracy : 0));
  if (!rtl.is_null()) {
    table += fmt::format(
        "RTL cross-check: {} test images, logits and cycles {}, {} cycles in {} program(s) "
        "({:.0f} per image in these mini-batch programs)\n",
        o.rtl_images, rtl_ok ? "identical to the reference" : "DIFFER",
        rtl["rtl_cycles"].get<uint64_t>(), rtl["programs"].get<size_t>(),
        rtl["cycles_per_image_batch"].get<double>());
  }
  res.summary = table;

  std::string md = fmt::format("# NAS run `{}`\n\n", res.dir.filename().string());
  md += fmt::format(
      "Supernet `{}` (seed {}), searched on the `{}` hardware configuration (reference backend), "
      "final model cross-checked on the RTL. Accuracies are fractions of {} validation images "
      "(search) and {} Fashion-MNIST test images.\n\n",
      o.net.name, o.seed, o.hw_config, o.val_images, o.test_images);
  md += "```\n" + table + "```\n\n";
  md += "Files: `result.json` (everything above, machine-readable), `search/` (the search's own "
        "result.json and report), `final/model` (the fine-tuned network: `nasa eval --supernet "
        "final/model --arch " +
        spec::format_candidate(only) + "`), `pareto.svg`.\n\n";
  md += fmt::format(
      "## Finalists\n\nThe top {} of each search, each with its BatchNorm statistics {}, "
      "quantized with them and ranked by int8 accuracy on {} validation images (95% "
      "intervals); the first is the result.\n\n| # | arch | search val ({} images) | val, all "
      "images | MACs/image |\n|---:|---|---:|---|---:|\n",
      o.finalists,
      n_recal ? fmt::format("recalibrated on {} training images", n_recal)
              : std::string("the supernet's"),
      n_val, o.val_images);
  for (size_t r = 0; r < finalists_json.size(); ++r) {
    const json& e = finalists_json[r];
    md += fmt::format(
        "| {} | `{}` | {} | {} ({:.1f}-{:.1f}) | {} |\n", r + 1, e["arch"].get<std::string>(),
        pct(e["val_accuracy"]), pct(e["finalist_val_accuracy_int8"]),
        100 * e["finalist_val_ci95"][0].get<double>(),
        100 * e["finalist_val_ci95"][1].get<double>(), e["macs_per_image"].get<uint64_t>());
  }
  md += "\n";
  std::string search_md = report::markdown(runs);
  // nest the search report's headings one level down
  std::string nested;
  size_t pos = 0;
  while (pos < search_md.size()) {
    size_t nl = search_md.find('\n', pos);
    if (nl == std::string::npos) nl = search_md.size();
    std::string line = search_md.substr(pos, nl - pos);
    if (line.starts_with("#")) line = "#" + line;
    if (line.starts_with("![")) line = "![accuracy vs cycles](pareto.svg)";
    nested += line + "\n";
    pos = nl + 1;
  }
  md += nested;
  write_text(res.dir / "report.md", md);
  wrote(o, res.dir / "report.md");

  write_text(res.dir / "timeline.svg",
             report::timeline_svg(res.stages, fmt::format("nasa run on {}", o.net.name)));
  wrote(o, res.dir / "timeline.svg");
  json timing = json::array();
  for (const auto& s : res.stages) {
    timing.push_back({{"stage", s.name}, {"seconds", s.seconds}, {"detail", s.detail}});
  }
  const dist::Traffic& tr = sr.traffic;
  const size_t generations = runs.front().generations.size() + runs.back().generations.size();
  write_text(res.dir / "timing.json",
             json{{"stages", timing},
                  {"total_seconds", since(t_all)},
                  {"resumed", resuming},
                  {"ranks", dist::world().size()},
                  // rank 0's collectives of the two searches (docs/mpi.md "Scale on paper")
                  {"search_traffic",
                   {{"generations", generations},
                    {"shards_per_generation", search::image_shards(o.val_images, o.search).size()},
                    {"collectives", tr.collectives},
                    {"payload_bytes", tr.payload_bytes},
                    {"sent_bytes", tr.sent_bytes},
                    {"received_bytes", tr.received_bytes}}}}
                     .dump(2) +
                 "\n");
  wrote(o, res.dir / "timing.json");
  // Last: its presence marks a complete run (--resume then has nothing to do).
  write_text(res.dir / "result.json", result.dump(2) + "\n");
  wrote(o, res.dir / "result.json");
  if (!rtl_ok) {
    throw std::runtime_error(fmt::format(
        "RTL cross-check failed: the Verilated model's logits differ from the reference model's "
        "({} of {} differ); see '{}'",
        rtl["mismatched_logits"].get<size_t>(), o.rtl_images * static_cast<size_t>(sub.net.classes),
        (res.dir / "result.json").string()));
  }
  return res;
}

}  // namespace

Result run(const Options& o) {
  if (!dist::world().root()) {
    run_worker(o);
    return {};
  }
  fs::path created;
  try {
    Result r = run_in(o, created);
    tell_workers({{"step", "done"}});
    return r;
  } catch (const Interrupted&) {
    throw;
  } catch (...) {
    drop_if_unstarted(created);
    throw;
  }
}

}  // namespace nasa::pipeline
