// nasa-cosim: random-layer cosimulation of the Verilated engine against the reference model.
// Checks every byte of memory, the error codes and the cycle model; reports efficiency.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nasa/cycle_model.h"
#include "nasa/desc.h"
#include "nasa/dist.h"
#include "nasa/sim/cosim.h"
#include "nasa/sim/random_layer.h"

namespace {

using nasa::sim::Cosim;
using nasa::sim::CosimResult;
using nasa::sim::Program;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string config = "sim";
  uint64_t layers = 100;
  uint64_t seed = 1;
  bool json = false;
  bool table = false;
  std::string fst;
  std::optional<uint32_t> dram_latency, dram_bw, dram_outstanding;
  std::string suite;
  std::optional<uint64_t> only_layer;
  uint64_t max_work = 0;
  bool programs = false;  // items are random programs of 2-5 independent layers
  bool chains = false;    // items are random programs of 2-6 dependent layers
  uint32_t stream = 8;    // single random layers run as mini-batch streams of this many images
  const char* item() const { return programs ? "program" : chains ? "chain" : "layer"; }
  const char* items() const { return programs ? "programs" : chains ? "chains" : "layers"; }
  std::string rerun_flags() const {
    std::string f = programs ? " --programs" : chains ? " --chains" : "";
    if (!programs && !chains && stream != 8) f += fmt::format(" --stream {}", stream);
    return f;
  }
};

struct Worst {
  bool valid = false;
  uint64_t index = 0, seed = 0;
  bool failed = false;
  double cycle_error_pct = 0;
  std::string desc, failure;
};

struct Summary {
  std::string config;
  nasa::cycles::DramTiming dram;
  uint64_t layers = 0, mismatched_bytes = 0, mismatched_layers = 0, errors = 0, timeouts = 0;
  double max_cycle_error_pct = 0, sum_cycle_error_pct = 0;
  uint64_t cycle_samples = 0;
  double min_conv_efficiency = std::numeric_limits<double>::infinity();
  uint64_t conv_layers_qualifying = 0;
  // run; row bands, folded residuals, packed images (the array's rows split between images),
  // K-split (a Conv/Fc whose last channel tile runs its reduction in column groups)
  uint64_t descriptors = 0, bands = 0, residuals = 0, packed = 0, ksplit = 0;
  // (ideal cycles, efficiency) of every qualifying layer (in a stream: its steady state); and
  // its efficiency alone, where the fixed cost of a standalone layer (descriptor fetch, first
  // loads, last drain: about 150-250 cycles) dominates small layers.
  std::vector<std::pair<double, double>> conv_eff;
  std::vector<double> conv_eff_alone;
  static constexpr double kAmortized = 2048;  // ideal cycles from which that cost is amortized
  double median_conv_efficiency() const {
    std::vector<double> e;
    for (const auto& [ideal, eff] : conv_eff) e.push_back(eff);
    if (e.empty()) return 0;
    std::sort(e.begin(), e.end());
    return e[e.size() / 2];
  }
  std::pair<double, uint64_t> min_conv_efficiency_amortized() const {
    double m = std::numeric_limits<double>::infinity();
    uint64_t n = 0;
    for (const auto& [ideal, eff] : conv_eff) {
      if (ideal < kAmortized) continue;
      m = std::min(m, eff);
      ++n;
    }
    return {n ? m : 0.0, n};
  }
  uint64_t sim_cycles = 0;
  double wall_s = 0;
  Worst worst;

  std::pair<double, double> standalone_min_median() const {
    std::vector<double> e = conv_eff_alone;
    if (e.empty()) return {0, 0};
    std::sort(e.begin(), e.end());
    return {e.front(), e[e.size() / 2]};
  }

  double mean_cycle_error_pct() const {
    return cycle_samples ? sum_cycle_error_pct / static_cast<double>(cycle_samples) : 0.0;
  }
  double sim_cycles_per_s() const {
    return wall_s > 0 ? static_cast<double>(sim_cycles) / wall_s : 0.0;
  }
  bool has_conv() const { return conv_layers_qualifying > 0; }
  bool failed() const { return mismatched_layers > 0 || timeouts > 0; }
};

