// `nasa`: the command line of the NASA runtime. A thin shell over the library: each subcommand
// parses its options, calls the library, and prints a table or (--json) one JSON object.
// Errors from the library are caught here once, printed, and turned into exit code 1.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "nasa/compiler.h"
#include "nasa/data.h"
#include "nasa/float_eval.h"
#include "nasa/runtime.h"
#include "nasa/sim/rtl_device.h"
#include "nasa/spec.h"
#include "nasa/supernet_weights.h"

namespace {

namespace fs = std::filesystem;
using nasa::spec::Supernet;

// --space NAME (a built-in space) or --supernet PATH (a spec file, or a directory holding
// supernet.json, as `nasa init` writes it).
struct SpecSource {
  std::string space, supernet;

  void add_options(CLI::App& app) {
    auto* s = app.add_option("--space", space, "built-in search space (e.g. fmnist-mb)");
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
    return nasa::spec::builtin_space(space.empty() ? "fmnist-mb" : space);
  }
};

int cmd_info(const SpecSource& src, bool json) {
  const Supernet net = src.load();
  const auto shapes = nasa::spec::layer_shapes(net);
  nlohmann::json j;
  j["name"] = net.name;
  j["input"] = {net.in_h, net.in_w, net.in_c};
  j["classes"] = net.classes;
  j["search_space_size"] = nasa::spec::search_space_size(net);
  const auto stem = nasa::spec::stem_cost(net), head = nasa::spec::head_cost(net);
  j["stem"] = {{"macs", stem.macs}, {"params", stem.params}};
  j["head"] = {{"macs", head.macs}, {"params", head.params}};
  nlohmann::json layers = nlohmann::json::array(), kis = nlohmann::json::array();
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const auto& l = net.layers[i];
    nlohmann::json choices = nlohmann::json::array();
    for (size_t c = 0; c < l.choices.size(); ++c) {
      const auto cost = nasa::spec::op_cost(net, i, c);
      choices.push_back({{"op", nasa::spec::op_name(l.choices[c])},
                         {"macs", cost.macs},
                         {"params", cost.params}});
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
  nasa::weights::write_safetensors(weights_path, weights);
  uint64_t params = 0;
  for (const auto& [name, t] : weights.tensors) params += t.numel();
  if (json) {
    nlohmann::json j = {{"supernet", spec_path.string()},
                        {"weights", weights_path.string()},
                        {"tensors", weights.tensors.size()},
                        {"parameters", params},
                        {"seed", seed}};
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("wrote {} and {} ({} tensors, {} parameters, seed {})\n", spec_path.string(),
               weights_path.string(), weights.tensors.size(), params, seed);
  }
  return 0;
}

struct EvalOptions {
  std::string supernet, arch, backend = "ref", config = "sim", data, labels;
  size_t images = 64, calib = 32;
  bool json = false;
};

int cmd_eval(const EvalOptions& o) {
  auto [net, w] = nasa::runtime::load_supernet_dir(o.supernet);
  const nasa::spec::Candidate cand = nasa::spec::parse_candidate(o.arch, net);
  const auto& cfg = nasa::config_by_name(o.config);
  nasa::runtime::DeviceFactory factory;
  if (o.backend == "ref") {
    factory = [](const nasa::hw::Config& c, uint64_t m) {
      return nasa::device::make_ref_device(c, m);
    };
  } else if (o.backend == "rtl") {
    factory = [](const nasa::hw::Config& c, uint64_t m) {
      return nasa::sim::make_rtl_device(c, m);
    };
  } else {
    throw std::invalid_argument(fmt::format("--backend '{}': expected ref or rtl", o.backend));
  }
  // Calibration on training images, evaluation on test images (or --data/--labels).
  const auto train = nasa::data::load_fashion_mnist("train", o.calib);
  std::vector<nasa::floatnet::Tensor> calib;
  for (size_t i = 0; i < train.size(); ++i) {
    calib.push_back(nasa::floatnet::image_from_u8(
        train.image(i).data(), static_cast<int>(train.rows), static_cast<int>(train.cols), 1));
  }
  const auto test = o.data.empty() ? nasa::data::load_fashion_mnist("test", o.images)
                                   : nasa::data::load_idx(o.data, o.labels, o.images);
  if (test.size() < o.images) {
    throw std::runtime_error(
        fmt::format("--images {}: the data has only {} images", o.images, test.size()));
  }
  std::vector<std::vector<uint8_t>> imgs;
  for (size_t i = 0; i < test.size(); ++i) {
    const auto im = test.image(i);
    imgs.emplace_back(im.begin(), im.end());
  }
  nasa::runtime::Runtime rt(nasa::compile::quantize(net, w, calib), cfg, factory, o.backend);
  const auto r = rt.evaluate(cand, imgs, std::span<const uint8_t>(test.labels.data(), test.size()));
  if (o.json) {
    nlohmann::json j = {{"arch", nasa::spec::format_candidate(cand)},
                        {"backend", o.backend},
                        {"config", o.config},
                        {"images", r.images},
                        {"correct", r.correct},
                        {"accuracy", r.accuracy()},
                        {"cycles", r.cycles},
                        {"macs", r.macs},
                        {"dram_bytes", r.dram_read + r.dram_written},
                        {"logits_sha256", r.logits_sha256}};
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{} on {} ({}): {}/{} correct ({:.2f}%), {} cycles, {} MACs, logits sha256 {}\n",
               nasa::spec::format_candidate(cand), o.backend, o.config, r.correct, r.images,
               100.0 * r.accuracy(), r.cycles, r.macs, r.logits_sha256);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nasa: one-shot NAS on the NASA accelerator"};
  app.require_subcommand(1);

  SpecSource info_src;
  bool info_json = false;
  auto* info = app.add_subcommand("info", "summary of a supernet: layers, choices, costs");
  info_src.add_options(*info);
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
                   "directory with supernet.json and weights.safetensors")
      ->required();
  eval->add_option("--arch", ev.arch, "candidate, e.g. 2-0-1-3-4-0")->required();
  eval->add_option("--images", ev.images, "test images to evaluate (default 64)");
  eval->add_option("--calib", ev.calib, "training images for activation calibration (default 32)");
  eval->add_option("--backend", ev.backend, "ref (reference model) or rtl (Verilator)");
  eval->add_option("--config", ev.config, "hardware configuration (default sim)");
  eval->add_option("--data", ev.data, "IDX images file (default: Fashion-MNIST test set)");
  eval->add_option("--labels", ev.labels, "IDX labels file for --data");
  eval->add_flag("--json", ev.json, "print one JSON object");

  CLI11_PARSE(app, argc, argv);
  try {
    if (eval->parsed()) return cmd_eval(ev);
    if (info->parsed()) return cmd_info(info_src, info_json);
    if (init->parsed()) return cmd_init(init_src, init_seed, init_out, init_force, init_json);
  } catch (const std::exception& e) {
    fmt::print(stderr, "nasa: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
