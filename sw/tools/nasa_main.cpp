// `nasa`: the command line of the NASA runtime. A thin shell over the library: each subcommand
// parses its options, calls the library, and prints a table or (--json) one JSON object.
// Errors from the library are caught here once, printed, and turned into exit code 1.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <malloc.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli_contract.h"
#include "cli_log.h"
#include "nasa/backend.h"
#include "nasa/cand_gen.h"
#include "nasa/compiler.h"
#include "nasa/data.h"
#include "nasa/desc.h"
#include "nasa/dist.h"
#include "nasa/files.h"
#include "nasa/float_eval.h"
#include "nasa/fusion.h"
#include "nasa/interrupt.h"
#include "nasa/onnx_export.h"
#include "nasa/report.h"
#include "nasa/runtime.h"
#include "nasa/schedule.h"
#include "nasa/search.h"
#include "nasa/spec.h"
#include "nasa/supernet_weights.h"
#include "nasa/svg.h"
#ifdef NASA_HAVE_TRAIN
#include "nasa/pipeline.h"
#include "nasa/train.h"
#endif

namespace {

namespace fs = std::filesystem;
using nasa::spec::Supernet;

// Every file a command writes is named on stderr as it is written (--quiet hides it); stdout
// keeps the result alone.
void wrote(const fs::path& p, std::string_view holding = {}) {
  nasa::cli::info(nasa::wrote_message(p, holding));
}

// --space NAME (a built-in space) or --supernet PATH (a spec file, or a directory holding
// supernet.json, as `nasa init` writes it).
struct SpecSource {
  std::string space, supernet;

  void add_options(CLI::App& app) {
    std::string names;
    for (const auto& n : nasa::spec::builtin_space_names()) {
      names += (names.empty() ? "" : ", ") + n + (n == nasa::spec::kDefaultSpace ? " (default)" : "");
    }
    auto* s = app.add_option("--space", space, "built-in search space: " + names);
    auto* n = app.add_option("--supernet", supernet,
                             "supernet spec: a JSON file or a directory with supernet.json");
    s->excludes(n);
  }

  Supernet load() const {
    if (!supernet.empty()) {
      fs::path p = supernet;
      if (fs::is_directory(p)) p /= "supernet.json";
      return nasa::spec::load_supernet(p);
    }
    return nasa::spec::builtin_space(space.empty() ? nasa::spec::kDefaultSpace : std::string_view(space));
  }

  // The directory of a trained (or `nasa init`) supernet when --supernet names one: a directory,
  // or its supernet.json, beside weights.safetensors. Empty for a bare spec file or --space.
  fs::path weights_dir() const {
    if (supernet.empty()) return {};
    const fs::path p = supernet;
    const fs::path dir = fs::is_directory(p) ? p : p.parent_path().empty() ? "." : p.parent_path();
    return fs::exists(dir / "weights.safetensors") ? dir : fs::path();
  }
};

int cmd_info(const SpecSource& src, const std::string& config, bool json) {
  const Supernet net = src.load();
  // --config: which ops run on that configuration (docs/cli.md "Preflight")
  std::vector<nasa::compile::OpProblem> problems;
  if (!config.empty()) {
    problems = nasa::compile::check_ops(nasa::compile::quantize_shapes(net),
                                        nasa::config_by_name(config));
  }
  auto problem_of = [&](int layer, int choice) -> const nasa::compile::OpProblem* {
    for (const auto& p : problems) {
      if (p.layer == layer && p.choice == choice) return &p;
    }
    return nullptr;
  };
  const auto shapes = nasa::spec::layer_shapes(net);
  nlohmann::json j;
  j["name"] = net.name;
  j["input"] = {net.in_h, net.in_w, net.in_c};
  j["classes"] = net.classes;
  j["search_space_size"] = nasa::spec::search_space_size(net);
  const auto stem = nasa::spec::stem_cost(net), head = nasa::spec::head_cost(net);
  j["stem"] = {{"macs_per_image", stem.macs}, {"params", stem.params}};
  j["head"] = {{"macs_per_image", head.macs}, {"params", head.params}};
  nlohmann::json layers = nlohmann::json::array(), kis = nlohmann::json::array();
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const auto& l = net.layers[i];
    nlohmann::json choices = nlohmann::json::array();
    for (size_t c = 0; c < l.choices.size(); ++c) {
      const auto cost = nasa::spec::op_cost(net, i, c);
      choices.push_back({{"op", nasa::spec::op_name(l.choices[c])},
                         {"macs_per_image", cost.macs},
                         {"params", cost.params}});
      if (!config.empty()) {
        const auto* p = problem_of(static_cast<int>(i), static_cast<int>(c));
        choices.back()["runs"] = p == nullptr;
        if (p) choices.back()["problem"] = p->what;
      }
    }
    const auto& s = shapes[i];
    layers.push_back({{"index", i},
                      {"input", {s.h, s.w, s.cin}},
                      {"out_channels", s.cout},
                      {"stride", s.stride},
                      {"choices", choices}});
    kis.push_back(l.choices.size());
  }
  j["choices_per_layer"] = kis;
  j["layers"] = layers;
  if (!config.empty()) {
    nlohmann::json pj = nlohmann::json::array();
    for (const auto& p : problems) pj.push_back({{"where", p.where}, {"problem", p.what}});
    j["hw_config"] = config;
    j["problems"] = pj;
  }
  if (json) {
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("supernet {}: input {}x{}x{}, {} classes, {} choice layers, {:.6g} candidates\n",
             net.name, net.in_h, net.in_w, net.in_c, net.classes, net.layers.size(),
             nasa::spec::search_space_size(net));
  fmt::print("stem: {} MACs, {} params; head: {} MACs, {} params\n", stem.macs, stem.params,
             head.macs, head.params);
  fmt::print("{:>5}  {:<12} {:>6}  {:<12} {:>12} {:>10}\n", "layer", "input", "stride", "op",
             "MACs", "params");
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const auto& s = shapes[i];
    const auto& l = net.layers[i];
    for (size_t c = 0; c < l.choices.size(); ++c) {
      const auto cost = nasa::spec::op_cost(net, i, c);
      fmt::print(
          "{:>5}  {:<12} {:>6}  {:<12} {:>12} {:>10}\n", c == 0 ? std::to_string(i) : std::string(),
          c == 0 ? fmt::format("{}x{}x{}", s.h, s.w, s.cin) : std::string(),
          c == 0 ? std::to_string(s.stride) : std::string(),
          fmt::format("{}:{}", c, nasa::spec::op_name(l.choices[c])), cost.macs, cost.params);
    }
  }
  if (!config.empty()) {
    if (problems.empty()) fmt::print("config {}: every op runs (batch mode too)\n", config);
    for (const auto& p : problems) fmt::print("config {}: {} does not run: {}\n", config, p.where, p.what);
  }
  return 0;
}

// Writes DIR/supernet.json and DIR/weights.safetensors (random weights of a sensible scale).
int cmd_init(const SpecSource& src, uint64_t seed, const std::string& out, bool force, bool json) {
  const Supernet net = src.load();
  const fs::path dir = out;
  const fs::path spec_path = dir / "supernet.json", weights_path = dir / "weights.safetensors";
  if (!force && (fs::exists(spec_path) || fs::exists(weights_path))) {
    throw std::runtime_error(fmt::format(
        "'{}' already holds a supernet (supernet.json or weights.safetensors); pass --force to "
        "overwrite it",
        dir.string()));
  }
  fs::create_directories(dir);
  const auto weights = nasa::weights::random_weights(net, seed);
  nasa::spec::save_supernet(spec_path, net);
  wrote(spec_path);
  nasa::weights::write_safetensors(weights_path, weights);
  wrote(weights_path);
  uint64_t params = 0;
  for (const auto& [name, t] : weights.tensors) params += t.numel();
  if (json) {
    nlohmann::json j = {{"supernet", net.name},
                        {"supernet_path", spec_path.string()},
                        {"weights_path", weights_path.string()},
                        {"tensors", weights.tensors.size()},
                        {"supernet_params", params},
                        {"seed", seed}};
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("supernet {} in {}: {} tensors, {} parameters, random weights of seed {}\n",
               net.name, dir.string(), weights.tensors.size(), params, seed);
  }
  return 0;
}