nasa::cycles::DramTiming dram_for(const nasa::hw::Config& cfg, const Options& o) {
  nasa::cycles::DramTiming t = nasa::cycles::default_dram(cfg);
  if (o.dram_latency) t.latency = *o.dram_latency;
  if (o.dram_bw) t.bytes_per_cycle = std::min(*o.dram_bw, cfg.mem_bytes);
  if (o.dram_outstanding) t.max_outstanding = *o.dram_outstanding;
  return t;
}

Summary run_suite(const nasa::hw::Config& cfg, uint64_t layers, const Options& o) {
  Summary s;
  s.config = std::string(cfg.name);
  s.dram = dram_for(cfg, o);
  Cosim cs(cfg, s.dram);
  if (!o.fst.empty() && nasa::dist::world().size() > 1) {
    throw std::invalid_argument("--fst writes one waveform: run it on one rank, not under mpirun");
  }
  if (!o.fst.empty()) {
    // One file per configuration when several run.
    std::filesystem::path fst(o.fst);
    if (o.suite == "all") {
      fst.replace_filename(
          fmt::format("{}_{}{}", fst.stem().string(), cfg.name, fst.extension().string()));
    }
    cs.engine().trace(fst.string());
  }
  nasa::sim::RandomLayerOptions lopt;
  lopt.max_work_cycles = o.max_work;

  const auto t0 = Clock::now();
  auto last_progress = t0;
  const uint64_t c0 = cs.engine().cycle();
  const uint64_t first = o.only_layer ? *o.only_layer : 0;
  const uint64_t end = o.only_layer ? first + 1 : layers;
  // the ranks of an mpirun job take every N-th item (docs/mpi.md); merged by merge_ranks()
  const nasa::dist::Comm& ranks = nasa::dist::world();
  const auto n_ranks = static_cast<uint64_t>(ranks.size());
  for (uint64_t i = first + static_cast<uint64_t>(ranks.rank()); i < end; i += n_ranks) {
    const uint64_t seed = nasa::sim::derive_seed(o.seed, i);
    ++s.layers;
    CosimResult r;
    std::string desc;
    try {
      const Program p = o.programs ? nasa::sim::random_program(seed, cfg, lopt)
                        : o.chains ? nasa::sim::random_chain(seed, cfg, lopt)
                                   : nasa::sim::random_stream(seed, cfg, o.stream, lopt);
      desc = (o.programs || o.chains) ? p.name : nasa::sim::describe(p.descs.at(0));
      s.descriptors += p.descs.size();
      for (const auto& d : p.descs) {
        s.bands += nasa::is_band(d);
        s.residuals += nasa::has_residual(d);
        s.packed += nasa::is_packed(d);
        s.ksplit += nasa::cycles::ksplit_groups(d, cfg, (d.cout - 1) % cfg.cols + 1) > 1;
      }
      r = cs.run(p);
    } catch (const std::exception& e) {
      r.ok = false;
      r.failure = fmt::format("harness error: {}", e.what());
    }
    if (!r.ok) {
      ++s.mismatched_layers;
      s.mismatched_bytes += r.mismatched_bytes;
      s.timeouts += r.rtl.timeout ? 1 : 0;
      fmt::print(stderr,
                 "[{}] {} {} (seed {:#x}) FAILED: {}\n  {}\n  rerun: nasa-cosim "
                 "--config {}{} --seed {} --only-layer {}\n",
                 cfg.name, o.item(), i, seed, desc, r.failure, cfg.name, o.rerun_flags(), o.seed,
                 i);
    }
    if (r.ref_err == 0 && r.rtl.err_code != 0) ++s.errors;
    if (r.ok && r.rtl_cycles > 0) {
      s.max_cycle_error_pct = std::max(s.max_cycle_error_pct, r.cycle_error_pct);
      s.sum_cycle_error_pct += r.cycle_error_pct;
      ++s.cycle_samples;
      if (r.conv_qualifies) {
        ++s.conv_layers_qualifying;
        s.min_conv_efficiency = std::min(s.min_conv_efficiency, r.efficiency);
        s.conv_eff.emplace_back(static_cast<double>(r.macs) / (double{1} * cfg.rows * cfg.cols) /
                                    static_cast<double>(std::max<uint32_t>(1, o.stream)),
                                r.efficiency);
        s.conv_eff_alone.push_back(r.standalone_efficiency);
      }
    }
    // Worst layer: the first failure, else the largest cycle-model error.
    if (!s.worst.failed &&
        (!r.ok || !s.worst.valid || r.cycle_error_pct > s.worst.cycle_error_pct)) {
      s.worst = Worst{true, i, seed, !r.ok, r.cycle_error_pct, desc, r.failure};
    }
    const auto now = Clock::now();
    if (now - last_progress > std::chrono::seconds(10)) {
      last_progress = now;
      const double el = std::chrono::duration<double>(now - t0).count();
      fmt::print(stderr, "[{}{}] {}/{} {}, {} failing, max cycle error {:.2f}%, {:.0f} s\n",
                 cfg.name, n_ranks > 1 ? ", " + nasa::dist::rank_label() : std::string(), i + 1,
                 end, o.items(), s.mismatched_layers, s.max_cycle_error_pct, el);
    }
  }
  s.sim_cycles = cs.engine().cycle() - c0;
  s.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!o.fst.empty()) cs.engine().trace("");
  return s;
}

// One suite's summaries of every rank of an mpirun job as one (on every rank): counts add up,
// extremes are the extremes over the ranks, the worst item is the one a single process would
// report (the first failure, else the largest cycle error, the lower index on a tie).
Summary merge_ranks(const Summary& mine) {
  nasa::dist::Comm& ranks = nasa::dist::world();
  if (ranks.size() <= 1) return mine;
  nlohmann::json j = {
      {"u",
       {mine.layers, mine.mismatched_bytes, mine.mismatched_layers, mine.errors, mine.timeouts,
        mine.cycle_samples, mine.conv_layers_qualifying, mine.descriptors, mine.bands,
        mine.residuals, mine.packed, mine.ksplit, mine.sim_cycles}},
      {"max_err", mine.max_cycle_error_pct},
      {"sum_err", mine.sum_cycle_error_pct},
      {"min_eff", mine.has_conv() ? mine.min_conv_efficiency : -1.0},
      {"eff", mine.conv_eff},
      {"eff_alone", mine.conv_eff_alone},
      {"wall", mine.wall_s}};
  if (mine.worst.valid) {
    const Worst& w = mine.worst;
    j["worst"] = {{"index", w.index},         {"seed", w.seed}, {"failed", w.failed},
                  {"err", w.cycle_error_pct}, {"desc", w.desc}, {"failure", w.failure}};
  }
  Summary s;
  s.config = mine.config;
  s.dram = mine.dram;
  for (const std::string& part : ranks.gather(j.dump())) {
    const nlohmann::json r = nlohmann::json::parse(part);
    const auto u = r["u"].get<std::vector<uint64_t>>();
    uint64_t* dst[] = {&s.layers,
                       &s.mismatched_bytes,
                       &s.mismatched_layers,
                       &s.errors,
                       &s.timeouts,
                       &s.cycle_samples,
                       &s.conv_layers_qualifying,
                       &s.descriptors,
                       &s.bands,
                       &s.residuals,
                       &s.packed,
                       &s.ksplit,
                       &s.sim_cycles};
    for (size_t k = 0; k < u.size(); ++k) *dst[k] += u[k];
    s.max_cycle_error_pct = std::max(s.max_cycle_error_pct, r["max_err"].get<double>());
    s.sum_cycle_error_pct += r["sum_err"].get<double>();
    if (r["min_eff"].get<double>() >= 0) {
      s.min_conv_efficiency = std::min(s.min_conv_efficiency, r["min_eff"].get<double>());
    }
    for (const auto& e : r["eff"]) s.conv_eff.emplace_back(e[0].get<double>(), e[1].get<double>());
    for (const auto& e : r["eff_alone"]) s.conv_eff_alone.push_back(e.get<double>());
    s.wall_s = std::max(s.wall_s, r["wall"].get<double>());
    if (!r.contains("worst")) continue;
    const auto& w = r["worst"];
    const Worst c{true,
                  w["index"].get<uint64_t>(),
                  w["seed"].get<uint64_t>(),
                  w["failed"].get<bool>(),
                  w["err"].get<double>(),
                  w["desc"].get<std::string>(),
                  w["failure"].get<std::string>()};
    const Worst& b = s.worst;
    const bool better =
        !b.valid ||
        (c.failed ? !b.failed || c.index < b.index
                  : !b.failed && (c.cycle_error_pct > b.cycle_error_pct ||
                                  (c.cycle_error_pct == b.cycle_error_pct && c.index < b.index)));
    if (better) s.worst = c;
  }
  return s;
}