// A batch of candidates: --arch-file F (one per line) or --random N --seed S.
struct BatchSource {
  std::string arch_file;
  size_t random = 0;
  uint64_t seed = 1;
  bool given() const { return !arch_file.empty() || random > 0; }
  std::vector<nasa::spec::Candidate> load(const Supernet& net) const {
    if (!arch_file.empty()) return nasa::fusion::read_arch_file(arch_file, net);
    return nasa::fusion::random_candidates(net, random, seed);
  }
};

// The on-chip buffers of the configuration, as the schedule DRAM model sees them.
int cmd_fuse(const SpecSource& src, const BatchSource& b, size_t images, size_t mini_batch,
             const std::string& config, const std::string& svg_path, bool json) {
  const Supernet net = src.load();
  if (!b.given()) throw std::invalid_argument("fuse: give --arch-file F or --random N");
  const auto batch = b.load(net);
  const auto g = nasa::fusion::fuse(net, batch);
  const auto st = nasa::fusion::fusion_stats(net, g);
  const auto& cfg = nasa::config_by_name(config);
  const auto reports = nasa::fusion::compare_schedules(net, g, images, nasa::fusion::buffer_model(cfg), mini_batch);
  const auto bound = nasa::fusion::dram_lower_bound(net, g, images);
  const auto plan = nasa::fusion::plan_memory(
      nasa::fusion::make_schedule(net, g, nasa::fusion::ScheduleKind::DepthFirst));
  if (!svg_path.empty()) {
    nasa::svg::write_file(svg_path, nasa::fusion::fused_graph_svg(net, g));
    wrote(svg_path);
  }
  if (json) {
    nlohmann::json j = nasa::fusion::to_json(st);
    j["supernet"] = net.name;
    j["images"] = images;
    j["hw_config"] = config;
    j["schedules"] = nasa::fusion::to_json(reports);
    j["dram_lower_bound"] = nasa::fusion::to_json(bound);
    j["memory_plan_depth_first"] = nasa::fusion::to_json(plan);
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("{}: {} candidates ({} unique), {} nodes\n", net.name, st.candidates,
             st.unique_candidates, st.nodes);
  fmt::print("MACs per image: unfused {}, fused {} (x{:.2f})\n", st.macs_unfused, st.macs_fused,
             st.macs_fused ? static_cast<double>(st.macs_unfused) / st.macs_fused : 0.0);
  fmt::print("weight bytes: unfused {}, fused {}; activation bytes: unfused {}, fused {}\n",
             st.weight_bytes_unfused, st.weight_bytes_fused, st.act_bytes_unfused,
             st.act_bytes_fused);
  fmt::print("modeled DRAM bytes for {} images (config {} buffers, mini-batch {}):\n", images,
             config, mini_batch);
  fmt::print("  {:<22} {:>14} {:>14} {:>14} {:>14}\n", "schedule", "weights", "act read",
             "act write", "total");
  for (const auto& r : reports) {
    fmt::print("  {:<22} {:>14} {:>14} {:>14} {:>14}\n", r.name, r.weight_bytes, r.act_read_bytes,
               r.act_write_bytes, r.total_bytes);
  }
  fmt::print("  {:<22} {:>14} {:>14} {:>14} {:>14}\n", "lower bound", bound.weight_bytes,
             bound.act_read_bytes, bound.act_write_bytes, bound.total_bytes);
  fmt::print("depth-first arena: {} bytes per image, {} slots\n", plan.arena_bytes,
             plan.slots.size());
  return 0;
}

struct EvalOptions {
  std::string supernet, arch, backend = "ref", config = "sim", data, labels;
  size_t images = 64, calib = 32, mini_batch = 32;
  bool json = false, fused = false, dump_logits = false;
  BatchSource batch;
  size_t generate = 0;
  std::string gen_mode = "sample", parents_file;
  double mut_prob = 0.1;  // per layer, --mode mutate
};

// Progress of a dataset being decoded (docs/data.md), on stderr.
void data_progress(size_t done, size_t total) {
  nasa::cli::info(fmt::format("data: {} / {} images decoded", done, total));
}

// --port of the uart backend (a serial device, e.g. /dev/ttyUSB1 for the iCEBreaker).
std::string g_uart_port;

// A backend by name (nasa/backend.h): ref, uart and, in the tree's build, rtl.
nasa::runtime::DeviceFactory backend_factory(const std::string& backend) {
  // an mpirun job's ranks each drive their own board: "{rank}" in --port is the rank's number
  std::string port = g_uart_port;
  if (const auto at = port.find("{rank}"); at != std::string::npos) {
    port.replace(at, 6, std::to_string(nasa::dist::world().rank()));
  }
  return nasa::device::backend_factory(backend, {.port = port});
}

uint32_t gen_mode_of(const std::string& m) {
  using nasa::hw::GenMode;
  for (const auto& [name, mode] : {std::pair{"sample", GenMode::Sample},
                                   std::pair{"mutate", GenMode::Mutate},
                                   std::pair{"crossover", GenMode::Crossover}}) {
    if (m == name) return static_cast<uint32_t>(mode);
  }
  throw std::invalid_argument(fmt::format("--mode '{}': expected sample, mutate or crossover", m));
}

// Per-candidate results of a batch evaluated fused (one batch run) or one by one (unfused).
int eval_batch(const EvalOptions& o, nasa::runtime::Runtime& rt, const Supernet& net,
               const std::vector<std::vector<uint8_t>>& imgs, std::span<const uint8_t> labels) {
  std::vector<nasa::spec::Candidate> batch;
  if (o.generate == 0) batch = o.batch.load(net);
  nlohmann::json per = nlohmann::json::array();
  nlohmann::json j = {{"backend", o.backend},
                      {"hw_config", o.config},
                      {"pe_array", {rt.config().rows, rt.config().cols}},
                      {"images", imgs.size()}};
  const bool fused = o.fused || o.generate > 0;
  j["fused"] = fused;
  if (fused) {
    nasa::compile::BatchOptions bo;
    bo.mini_batch = static_cast<uint32_t>(o.mini_batch);
    bo.dump_logits = o.dump_logits;
    bo.gen_seed = static_cast<uint32_t>(o.batch.seed);
    bo.gen_mode = gen_mode_of(o.gen_mode);
    bo.gen_prob = static_cast<uint32_t>(std::lround(o.mut_prob * nasa::cand_gen::kProbOne));
    if (!o.parents_file.empty()) bo.parents = nasa::fusion::read_arch_file(o.parents_file, net);
    if (o.generate > 0 && nasa::hw::gen_mode_needs_parents(bo.gen_mode) && bo.parents.empty()) {
      throw std::invalid_argument("--mode mutate/crossover needs --parents-file F");
    }
    const auto r = rt.evaluate_fused(batch, o.generate, imgs, labels, bo);
    const auto g = nasa::fusion::fuse(net, r.candidates);
    const auto st = nasa::fusion::fusion_stats(net, g);
    for (size_t c = 0; c < r.candidates.size(); ++c) {
      nlohmann::json e = {{"arch", nasa::spec::format_candidate(r.candidates[c])},
                          {"leaf", r.leaf[c]},
                          {"correct", r.correct[c]},
                          {"accuracy", static_cast<double>(r.correct[c]) / imgs.size()}};
      if (!r.logits.empty()) {
        e["logits_sha256"] = nasa::runtime::sha256_hex(std::span<const uint8_t>(
            reinterpret_cast<const uint8_t*>(r.logits[c].data()), r.logits[c].size()));
      }
      per.push_back(e);
    }
    j["candidates"] = per;
    if (o.generate > 0) {
      nlohmann::json gen = nlohmann::json::array();
      for (const auto& c : r.candidates) gen.push_back(nasa::spec::format_candidate(c));
      j["generated"] = gen;
      j["gen_mode"] = o.gen_mode;
      j["seed"] = o.batch.seed;
    }
    j["nodes"] = r.nodes.size();
    j["batch_runs"] = r.runs;
    j["unique_candidate_count"] = st.unique_candidates;
    j.update(nasa::report::cost_json(r.cycles, r.macs, r.dram_read, r.dram_written, imgs.size(),
                                     rt.config()));
    j["macs_fused_per_image"] = st.macs_fused;
    j["macs_unfused_per_image"] = st.macs_unfused;
    j["descriptors"] = r.layers;
    j.update(nasa::report::batch_utilization_json(r, rt.config()));
    j.update(nasa::report::energy_json(rt.config(), r.counters, r.candidates.size()));
    j["counters"] = nasa::report::counters_json(r.counters);
  } else {
    uint64_t cycles = 0, macs = 0, dram_read = 0, dram_written = 0, programs = 0;
    std::array<uint64_t, nasa::hw::kNumCounters> counters{};
    nasa::cli::Status status(batch.size());
    for (const auto& c : batch) {
      const auto r = rt.evaluate(c, imgs, labels);
      nlohmann::json e = {{"arch", nasa::spec::format_candidate(c)},
                          {"correct", r.correct},
                          {"accuracy", r.accuracy()},
                          {"logits_sha256", r.logits_sha256}};
      e.update(nasa::report::cost_json(r.cycles, r.macs, r.dram_read, r.dram_written, imgs.size(),
                                       rt.config()));
      const auto en = nasa::report::energy_json(rt.config(), r.counters, 1);
      if (en.contains("energy_pj")) e["energy_pj"] = en["energy_pj"];
      per.push_back(e);
      for (size_t i = 0; i < counters.size(); ++i) counters[i] += r.counters[i];
      cycles += r.cycles;
      macs += r.macs;
      dram_read += r.dram_read;
      dram_written += r.dram_written;
      programs += r.programs;
      status.update(per.size(), fmt::format("{} / {} candidates", per.size(), batch.size()));
    }
    j["candidates"] = per;
    j["programs"] = programs;
    j.update(nasa::report::cost_json(cycles, macs, dram_read, dram_written, imgs.size(),
                                     rt.config()));
    j.update(nasa::report::energy_json(rt.config(), counters, batch.size()));
    j["counters"] = nasa::report::counters_json(counters);
  }
  if (o.json) {
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  for (const auto& e : j["candidates"]) {
    fmt::print("{:<24} {:>6} correct ({:.2f}%)\n", e["arch"].get<std::string>(),
               e["correct"].get<size_t>(), 100.0 * e["accuracy"].get<double>());
  }
  const uint64_t runs = j.value("batch_runs", j.value("programs", uint64_t{0}));
  fmt::print(
      "{} on {} ({}), {} images{}: {} cycles ({:.0f} per image), {} MACs executed, {} DRAM "
      "bytes, PE utilization {:.3f}\n",
      fused ? "fused batch" : "candidates one by one", o.backend, o.config, imgs.size(),
      runs > (fused ? 1u : batch.size())
          ? fmt::format(" ({} {} runs: the address space holds no more)", runs,
                        fused ? "batch" : "program")
          : "",
      j["cycles"].get<uint64_t>(), j["cycles_per_image_batch"].get<double>(),
      j["macs_executed"].get<uint64_t>(), j["dram_bytes"].get<uint64_t>(),
      j["pe_utilization"].get<double>());
  if (j.contains("energy_pj")) {
    fmt::print("energy (model, docs/energy.md): {:.3f} mJ, {:.3f} mJ per candidate, DRAM {:.1f}%\n",
               j["energy_pj"].get<double>() * 1e-9,
               j["energy_per_candidate_pj"].get<double>() * 1e-9,
               100.0 * j["energy_dram_share"].get<double>());
  }
  if (j.contains("by_op")) {
    fmt::print("by op: share of cycles / PE utilization\n");
    for (const auto& e : j["by_op"]) {
      fmt::print("  {:<8} {:>6.1f}% {:>7.3f}\n", e["op"].get<std::string>(),
                 100.0 * e["share_of_cycles"].get<double>(), e["pe_utilization"].get<double>());
    }
    fmt::print("  {:<8} {:>6.1f}%\n", "control",
               100.0 * j["control_cycles"].get<double>() / j["cycles"].get<double>());
  }
  return 0;
}

int cmd_eval(const EvalOptions& o) {
  auto [net, w] = nasa::runtime::load_supernet_dir(o.supernet);
  const int sources = !o.arch.empty() + o.batch.given() + (o.generate > 0);
  if (sources != 1) {
    throw std::invalid_argument(
        "eval: give exactly one of --arch A, --arch-file F, --random N, --generate N");
  }
  if (o.fused && !o.batch.given()) {
    throw std::invalid_argument("eval: --fused needs a batch (--arch-file F or --random N)");
  }
  const auto& cfg = nasa::config_by_name(o.config);
  {
    // preflight (docs/cli.md "Preflight"): a batch run compiles every op of the supernet,
    // candidates one by one only theirs
    std::vector<nasa::spec::Candidate> used;
    if (!o.arch.empty()) used.push_back(nasa::spec::parse_candidate(o.arch, net));
    if (o.batch.given() && !o.fused) used = o.batch.load(net);
    nasa::compile::preflight(nasa::compile::quantize_shapes(net), cfg,
                             fmt::format("supernet '{}'", o.supernet), used);
  }
  nasa::runtime::DeviceFactory factory = backend_factory(o.backend);
  // Calibration on training images, evaluation on test images: Fashion-MNIST's, a dataset
  // directory's (--data DIR, docs/data.md), or an IDX pair's (--data F --labels L, calibration
  // on Fashion-MNIST's training images).
  nasa::data::Dataset train, test;
  if (!o.data.empty() && o.labels.empty()) {
    nasa::data::Data d = nasa::data::load_data(o.data, data_progress);
    if (d.test.size() == 0) {
      throw std::runtime_error(fmt::format(
          "--data {}: the dataset has no test split to evaluate on (docs/data.md)", o.data));
    }
    nasa::data::check_fits(d.test, net.name, net.in_h, net.in_w, net.in_c, net.classes,
                           fmt::format("--data {} (test split)", o.data));
    if (d.train.size() == 0) {
      throw std::runtime_error(fmt::format(
          "--data {}: the dataset has no training split to calibrate on (docs/data.md)", o.data));
    }
    train = std::move(d.train);
    test = std::move(d.test);
    train.keep_first(o.calib);
    test.keep_first(o.images);
  } else {
    train = nasa::data::load_fashion_mnist("train", o.calib);
    test = o.data.empty() ? nasa::data::load_fashion_mnist("test", o.images)
                          : nasa::data::load_idx(o.data, o.labels, o.images);
  }
  if (test.size() < o.images) {
    throw std::runtime_error(
        fmt::format("--images {}: the data has only {} images", o.images, test.size()));
  }
  const auto imgs = test.byte_images(0, test.size());
  nasa::runtime::Runtime rt(nasa::compile::quantize(net, w, train, train.size()), cfg, factory,
                            o.backend);
  // a periodic status line on stderr during long simulated runs (stdout keeps the result)
  rt.set_progress([t0 = std::chrono::steady_clock::now()](uint64_t cycles, uint32_t descs) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    nasa::cli::info(
        fmt::format("rtl: {:.1f} M cycles, {} descriptors done, {:.0f} s", cycles / 1e6, descs, s));
  });
  const std::span<const uint8_t> labels(test.labels.data(), test.size());
  if (o.arch.empty()) return eval_batch(o, rt, net, imgs, labels);
  const nasa::spec::Candidate cand = nasa::spec::parse_candidate(o.arch, net);
  const auto r = rt.evaluate(cand, imgs, labels);
  if (o.json) {
    nlohmann::json j = {{"arch", nasa::spec::format_candidate(cand)},
                        {"backend", o.backend},
                        {"hw_config", o.config},
                        {"images", r.images},
                        {"correct", r.correct},
                        {"accuracy", r.accuracy()},
                        {"logits_sha256", r.logits_sha256},
                        {"programs", r.programs}};
    j.update(nasa::report::cost_json(r.cycles, r.macs, r.dram_read, r.dram_written, r.images,
                                     rt.config()));
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print(
        "{} on {} ({}): {}/{} correct ({:.2f}%), {} cycles ({:.0f} per image in {}), {} "
        "MACs executed, logits sha256 {}\n",
        nasa::spec::format_candidate(cand), o.backend, o.config, r.correct, r.images,
        100.0 * r.accuracy(), r.cycles, static_cast<double>(r.cycles) / r.images,
        r.programs > 1
            ? fmt::format("{} programs: the address space holds no more images", r.programs)
            : fmt::format("this {}-image program", r.images),
        r.macs, r.logits_sha256);
  }
  return 0;
}

struct ExportOptions {
  std::string supernet, arch, out, data;
  size_t calib = 32;
  bool int8 = false, force = false, json = false;
};

// `nasa export` (docs/export.md): one candidate as an ONNX model, float (BatchNorm folded) or
// --int8 (QDQ with the scales `nasa eval` quantizes with for the same --calib and --data).
int cmd_export(const ExportOptions& o) {
  const std::filesystem::path out(o.out);
  if (std::filesystem::exists(out) && !o.force) {
    throw std::invalid_argument(
        fmt::format("--out {}: the file exists (--force replaces it)", o.out));
  }
  auto [net, w] = nasa::runtime::load_supernet_dir(o.supernet);
  size_t choices = 1;
  for (const auto& l : net.layers) choices = std::max(choices, l.choices.size());
  if (o.arch.empty() && choices > 1) {
    throw std::invalid_argument(fmt::format(
        "--arch: supernet '{}' has several choices per layer: give the candidate to export (e.g. "
        "--arch {})",
        net.name, nasa::spec::format_candidate(nasa::spec::Candidate(net.layers.size(), 0))));
  }
  const nasa::spec::Candidate cand = o.arch.empty() ? nasa::spec::Candidate(net.layers.size(), 0)
                                                    : nasa::spec::parse_candidate(o.arch, net);
  nasa::onnx::ExportOptions eo;
  std::optional<nasa::compile::QSupernet> q;
  if (o.int8) {
    if (o.calib == 0) throw std::invalid_argument("--calib must be at least 1");
    // calibration as `nasa eval` does it: the first --calib training images
    nasa::data::Dataset train;
    if (o.data.empty()) {
      train = nasa::data::load_fashion_mnist("train", o.calib);
    } else {
      nasa::data::Data d = nasa::data::load_data(o.data, data_progress);
      train = std::move(d.train);
      nasa::data::check_fits(train, net.name, net.in_h, net.in_w, net.in_c, net.classes,
                             fmt::format("--data {} (training split)", o.data));
      train.keep_first(o.calib);
    }
    if (train.size() < o.calib) {
      throw std::invalid_argument(
          fmt::format("--calib {}: the data has only {} training images", o.calib, train.size()));
    }
    q = nasa::compile::quantize(net, w, train, o.calib);
    eo.int8 = &*q;
    eo.metadata["nasa.calibration"] = fmt::format("the first {} training images of {}", o.calib,
                                                  o.data.empty() ? "Fashion-MNIST" : o.data);
  }
  for (const char* k : {"subnet_of", "arch"}) {
    if (const auto it = w.metadata.find(k); it != w.metadata.end()) {
      eo.metadata[fmt::format("nasa.weights.{}", k)] = it->second;
    }
  }
  const std::string bytes = nasa::onnx::export_model(net, w, cand, eo);
  nasa::onnx::write_model(out, bytes);
  const auto norm = nasa::floatnet::read_normalization(w, net.in_c, "weights");
  if (o.json) {
    nlohmann::json j = {
        {"out", o.out},
        {"supernet", net.name},
        {"arch", nasa::spec::format_candidate(cand)},
        {"format", o.int8 ? "int8 QDQ" : "float32"},
        {"opset", nasa::onnx::kOpset},
        {"bytes", bytes.size()},
        {"input",
         {{"name", nasa::onnx::kInputName}, {"shape", {"N", net.in_c, net.in_h, net.in_w}}}},
        {"output", {{"name", nasa::onnx::kOutputName}, {"shape", {"N", net.classes}}}}};
    j["input_normalization"] = nasa::floatnet::normalization_json(norm);
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print(
        "wrote {} ({} bytes): '{}' {} as {}; input '{}' float32 [N, {}, {}, {}] = pixel / 255{}, "
        "output '{}' [N, {}]\n",
        o.out, bytes.size(), net.name, nasa::spec::format_candidate(cand),
        o.int8 ? "int8 QDQ (opset 13)" : "float32 (BatchNorm folded)", nasa::onnx::kInputName,
        net.in_c, net.in_h, net.in_w,
        norm.empty() ? std::string()
                     : fmt::format(" (normalized inside: mean {:.4f}, std {:.4f})",
                                   fmt::join(norm.mean, "/"), fmt::join(norm.std, "/")),
        nasa::onnx::kOutputName, net.classes);
  }
  return 0;
}

#ifdef NASA_HAVE_TRAIN
// Training progress on stderr: one updating line on a terminal, every 10th report otherwise.
std::function<void(const nasa::train::Progress&)> train_progress_printer(std::string prefix) {
  return [prefix = std::move(prefix), tty = isatty(fileno(stderr)) != 0,
          reports = 0](const nasa::train::Progress& p) mutable {
    // on a terminal every report updates the line; otherwise every 10th and each epoch's end
    const std::string line =
        fmt::format("{}epoch {}/{} step {}/{} loss {:.4f} lr {:.4g} {:.0f} images/s", prefix,
                    p.epoch, p.epochs, p.step - (p.epoch - 1) * p.steps_per_epoch,
                    p.steps_per_epoch, p.loss, p.lr, p.images_per_s);
    if (tty || p.epoch_end || ++reports % 10 == 0) nasa::cli::progress(line, p.epoch_end || !tty);
  };
}

// Single-path one-shot training of the supernet (libtorch); writes DIR/supernet.json,
// DIR/weights.safetensors, DIR/train_log.{jsonl,csv} and DIR/checkpoint.pt.
int cmd_train(const Supernet& net, nasa::train::Config cfg, const std::string& out, bool json) {
  cfg.on_progress = train_progress_printer("");
  // data-parallel over the ranks of an mpirun job (docs/mpi.md); rank 0 writes and reports
  cfg.ranks = &nasa::dist::world();
  const auto r = nasa::train::train_supernet(net, cfg, out);
  if (!cfg.ranks->root()) return 0;
  wrote(out, nasa::train::kTrainFiles);
  nlohmann::json cands = nlohmann::json::array();
  for (const auto& c : r.candidates) {
    cands.push_back(
        {{"arch", nasa::spec::format_candidate(c.arch)}, {"val_accuracy_float", c.val_accuracy}});
  }
  if (json) {
    nlohmann::json j = {{"dir", out},
                        {"supernet", net.name},
                        {"epochs_done", r.epochs_done},
                        {"steps", r.steps_done},
                        {"complete", r.complete},
                        {"resumed", r.resumed},
                        {"seconds", r.seconds},
                        {"train_seconds", r.train_seconds},
                        {"final_loss", r.step_losses.empty() ? 0.0 : r.step_losses.back()},
                        {"candidates", cands}};
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("trained supernet {} for {} epoch{} ({} steps) in {:.1f} s{}: {}\n", net.name,
             r.epochs_done, r.epochs_done == 1 ? "" : "s", r.steps_done, r.seconds,
             r.resumed ? " (resumed)" : "", out);
  for (const auto& c : r.candidates) {
    fmt::print("  candidate {}: val accuracy {:.2f}% (float)\n",
               nasa::spec::format_candidate(c.arch), 100.0 * c.val_accuracy);
  }
  return 0;
}
#endif

#ifdef NASA_HAVE_TRAIN
struct RunOptions {
  SpecSource src;
  nasa::pipeline::Options p;
  std::string preset = "default";
  CLI::App* cmd = nullptr;  // to tell the options given from the preset's defaults
  std::string runs_dir = "runs";
  bool json = false;
};

// The preset's defaults (nasa/pipeline.h Preset) for the options not given.
void apply_preset(RunOptions& r) {
  const auto& p = nasa::pipeline::find_preset(r.preset);
  auto given = [&](const char* opt) { return r.cmd->get_option(opt)->count() > 0; };
  r.p.preset = p.name;
  if (!given("--epochs")) r.p.train.epochs = p.epochs;
  if (!given("--finetune-epochs")) r.p.finetune_epochs = p.finetune_epochs;
  if (!given("--finetune-shift")) r.p.finetune_shift = p.finetune_shift;
  if (!given("--finetune-smoothing")) r.p.finetune_smoothing = p.finetune_smoothing;
  // (mirroring keeps Fashion-MNIST's classes; with --data it is the user's call)
  if (!given("--finetune-flip") && r.p.data.empty()) r.p.finetune_flip = p.finetune_flip;
  if (!given("--max-macs") && p.max_macs) {
    const uint64_t lo = nasa::search::smallest_cost(r.p.net).macs;
    if (lo <= p.max_macs) {
      r.p.search.constraints.max_macs = p.max_macs;
    } else {
      nasa::cli::info(fmt::format(
          "run: preset '{}': no MAC limit (the smallest candidate of '{}' has {} MACs, more than "
          "the preset's {}; --max-macs sets one)",
          p.name, r.p.net.name, lo, p.max_macs));
    }
  }
}

// The NAS job end to end (nasa/pipeline.h): train (or reuse), search, test, fine-tune, RTL check.
int cmd_run(RunOptions& r) {
  r.p.net = r.src.load();
  apply_preset(r);
  r.p.trained_supernet = r.src.weights_dir();
  if (!r.p.trained_supernet.empty()) {
    nasa::cli::info(fmt::format(
        "run: searching the trained supernet in {} (no training: --epochs, --batch, --lr and "
        "--optimizer do not apply; give the spec file alone to train one)",
        r.p.trained_supernet.string()));
  }
  r.p.runs_dir = r.runs_dir;
  r.p.ref_factory = backend_factory("ref");
  if (r.p.rtl_images > 0) r.p.rtl_factory = backend_factory("rtl");
  r.p.train.on_progress = train_progress_printer("train: ");
  r.p.log = [](const std::string& line) { nasa::cli::info(line); };
  const auto res = nasa::pipeline::run(r.p);
  if (!nasa::dist::world().root()) return 0;  // rank 0 reports (docs/mpi.md)
  if (res.complete_before) {
    std::string summary = res.summary;
    while (!summary.empty() && summary.back() == '\n') summary.pop_back();
    nasa::cli::info(summary);
  }
  if (r.json) {
    // one shape whether the run was done now or found complete (then no stage ran)
    nlohmann::json j = res.result;
    j.erase("evaluated");
    j["dir"] = res.dir.string();
    j["complete_before"] = res.complete_before;
    nlohmann::json st = nlohmann::json::array();
    for (const auto& s : res.stages) st.push_back({{"stage", s.name}, {"seconds", s.seconds}});
    j["stages"] = st;
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  if (res.complete_before) return 0;
  fmt::print("\n{}\nresults in {}/ (report.md, result.json, pareto.svg, final/model)\n",
             res.summary, res.dir.string());
  return 0;
}
#endif

struct SearchOptions {
  std::string supernet, out, strategy = "evolution", backend = "ref", config = "sim";
  std::string data, val_split;  // --data DIR, --val-split (docs/data.md)
  nasa::search::SearchConfig cfg;
  size_t val_images = 64, calib = 32;
  bool force = false, json = false;
};

// The data of train and search: Fashion-MNIST (the last 10,000 of its 60,000 training images are
// the validation split) or --data DIR with --val-split (docs/data.md), with progress on stderr.
nasa::data::JobData load_job_data(const std::string& dir, const std::string& val_split,
                                  uint64_t seed) {
  return nasa::data::job_data(dir, val_split, seed, data_progress);
}

int cmd_search(const SearchOptions& o) {
  // before any work, not after it; by rank 0 alone, the one that writes (its trial directory
  // would race with the other ranks')
  if (nasa::dist::world().root()) nasa::report::check_writable(o.out, o.force);
  std::vector<nasa::search::Strategy> strategies;
  if (o.strategy == "both") {
    strategies = {nasa::search::Strategy::Random, nasa::search::Strategy::Evolution};
  } else if (o.strategy == "random" || o.strategy == "evolution") {
    strategies = {nasa::search::parse_strategy(o.strategy)};
  } else {
    throw std::invalid_argument(
        fmt::format("--strategy '{}': expected evolution, random or both", o.strategy));
  }
  for (auto s : strategies) {
    auto c = o.cfg;
    c.strategy = s;
    nasa::search::validate(c);
  }
  auto [net, w] = nasa::runtime::load_supernet_dir(o.supernet);
  const auto& cfg = nasa::config_by_name(o.config);
  // every generation is a batch run: every op of the supernet must run (docs/cli.md "Preflight")
  nasa::compile::preflight(nasa::compile::quantize_shapes(net), cfg,
                           fmt::format("supernet '{}'", o.supernet));
  nasa::runtime::DeviceFactory factory = backend_factory(o.backend);
  const nasa::data::JobData jd = load_job_data(o.data, o.val_split, o.cfg.seed);
  nasa::data::check_fits(jd.train, net.name, net.in_h, net.in_w, net.in_c, net.classes,
                         fmt::format("the data ({})", jd.source));
  if (o.val_images == 0 || o.val_images > jd.val) {
    throw std::invalid_argument(fmt::format(
        "--val-images {}: expected 1..{} (the validation split)", o.val_images, jd.val));
  }
  if (o.calib == 0 || o.calib > jd.train_only()) {
    throw std::invalid_argument(
        fmt::format("--calib {}: expected 1..{} (the training images)", o.calib, jd.train_only()));
  }
  const auto& train = jd.train;
  const size_t val0 = jd.train_only();
  const auto imgs = train.byte_images(val0, val0 + o.val_images);
  const std::vector<uint8_t> labels = train.label_range(val0, val0 + o.val_images);
  // calibrated by the ranks of an mpirun job together (docs/mpi.md)
  nasa::runtime::Runtime rt(nasa::compile::quantize(net, w, train, o.calib, &nasa::dist::world()),
                            cfg, factory, o.backend);
  const auto t0 = std::chrono::steady_clock::now();
  // on every rank of an mpirun job, each with its share of the images (docs/mpi.md); one thread
  // (one device: a board's link takes one run at a time); `both` runs on the device only the
  // candidates random search did not
  nasa::dist::Comm& ranks = nasa::dist::world();
  std::vector<nasa::search::SearchResult> runs = nasa::search::run_searches(
      rt, cfg, o.cfg, strategies, imgs, labels,
      [](const auto& p) { nasa::cli::info(nasa::search::progress_line(p)); }, 1, &ranks);
  for (auto& r : runs) r.calib_images = o.calib;
  if (!ranks.root()) return 0;  // rank 0 writes and reports
  nasa::report::write_outputs(o.out, runs, o.force);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const fs::path out = o.out;
  for (const char* f : {"report.md", "pareto.svg", "result.json"}) wrote(out / f);
  if (o.json) {
    nlohmann::json j = nasa::report::result_json(runs);
    j.erase("evaluated");
    j.erase("runs");
    // as in a run's result.json: what each file is, relative to the run directory (`dir`)
    j["dir"] = out.string();
    j["files"] = {{"result", "result.json"}, {"report", "report.md"}, {"pareto_svg", "pareto.svg"}};
    j["seconds"] = secs;
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  for (const auto& r : runs) {
    if (!r.best) continue;
    const auto& b = r.evaluated[*r.best];
    fmt::print("{}: best {} val acc {:.2f}%, {} MACs, {} params, {} cycles/image alone "
               "({} evaluated)\n",
               nasa::search::strategy_name(r.config.strategy), nasa::spec::format_candidate(b.arch),
               100.0 * b.val_accuracy, b.macs, b.params, b.cycles, r.evaluated.size());
  }
  fmt::print("searched in {:.1f} s; results in {}/ (report.md, result.json, pareto.svg)\n", secs,
             out.string());
  return 0;
}

}  // namespace

int nasa_main(int argc, char** argv) {
  CLI::App app{"nasa: one-shot NAS on the NASA accelerator"};
  app.require_subcommand(1);
  app.option_defaults()->always_capture_default();  // --verbose shows the defaults in effect
  app.set_version_flag("--version", NASA_VERSION_STRING, "print the version and exit");

  SpecSource info_src;
  bool info_json = false;
  auto* info = app.add_subcommand("info", "summary of a supernet: layers, choices, costs");
  info_src.add_options(*info);
  std::string info_config;
  info->add_option("--config", info_config,
                   "also check every op against this hardware configuration (sim, large, fpga, up5k)");
  info->add_flag("--json", info_json, "print one JSON object");

  SpecSource init_src;
  uint64_t init_seed = 1;
  std::string init_out;
  bool init_force = false, init_json = false;
  auto* init = app.add_subcommand("init", "write a supernet spec and random float weights");
  init_src.add_options(*init);
  init->add_option("--seed", init_seed, "seed of the random weights");
  init->add_option("--out", init_out, "output directory")->required();
  init->add_flag("--force", init_force, "overwrite an existing supernet in --out");
  init->add_flag("--json", init_json, "print one JSON object");

  EvalOptions ev;
  auto* eval = app.add_subcommand("eval", "evaluate a candidate in int8 on a backend");
  eval->add_option("--supernet", ev.supernet,
                   "supernet directory (supernet.json and weights.safetensors) or its supernet.json")
      ->required();
  eval->add_option("--arch", ev.arch, "one candidate, e.g. 2-0-1-3-4-0");
  eval->add_option("--arch-file", ev.batch.arch_file, "a batch: one candidate per line");
  eval->add_option("--random", ev.batch.random, "a batch of N random candidates (--seed)");
  eval->add_option("--generate", ev.generate, "N candidates generated on chip by cand_gen");
  eval->add_option("--seed", ev.batch.seed, "seed of --random / --generate");
  eval->add_option("--mode", ev.gen_mode, "cand_gen mode: sample, mutate, crossover");
  eval->add_option("--parents-file", ev.parents_file, "parents of --mode mutate/crossover");
  eval->add_option("--mut-prob", ev.mut_prob,
                   "per-layer mutation probability of --mode mutate");
  eval->add_flag("--fused", ev.fused, "evaluate the batch fused in one batch run");
  eval->add_option("--mini-batch", ev.mini_batch, "images per mini-batch of a fused run");
  eval->add_flag("--dump-logits", ev.dump_logits,
                 "keep every candidate's logits in a fused run (logits_sha256 per candidate)");
  eval->add_option("--images", ev.images, "test images to evaluate");
  eval->add_option("--calib", ev.calib, "training images for activation calibration");
  eval->add_option("--backend", ev.backend,
                   "ref (reference model), rtl (Verilator) or uart (the board, --port)");
  eval->add_option("--port", g_uart_port, "serial port of the uart backend");
  auto* eval_config = eval->add_option(
      "--config", ev.config, "hardware configuration (default sim; up5k with --backend uart)");
  eval->add_option("--data", ev.data,
                   "dataset directory: IDX, CIFAR-10/100 binary or image folder (docs/data.md); "
                   "or an IDX images file with --labels (default: Fashion-MNIST)");
  eval->add_option("--labels", ev.labels, "IDX labels file for an IDX images file --data");
  eval->add_flag("--json", ev.json, "print one JSON object");

  SpecSource fuse_src;
  BatchSource fuse_batch;
  size_t fuse_images = 64, fuse_mb = 32;
  std::string fuse_config = "sim", fuse_svg;
  bool fuse_json = false;
  auto* fuse = app.add_subcommand(
      "fuse", "fuse a batch of candidates: nodes, MACs and modeled DRAM bytes per schedule");
  fuse_src.add_options(*fuse);
  fuse->add_option("--arch-file", fuse_batch.arch_file, "one candidate per line");
  fuse->add_option("--random", fuse_batch.random, "N random candidates");
  fuse->add_option("--seed", fuse_batch.seed, "seed of --random");
  fuse->add_option("--images", fuse_images, "images of the DRAM model");
  fuse->add_option("--mini-batch", fuse_mb, "images per mini-batch");
  fuse->add_option("--config", fuse_config, "hardware configuration of the buffers");
  fuse->add_option("--svg", fuse_svg, "also draw the fused trie to this SVG file");
  fuse->add_flag("--json", fuse_json, "print one JSON object");

#ifdef NASA_HAVE_TRAIN
  SpecSource train_src;
  nasa::train::Config train_cfg;
  std::string train_out, train_arch, train_init;
  bool train_json = false;
  auto* train = app.add_subcommand(
      "train", "train the supernet (single-path one-shot, libtorch) on Fashion-MNIST");
  train_src.add_options(*train);
  train->add_option("--out", train_out, "output directory")->required();
  train->add_option("--epochs", train_cfg.epochs,
                    "epochs over the training images (Fashion-MNIST: 50000)");
  std::string train_data, train_val_split;
  train->add_option("--data", train_data,
                    "dataset directory: IDX, CIFAR-10/100 binary or image folder (docs/data.md; "
                    "default: Fashion-MNIST)");
  train->add_option("--val-split", train_val_split,
                    "validation split of the training images: a count or a fraction (default "
                    "0.1 with --data; Fashion-MNIST: the last 10000), chosen by --seed");
  train->add_option("--batch", train_cfg.batch, "batch size");
  train->add_option("--lr", train_cfg.lr, "peak learning rate, cosine decay");
  train->add_option("--wd", train_cfg.weight_decay, "weight decay");
  train->add_option("--optimizer", train_cfg.optimizer, "sgd (Nesterov momentum) or adam");
  train->add_option("--seed", train_cfg.seed, "seed of init, data order and paths");
  train->add_option("--threads", train_cfg.threads, "torch CPU threads");
  train->add_option("--train-images", train_cfg.train_images,
                    "use only the first N training images (default: all; Fashion-MNIST 50000)");
  train->add_option("--augment-shift", train_cfg.augment_shift,
                    "augmentation: shift each training image by up to N pixels (0 = off)");
  train->add_flag("--augment-flip", train_cfg.augment_flip,
                  "augmentation: mirror half the training images left-right");
  train->add_option("--label-smoothing", train_cfg.label_smoothing,
                    "label smoothing of the cross-entropy loss (0 = off)");
  train->add_option("--paths-per-step", train_cfg.paths_per_step,
                    "paths per training step, sharing its batch: 0 = as many as the widest layer "
                    "has choices (fair sampling: every choice trained every step), 1 = one "
                    "uniformly drawn path (SPOS)");
  train->add_option("--eval-candidates", train_cfg.eval_candidates,
                    "random candidates evaluated on the validation split at the end");
  train->add_option("--eval-images", train_cfg.eval_images,
                    "validation images for that evaluation (default: the whole split)");
  train->add_option("--arch", train_arch,
                    "train only this candidate (standalone, the SPOS final step)");
  train->add_option("--init", train_init,
                    "start from the weights of this supernet directory (e.g. a trained supernet)");
  train->add_flag("--resume", train_cfg.resume, "continue from DIR/checkpoint.pt");
  train->add_flag("--force", train_cfg.force, "start over, deleting a previous run in --out");
  train->add_flag("--json", train_json, "print one JSON object");
#endif

#ifdef NASA_HAVE_TRAIN
  RunOptions ro;
  {  // the default preset's values, so --help shows them (apply_preset sets them all)
    const auto& dp = nasa::pipeline::find_preset("default");
    ro.p.train.epochs = dp.epochs;
    ro.p.finetune_epochs = dp.finetune_epochs;
    ro.p.finetune_shift = dp.finetune_shift;
    ro.p.finetune_smoothing = dp.finetune_smoothing;
  }
  auto* run = app.add_subcommand(
      "run", "the NAS job: train the supernet, search it, test and fine-tune the best, RTL check");
  ro.cmd = run;
  ro.src.add_options(*run);
  std::vector<std::string> preset_help;
  for (const auto& p : nasa::pipeline::presets())
    preset_help.push_back(fmt::format("'{}' ({})", p.name, p.summary));
  run->add_option("--preset", ro.preset,
                  fmt::format("budget: {}; the defaults of --epochs, --finetune-epochs, "
                              "--finetune-shift, --finetune-flip, --finetune-smoothing and "
                              "--max-macs (docs/nas-job.md)",
                              fmt::join(preset_help, " or ")));
  run->add_option("--name", ro.p.name,
                  "run directory name under --runs-dir (default <space>-seed<seed>[-N], new)");
  run->add_flag("--resume", ro.p.resume,
                "continue the interrupted run --name (same options): reuses what it finished");
  run->add_option("--runs-dir", ro.runs_dir, "where runs and trained supernets go");
  run->add_option("--seed", ro.p.seed, "seed of training, search and fine-tuning");
  run->add_option("--epochs", ro.p.train.epochs, "supernet training epochs");
  run->add_option("--batch", ro.p.train.batch, "training batch size");
  run->add_option("--lr", ro.p.train.lr, "supernet peak learning rate");
  run->add_option("--paths-per-step", ro.p.train.paths_per_step,
                  "supernet paths per training step: 0 = as many as the widest layer has "
                  "choices (fair sampling), 1 = one uniformly drawn path (SPOS)");
  run->add_option("--train-images", ro.p.train.train_images,
                  "training images (default: all 50000)");
  run->add_option("--threads", ro.p.train.threads, "torch CPU threads");
  run->add_option("--finetune-epochs", ro.p.finetune_epochs,
                  "standalone training epochs of the chosen candidate");
  run->add_option("--finetune-lr", ro.p.finetune_lr, "its peak learning rate");
  run->add_option("--finetune-shift", ro.p.finetune_shift,
                  "fine-tuning augmentation: shift images by up to N pixels (0 = off)");
  run->add_flag("--finetune-flip", ro.p.finetune_flip,
                "fine-tuning augmentation: mirror half the images left-right");
  run->add_option("--finetune-smoothing", ro.p.finetune_smoothing,
                  "fine-tuning's label smoothing (0 = off)");
  run->add_option("--population", ro.p.search.population, "initial population");
  run->add_option("--generations", ro.p.search.generations, "generations");
  run->add_option("--topk", ro.p.search.topk, "parents kept per generation");
  run->add_option("--mutations", ro.p.search.mutations, "children by mutation");
  run->add_option("--crossovers", ro.p.search.crossovers, "children by crossover");
  run->add_option("--mut-prob", ro.p.search.mut_prob, "per-layer mutation probability");
  run->add_option("--max-macs", ro.p.search.constraints.max_macs,
                  "MAC limit (0 = none; default: the preset's, 1500000)");
  run->add_option("--max-params", ro.p.search.constraints.max_params, "parameter limit (0 = none)");
  run->add_option("--max-cycles", ro.p.search.constraints.max_cycles,
                  "limit of accelerator cycles of one image alone (0 = none)");
  run->add_option("--data", ro.p.data,
                  "dataset directory: IDX, CIFAR-10/100 binary or image folder (docs/data.md; "
                  "default: Fashion-MNIST)");
  run->add_option("--val-split", ro.p.val_split,
                  "validation split of the training images: a count or a fraction (default 0.1 "
                  "with --data; Fashion-MNIST: the last 10000), chosen by --seed");
  run->add_option("--val-images", ro.p.val_images, "validation images of the search");
  run->add_option("--shard-batches", ro.p.search.shard_batches,
                  "mini-batches of 32 images per shard of the validation images (the unit "
                  "mpirun's ranks share; docs/mpi.md)");
  run->add_option("--calib", ro.p.calib_images, "calibration images");
  run->add_option("--finalists", ro.p.finalists,
                  "top candidates of each search ranked again on the whole validation split, "
                  "BatchNorm recalibrated (default 5)");
  run->add_option("--recal-images", ro.p.recal_images,
                  "training images the finalists' BatchNorm statistics are recalibrated on (0: "
                  "the supernet's; default 2048)");
  run->add_option("--finalist-images", ro.p.finalist_images,
                  "validation images the finalists are ranked on (0: the whole split; default 0)");
  run->add_option("--top", ro.p.top_n, "finalists evaluated on the test set");
  run->add_option("--test-images", ro.p.test_images, "test images");
  run->add_option("--rtl-images", ro.p.rtl_images,
                  "test images of the RTL cross-check of the final model (default 256, 0 = skip)");
  run->add_option("--config", ro.p.hw_config, "hardware configuration");
  run->add_flag("--json", ro.json, "print one JSON summary object");
#endif

  SearchOptions so;
  auto* search = app.add_subcommand(
      "search", "search the supernet (random or evolution) with fused evaluation on a backend");
  search
      ->add_option("--supernet", so.supernet,
                   "supernet directory (supernet.json and weights.safetensors) or its supernet.json")
      ->required();
  search->add_option("--out", so.out, "run directory for result.json, report.md, pareto.svg")
      ->required();
  search->add_option("--strategy", so.strategy, "evolution (default), random or both");
  search->add_option("--population", so.cfg.population, "initial population");
  search->add_option("--generations", so.cfg.generations, "generations");
  search->add_option("--topk", so.cfg.topk, "parents kept per generation");
  search->add_option("--mutations", so.cfg.mutations, "children by mutation");
  search->add_option("--crossovers", so.cfg.crossovers, "children by crossover");
  search->add_option("--mut-prob", so.cfg.mut_prob, "per-layer mutation probability");
  search->add_option("--max-macs", so.cfg.constraints.max_macs, "MAC limit (0 = none)");
  search->add_option("--max-params", so.cfg.constraints.max_params, "parameter limit (0 = none)");
  search->add_option("--max-cycles", so.cfg.constraints.max_cycles,
                     "limit of accelerator cycles of one image alone (0 = none)");
  search->add_option("--val-images", so.val_images,
                     "validation images, from the validation split (Fashion-MNIST: the last 10000 "
                     "training images)");
  search->add_option("--data", so.data,
                     "dataset directory: IDX, CIFAR-10/100 binary or image folder (docs/data.md; "
                     "default: Fashion-MNIST)");
  search->add_option("--val-split", so.val_split,
                     "validation split of the training images: a count or a fraction (default "
                     "0.1 with --data; Fashion-MNIST: the last 10000), chosen by --seed");
  search->add_option("--calib", so.calib, "training images for calibration");
  search->add_option("--mini-batch", so.cfg.mini_batch, "images per mini-batch");
  search->add_option("--shard-batches", so.cfg.shard_batches,
                     "mini-batches per shard of the validation images (the unit mpirun's ranks "
                     "share; docs/mpi.md)");
  search->add_option("--backend", so.backend, "ref (default), rtl or uart (--port)");
  search->add_option("--port", g_uart_port, "serial port of the uart backend");
  auto* search_config = search->add_option(
      "--config", so.config, "hardware configuration (default sim; up5k with --backend uart)");
  search->add_option("--seed", so.cfg.seed, "seed of the search");
  search->add_flag("--force", so.force, "overwrite an earlier result in --out");
  search->add_flag("--json", so.json, "print one JSON summary object");

  ExportOptions xo;
  auto* exp = app.add_subcommand(
      "export", "write a candidate as an ONNX model: float (BatchNorm folded) or --int8 QDQ");
  exp->add_option("--supernet", xo.supernet,
                  "supernet directory (or a run's final/model) or its supernet.json")
      ->required();
  exp->add_option("--arch", xo.arch,
                  "the candidate, e.g. 2-0-1-3-4-0 (default 0-0-...: a one-choice network such "
                  "as a run's final/model)");
  exp->add_option("--out", xo.out, "the .onnx file to write")->required();
  auto* exp_int8 =
      exp->add_flag("--int8", xo.int8,
                    "the quantized network as a QDQ model with the accelerator's scales and codes");
  exp->add_option("--calib", xo.calib,
                  "training images that calibrate --int8 (as nasa eval --calib)")
      ->needs(exp_int8);
  exp->add_option("--data", xo.data,
                  "dataset directory whose training images calibrate --int8 (docs/data.md; "
                  "default: Fashion-MNIST)")
      ->needs(exp_int8);
  exp->add_flag("--force", xo.force, "replace an existing --out file");
  exp->add_flag("--json", xo.json, "print one JSON object");

  // every command: how much it tells on stderr (docs/cli.md "Output")
  bool quiet = false, verbose = false;
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    auto* q = sub->add_flag("--quiet", quiet, "only errors on stderr: no progress");
    sub->add_flag("--verbose", verbose, "also the settings in effect, before the work")->excludes(q);
  }
  nasa::cli::apply_contract(app);
  if (const auto code = nasa::cli::parse(app, argc, argv)) return *code;
  // of an mpirun job's ranks only rank 0 reports (the others: errors only)
  nasa::cli::set_verbosity(quiet || !nasa::dist::world().root() ? nasa::cli::Verbosity::Quiet
                           : verbose                            ? nasa::cli::Verbosity::Verbose
                                                                : nasa::cli::Verbosity::Normal);
  for (CLI::App* sub : app.get_subcommands()) {
    std::string settings = sub->config_to_str(true, false);
    while (!settings.empty() && settings.back() == '\n') settings.pop_back();
    nasa::cli::debug(fmt::format("nasa {}: settings in effect:\n{}", sub->get_name(), settings));
  }
  // the board runs the `up5k` configuration (the uart device checks what it reports)
  if (ev.backend == "uart" && eval_config->count() == 0) ev.config = "up5k";
  if (so.backend == "uart" && search_config->count() == 0) so.config = "up5k";
  try {
    // on several ranks (docs/mpi.md): search, train and run share the work; the others would
    // only run N times and write the same files at once
    if (const std::string cmd = app.get_subcommands().front()->get_name();
        nasa::dist::world().size() > 1 && cmd != "search" && cmd != "train" && cmd != "run") {
      throw std::invalid_argument(fmt::format(
          "`nasa {}` runs in one process: start it without mpirun (on several ranks: search, "
          "train, run; docs/mpi.md)",
          cmd));
    }
    if (eval->parsed()) return cmd_eval(ev);
    if (search->parsed()) {
      nasa::install_interrupt_handlers();  // Ctrl-C stops between generations
      return cmd_search(so);
    }
    if (info->parsed()) return cmd_info(info_src, info_config, info_json);
    if (fuse->parsed()) {
      return cmd_fuse(fuse_src, fuse_batch, fuse_images, fuse_mb, fuse_config, fuse_svg, fuse_json);
    }
    if (init->parsed()) return cmd_init(init_src, init_seed, init_out, init_force, init_json);
    if (exp->parsed()) return cmd_export(xo);
#ifdef NASA_HAVE_TRAIN
    // Ctrl-C stops between training steps (and search generations, evaluation pieces) with
    // every file complete; other subcommands write only at their end and just exit.
    if (train->parsed() || run->parsed()) nasa::install_interrupt_handlers();
    if (train->parsed()) {
      const Supernet net = train_src.load();
      if (!train_arch.empty()) train_cfg.arch = nasa::spec::parse_candidate(train_arch, net);
      if (!train_init.empty()) {
        auto init = nasa::runtime::load_supernet_dir(train_init);
        if (!(init.net == net)) {
          throw std::invalid_argument(fmt::format(
              "--init '{}' holds supernet '{}', not the '{}' being trained", train_init,
              init.net.name, net.name));
        }
        train_cfg.init = std::move(init.weights);
      }
      if (!train_data.empty() || !train_val_split.empty()) {
        nasa::data::JobData jd = load_job_data(train_data, train_val_split, train_cfg.seed);
        train_cfg.val_images = jd.val;
        train_cfg.dataset = std::move(jd.train);
      }
      return cmd_train(net, train_cfg, train_out, train_json);
    }
    if (run->parsed()) return cmd_run(ro);
#endif
  } catch (const nasa::Interrupted& e) {
    nasa::cli::warn(fmt::format(
        "{}; every file written so far is complete (`nasa run --resume` continues a run, "
        "`nasa train --resume` a training)",
        e.what()));
    return 128 + e.signal;
  } catch (const std::exception& e) {
    // an mpirun job's error names the rank it happened on
    const std::string rank = nasa::dist::rank_label();
    nasa::cli::error(rank.empty() ? std::string(e.what()) : rank + ": " + e.what());
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  // Freed buffers stay in the heap: a batch run's memory image and activations (tens of MB) would
  // otherwise be mapped and faulted in afresh for every run (a search generation took 1.6x as
  // long). Open MPI's memory hooks do the same under mpirun, so one rank and N compare fairly.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  try {
    nasa::dist::init(argc, argv);
  } catch (const std::exception& e) {
    nasa::cli::error(e.what());
    return 1;
  }
  const int rc = nasa_main(argc, argv);
  // a rank that fails ends the job: the other ranks would wait for it forever
  if (rc != 0) nasa::dist::abort_job(rc);
  nasa::dist::finalize();
  return rc;
}