nlohmann::json to_json(const Summary& s, const Options& o) {
  nlohmann::json j;
  j["config"] = s.config;
  j["layers"] = s.layers;
  j["mismatched_bytes"] = s.mismatched_bytes;
  j["mismatched_layers"] = s.mismatched_layers;
  j["errors"] = s.errors;
  j["timeouts"] = s.timeouts;
  j["max_cycle_error_pct"] = s.max_cycle_error_pct;
  j["mean_cycle_error_pct"] = s.mean_cycle_error_pct();
  j["stream_images"] = o.programs || o.chains ? 1 : o.stream;
  j["min_conv_efficiency"] =
      s.has_conv() ? nlohmann::json(s.min_conv_efficiency) : nlohmann::json(nullptr);
  j["conv_layers_qualifying"] = s.conv_layers_qualifying;
  j["descriptors"] = s.descriptors;
  j["band_descriptors"] = s.bands;
  j["residual_descriptors"] = s.residuals;
  j["packed_descriptors"] = s.packed;
  j["ksplit_descriptors"] = s.ksplit;
  if (s.has_conv()) {
    const auto [amin, an] = s.min_conv_efficiency_amortized();
    const auto [smin, smed] = s.standalone_min_median();
    j["median_conv_efficiency"] = s.median_conv_efficiency();
    j["min_conv_efficiency_ideal_ge_2048"] = an ? nlohmann::json(amin) : nlohmann::json(nullptr);
    j["conv_layers_ideal_ge_2048"] = an;
    j["min_conv_efficiency_standalone"] = smin;
    j["median_conv_efficiency_standalone"] = smed;
  }
  j["sim_cycles"] = s.sim_cycles;
  j["sim_cycles_per_s"] = s.sim_cycles_per_s();
  j["wall_s"] = s.wall_s;
  j["dram"] = {{"latency", s.dram.latency},
               {"bytes_per_cycle", s.dram.bytes_per_cycle},
               {"max_outstanding", s.dram.max_outstanding}};
  if (s.worst.valid) {
    j["worst_layer"] = {{"index", s.worst.index},   {"seed", s.worst.seed},
                        {"failed", s.worst.failed}, {"cycle_error_pct", s.worst.cycle_error_pct},
                        {"desc", s.worst.desc},     {"failure", s.worst.failure}};
  }
  return j;
}

void print_summary(const Summary& s, const Options& o) {
  const char* item = o.items();
  fmt::print(
      "config {}: {} {}{}, seed {}, DRAM latency {} cycles, {} bytes/cycle, {} outstanding\n",
      s.config, s.layers, item,
      o.programs || o.chains || o.stream == 1 ? ""
                                              : fmt::format(" (each a stream of {} images)", o.stream),
      o.seed, s.dram.latency, s.dram.bytes_per_cycle, s.dram.max_outstanding);
  fmt::print("  {} failing {} ({} mismatched bytes, {} timeouts), {} RTL errors on valid {}\n",
             s.mismatched_layers, item, s.mismatched_bytes, s.timeouts, s.errors, item);
  fmt::print("  cycle model error: max {:.2f}%, mean {:.2f}%\n", s.max_cycle_error_pct,
             s.mean_cycle_error_pct());
  fmt::print(
      "  modes: of {} descriptors, {} row bands, {} with a folded residual, {} packed, {} K-split\n",
      s.descriptors, s.bands, s.residuals, s.packed, s.ksplit);
  if (s.has_conv()) {
    const auto [amin, an] = s.min_conv_efficiency_amortized();
    const auto [smin, smed] = s.standalone_min_median();
    fmt::print(
        "  conv efficiency over {} qualifying conv layers{}: min {:.3f}, median {:.3f}; "
        "min {:.3f} over the {} with >= {:.0f} ideal cycles\n",
        s.conv_layers_qualifying, o.stream > 1 ? " (steady state of the stream)" : "",
        s.min_conv_efficiency, s.median_conv_efficiency(), amin, an, Summary::kAmortized);
    fmt::print("  the same layers alone (cycle model): min {:.3f}, median {:.3f}\n", smin, smed);
  } else {
    fmt::print("  no qualifying conv layers (efficiency not measured)\n");
  }
  fmt::print("  {} simulated cycles in {:.1f} s ({:.0f} cycles/s)\n", s.sim_cycles, s.wall_s,
             s.sim_cycles_per_s());
  if (s.worst.valid) {
    fmt::print(
        "  worst {} {} (seed {:#x}, {}): {}\n    rerun: nasa-cosim --config {}{} --seed {} "
        "--only-layer {}\n",
        o.item(), s.worst.index, s.worst.seed,
        s.worst.failed ? std::string("FAILED")
                       : fmt::format("cycle error {:.2f}%", s.worst.cycle_error_pct),
        s.worst.desc, s.config, o.rerun_flags(), o.seed, s.worst.index);
  }
}

void print_table(const std::vector<Summary>& all, const char* items, std::FILE* out) {
  fmt::print(out,
             "{:<7} {:>8} {:>7} {:>9} {:>7} {:>10} {:>12} {:>13} {:>13} {:>12} {:>15} {:>14} "
             "{:>14}\n",
             "suite", items, "bands", "residual", "packed", "mismatches", "max cyc err", "mean cyc err", "min conv eff",
             "median eff", "min eff >=2048", "min eff alone", "sim cycles/s");
  for (const Summary& s : all) {
    const auto [amin, an] = s.min_conv_efficiency_amortized();
    const auto [smin, smed] = s.standalone_min_median();
    auto num = [&](bool ok, double v) { return ok ? fmt::format("{:.3f}", v) : std::string("-"); };
    fmt::print(out,
               "{:<7} {:>8} {:>7} {:>9} {:>7} {:>10} {:>11.2f}% {:>12.2f}% {:>13} {:>12} {:>15} "
               "{:>14} {:>14.0f}\n",
               s.config, s.layers, s.bands, s.residuals, s.packed, s.mismatched_layers, s.max_cycle_error_pct,
               s.mean_cycle_error_pct(), num(s.has_conv(), s.min_conv_efficiency),
               num(s.has_conv(), s.median_conv_efficiency()), num(an > 0, amin),
               num(s.has_conv(), smin), s.sim_cycles_per_s());
  }
}

// The suites (merged over the ranks of an mpirun job); exit status 1 when any item failed.
int run(const Options& o) {
  std::vector<Summary> all;
  if (o.suite == "all") {
    for (const auto& cfg : nasa::hw::kConfigs) {
      if (cfg.mcu) continue;  // (the controller's cosim: tb/cosim_firmware.cpp)
      const uint64_t n = cfg.name == "sim" ? o.layers : std::max<uint64_t>(1, o.layers / 4);
      all.push_back(merge_ranks(run_suite(cfg, n, o)));
    }
  } else {
    const auto& cfg = nasa::config_by_name(o.config);
    if (cfg.mcu) {
      throw std::invalid_argument(fmt::format(
          "configuration '{}' has the controller core (Mcu = 1), not the engine: its RTL cosim "
          "is build/bin/cosim_firmware",
          cfg.name));
    }
    all.push_back(merge_ranks(run_suite(cfg, o.layers, o)));
  }
  bool failed = false;
  for (const Summary& s : all) failed |= s.failed();
  if (!nasa::dist::world().root()) return failed ? 1 : 0;  // rank 0 reports the merged table
  if (o.json) {
    if (all.size() == 1) {
      fmt::print("{}\n", to_json(all.front(), o).dump(2));
    } else {
      nlohmann::json j;
      j["suites"] = nlohmann::json::array();
      for (const Summary& s : all) j["suites"].push_back(to_json(s, o));
      j["failed"] = failed;
      fmt::print("{}\n", j.dump(2));
    }
  } else {
    for (const Summary& s : all) print_summary(s, o);
  }
  if (o.table) {
    print_table(all, o.items(),
                o.json ? stderr : stdout);  // keep stdout pure JSON
  }
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Cosimulate random layers on the Verilated engine against the reference model"};
  app.add_option("--config", o.config, "hardware configuration (fpga, sim, large)");
  app.add_option("--layers", o.layers,
                 "random layers (or programs) to run (per configuration with --suite)");
  app.add_option("--seed", o.seed, "run seed; layer i uses a seed derived from it and i");
  app.add_flag("--json", o.json, "print one JSON object instead of the readable summary");
  app.add_flag("--table", o.table, "print a summary table (one row per configuration)");
  app.add_option("--fst", o.fst, "write an FST waveform of the simulated layers to FILE");
  app.add_option("--dram-latency", o.dram_latency, "DRAM read latency in cycles (default 32)")
      ->check(CLI::PositiveNumber);
  app.add_option("--dram-bw", o.dram_bw,
                 "DRAM bandwidth in bytes/cycle (default and maximum: the port width)")
      ->check(CLI::PositiveNumber);
  app.add_option("--dram-outstanding", o.dram_outstanding,
                 "requests the DRAM accepts before it stalls the port (default 16)")
      ->check(CLI::PositiveNumber);
  app.add_option("--suite", o.suite,
                 "'all': every configuration (LAYERS for sim, LAYERS/4 for the others)")
      ->check(CLI::IsMember({"all"}));
  app.add_option("--only-layer", o.only_layer, "run only layer I of the seed (to reproduce it)");
  app.add_flag("--programs", o.programs,
               "run random programs of 2-5 independent layers instead of single layers (no "
               "efficiency: it is measured on single layers)");
  app.add_flag("--chains", o.chains,
               "run random programs of 2-6 layers that depend on each other (one reads the "
               "previous one's output or reuses its weights)")
      ->excludes("--programs");
  app.add_option("--stream", o.stream,
                 "images per random layer: each runs as a mini-batch stream of this many images "
                 "(same weights, fresh inputs); its efficiency is the steady state, the mean "
                 "interval between the completions of images 1 .. N-2; 1: single layers "
                 "(default 8)")
      ->check(CLI::Range(1u, 64u));
  app.add_option("--max-work", o.max_work,
                 "upper bound on a random layer's estimated cycles (0: per-config default)");
  CLI11_PARSE(app, argc, argv);

  try {
    nasa::dist::init(argc, argv);
    const int rc = run(o);
    nasa::dist::finalize();
    return rc;
  } catch (const std::exception& e) {
    const std::string rank = nasa::dist::rank_label();
    fmt::print(stderr, "nasa-cosim: {}{}\n", rank.empty() ? "" : rank + ": ", e.what());
    nasa::dist::abort_job(2);
  }
}
