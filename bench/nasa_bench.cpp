// `nasa-bench`: the benchmark suite behind `make bench`. Measures, in one run on this machine:
//   1. fusion on standard spaces (FBNet, ProxylessNAS): MACs and modeled DRAM bytes per SPOS
//      generation for (a) every candidate alone, (b) within-generation fusion, (c) (b) plus
//      sibling / weight-grouped scheduling, (d) (c) plus a bounded cross-generation cache;
//   2. accelerator efficiency per op type and shape class on the RTL (sim, large);
//   3. peers side by side on the same candidates and images: libtorch fp32 one candidate at a
//      time, the fused int8 reference executor, and the modeled accelerator;
//   4. Verilator simulation speed per configuration;
//   5. whether fusion pays (issue 17): each batch alone and fused, cycles, DRAM bytes, PE
//      utilization and the DRAM lower bound, on sim and large;
//   6. whole fbnet-imagenet candidates (224x224, layers in row bands) on the cycle model: PE
//      utilization for a mini-batch of 8 on sim and large;
//   7. the board (up5k) on the default supernet, its cycle-exact model: MACs per cycle per op
//      and candidates per second at its 24 MHz clock;
//   8. the search stage of `nasa run` on 1 and 2 ranks (mpirun) and its scaling model;
//   9. search quality: Kendall tau / Spearman rho of the supernet's accuracy (inherited, int8,
//      BN-recalibrated) against a short standalone training (mean of 3 seeds), and evolution vs
//      random search over 20 seeds with paired tests (on a table of the whole feasible space's
//      accuracies).
// Writes bench/results.json and BENCHMARKS.md (every figure in them comes from this run).
// --quick: a small version for CI that checks fused MACs <= unfused MACs and the cache budget.
#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <list>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "nasa/cand_gen.h"
#include "nasa/compiler.h"
#include "nasa/cycle_model.h"
#include "nasa/data.h"
#include "nasa/device.h"
#include "nasa/files.h"
#include "nasa/float_eval.h"
#include "nasa/fusion.h"
#include "nasa/mcu_system.h"
#include "nasa/parallel.h"
#include "nasa/pipeline.h"
#include "nasa/report.h"
#include "nasa/runtime.h"
#include "nasa/schedule.h"
#include "nasa/search.h"
#include "nasa/sim/cosim.h"
#include "nasa/sim/program.h"
#include "nasa/sim/random_layer.h"
#include "nasa/sim/rtl_device.h"
#include "nasa/supernet_weights.h"
#include "nasa/svg.h"
#include "nasa/train.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// `dram` with the on-chip scratch window a compiled program keeps its activations in
// (docs/engine.md "On-chip scratch").
nasa::cycles::DramTiming with_scratch(nasa::cycles::DramTiming dram,
                                      const nasa::compile::Program& p) {
  dram.scratch_base = p.scratch_base;
  return dram;
}

struct Options {
  bool quick = false;
  std::string out = "bench/results.json", md = "BENCHMARKS.md";
  int repeats = 3;
  int threads = 2;
  std::set<std::string> only;  // studies to run (empty: all)
};

void status(const std::string& s) {
  fmt::print(stderr, "bench: {}\n", s);
  std::fflush(stderr);
}

// ---------------------------------------------------------------------------------------------
// 1. Fusion on standard spaces.

// Deterministic stand-in fitness: a fixed pseudo-random score per candidate (splitmix64 of its
// choices), so the search behaves like SPOS without trained weights.
double stand_in_fitness(const nasa::spec::Candidate& c) {
  uint64_t h = 0x9E3779B97F4A7C15ULL;
  for (int x : c) {
    h ^= static_cast<uint64_t>(x) + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2);
    h += 0x9E3779B97F4A7C15ULL;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
    h ^= h >> 31;
  }
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

// LRU cache of node outputs across generations, keyed by the node's path (its choices from the
// root); each entry holds the output for all benchmark images. Never holds more than `budget`.
class ActivationCache {
 public:
  explicit ActivationCache(uint64_t budget) : budget_(budget) {}
  bool lookup(const nasa::spec::Candidate& path) {
    auto it = index_.find(path);
    if (it == index_.end()) return false;
    lru_.splice(lru_.begin(), lru_, it->second);
    return true;
  }
  // Inserts (as most recent) when it fits the budget; returns the bytes written to DRAM.
  uint64_t insert(const nasa::spec::Candidate& path, uint64_t bytes) {
    if (bytes > budget_ || index_.count(path)) return 0;
    while (used_ + bytes > budget_) {
      used_ -= lru_.back().second;
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
    lru_.emplace_front(path, bytes);
    index_[path] = lru_.begin();
    used_ += bytes;
    peak_ = std::max(peak_, used_);
    return bytes;
  }
  uint64_t used() const { return used_; }
  uint64_t peak() const { return peak_; }
  uint64_t budget() const { return budget_; }

 private:
  uint64_t budget_, used_ = 0, peak_ = 0;
  std::list<std::pair<nasa::spec::Candidate, uint64_t>> lru_;
  std::map<nasa::spec::Candidate,
           std::list<std::pair<nasa::spec::Candidate, uint64_t>>::iterator>
      index_;
};

struct FusionTotals {
  uint64_t macs[4] = {0, 0, 0, 0};
  uint64_t dram[4] = {0, 0, 0, 0};
};

json fusion_study(const std::string& space, uint64_t max_macs, size_t generations, size_t images,
                  uint64_t cache_budget, const nasa::hw::Config& cfg, bool& ok) {
  const auto net = nasa::spec::builtin_space(space);
  nasa::search::SearchConfig sc;
  sc.strategy = nasa::search::Strategy::Evolution;
  sc.population = 50;
  sc.generations = generations;
  sc.topk = 10;
  sc.mutations = 25;
  sc.crossovers = 25;
  sc.mut_prob = 0.1;
  sc.constraints.max_macs = max_macs;
  sc.seed = 1;
  const auto res = nasa::search::run_search_fitness(
      net, sc, [](std::span<const nasa::spec::Candidate> b) {
        std::vector<double> f;
        for (const auto& c : b) f.push_back(stand_in_fitness(c));
        return f;
      });
  const auto buffers = nasa::fusion::buffer_model(cfg);
  ActivationCache cache(cache_budget);
  json gens = json::array();
  FusionTotals tot;
  const char* names[4] = {"alone", "fused", "fused_grouped", "fused_grouped_cached"};
  for (size_t g = 0; g < res.generations.size(); ++g) {
    std::vector<nasa::spec::Candidate> batch;
    for (const auto& e : res.evaluated) {
      if (e.generation == g) batch.push_back(e.arch);
    }
    if (batch.empty()) continue;
    const auto graph = nasa::fusion::fuse(net, batch);
    const auto st = nasa::fusion::fusion_stats(net, graph);
    using nasa::fusion::ScheduleKind;
    const auto alone = nasa::fusion::model_schedule(
        nasa::fusion::make_schedule(net, graph, ScheduleKind::Unfused), images, buffers);
    const auto fused = nasa::fusion::model_schedule(
        nasa::fusion::make_schedule(net, graph, ScheduleKind::DepthFirst), images, buffers);
    const auto grouped_s = nasa::fusion::make_schedule(net, graph, ScheduleKind::DepthFirstGrouped);
    const auto grouped = nasa::fusion::model_schedule(grouped_s, images, buffers);
    // (d): nodes whose output an earlier generation left in the cache are not recomputed
    std::vector<bool> cached(graph.nodes.size(), false);
    size_t hits = 0;
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      if (graph.nodes[n].depth == graph.num_layers) continue;  // leaves are new candidates
      if (cache.lookup(nasa::fusion::path_of(graph, static_cast<uint32_t>(n)))) {
        cached[n] = true;
        ++hits;
      }
    }
    const auto cached_s = nasa::fusion::with_cached(grouped_s, graph, cached);
    auto with_cache = nasa::fusion::model_schedule(cached_s, images, buffers);
    // computed non-leaf outputs go into the cache: one DRAM write each
    const auto run = nasa::fusion::nodes_to_run(graph, cached);
    uint64_t cache_writes = 0;
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      const auto& node = graph.nodes[n];
      if (!run[n] || node.depth == graph.num_layers) continue;
      const auto fp = node.layer < 0 ? nasa::fusion::stem_footprint(net)
                                     : nasa::fusion::op_footprint(
                                           net, static_cast<size_t>(node.layer),
                                           static_cast<size_t>(node.choice));
      if (fp.alias) continue;  // a skip's output is its input, already cached or not
      cache_writes +=
          cache.insert(nasa::fusion::path_of(graph, static_cast<uint32_t>(n)), fp.out_bytes * images);
    }
    with_cache.act_write_bytes += cache_writes;
    with_cache.total_bytes += cache_writes;
    const nasa::fusion::ScheduleReport* rep[4] = {&alone, &fused, &grouped, &with_cache};
    json row = {{"generation", g},
                {"candidates", batch.size()},
                {"nodes", graph.nodes.size()},
                {"cache_hits", hits},
                {"cache_used_bytes", cache.used()}};
    for (int k = 0; k < 4; ++k) {
      row[std::string("macs_") + names[k]] = rep[k]->macs;
      row[std::string("dram_") + names[k]] = rep[k]->total_bytes;
      tot.macs[k] += rep[k]->macs;
      tot.dram[k] += rep[k]->total_bytes;
    }
    // the checks the quick mode enforces (the full mode reports them too)
    if (!(st.macs_fused <= st.macs_unfused && fused.macs <= alone.macs &&
          with_cache.macs <= grouped.macs)) {
      ok = false;
      status(fmt::format("CHECK FAILED: {} generation {}: fused MACs exceed unfused", space, g));
    }
    if (cache.used() > cache.budget()) {
      ok = false;
      status(fmt::format("CHECK FAILED: {} generation {}: cache {} > budget {}", space, g,
                         cache.used(), cache.budget()));
    }
    gens.push_back(row);
  }
  json total = json::object();
  for (int k = 0; k < 4; ++k) {
    total[std::string("macs_") + names[k]] = tot.macs[k];
    total[std::string("dram_") + names[k]] = tot.dram[k];
  }
  for (int k = 1; k < 4; ++k) {
    total[std::string("mac_ratio_") + names[k]] =
        static_cast<double>(tot.macs[0]) / static_cast<double>(std::max<uint64_t>(tot.macs[k], 1));
    total[std::string("dram_ratio_") + names[k]] =
        static_cast<double>(tot.dram[0]) / static_cast<double>(std::max<uint64_t>(tot.dram[k], 1));
  }
  if (cache.peak() > cache.budget()) ok = false;
  return {{"space", space},
          {"layers", net.layers.size()},
          {"search_space_size", nasa::spec::search_space_size(net)},
          {"protocol",
           {{"population", 50},
            {"generations", generations},
            {"topk", 10},
            {"mutations", 25},
            {"crossovers", 25},
            {"mut_prob", 0.1},
            {"max_macs", max_macs},
            {"fitness", "stand-in: splitmix64 of the choices"},
            {"seed", 1}}},
          {"images", images},
          {"hw_config", std::string(cfg.name)},
          {"cache_budget_bytes", cache_budget},
          {"cache_peak_bytes", cache.peak()},
          {"evaluated", res.evaluated.size()},
          {"generations", gens},
          {"total", total}};
}

// ---------------------------------------------------------------------------------------------
// 2 + 4. Accelerator efficiency per op type and shape class, and simulation speed.

json efficiency_study(const nasa::hw::Config& cfg, uint64_t layers, bool& ok) {
  const auto dram = nasa::cycles::default_dram(cfg);
  nasa::sim::Cosim cs(cfg, dram);
  struct Acc {
    std::vector<double> eff, err;
    uint64_t layers = 0, macs = 0, rtl = 0, model = 0;
  };
  std::map<std::pair<std::string, std::string>, Acc> by;
  uint64_t sim_cycles = 0;
  double sim_seconds = 0;
  const double pes = double{1} * cfg.rows * cfg.cols;
  for (uint64_t i = 0; i < layers; ++i) {
    const auto p = nasa::sim::random_layer(nasa::sim::derive_seed(7, i), cfg);
    const auto t0 = Clock::now();
    const auto r = cs.run(p);
    sim_seconds += since(t0);
    sim_cycles += r.rtl_cycles;
    if (!r.ok) {
      ok = false;
      status(fmt::format("CHECK FAILED: {} layer {}: {}", cfg.name, i, r.failure));
      continue;
    }
    if (r.ref_err != 0 || r.rtl_cycles == 0) continue;
    const auto& d = p.descs.at(0);
    const double ideal = static_cast<double>(r.macs) / pes;
    const std::string cls = ideal < 512 ? "small (<512 ideal cycles)"
                            : ideal < 8192 ? "medium (512-8191)"
                                           : "large (>=8192)";
    Acc& a = by[{nasa::op_name(d.op), r.macs ? cls : std::string("no MACs")}];
    ++a.layers;
    a.macs += r.macs;
    a.rtl += r.rtl_cycles;
    a.model += r.model_cycles;
    if (r.macs) a.eff.push_back(r.efficiency);
    a.err.push_back(r.cycle_error_pct);
  }
  json rows = json::array();
  for (const auto& [key, a] : by) {
    rows.push_back({{"op", key.first},
                    {"shape_class", key.second},
                    {"layers", a.layers},
                    {"median_efficiency", a.eff.empty() ? json(nullptr) : json(median(a.eff))},
                    {"aggregate_efficiency",
                     a.macs ? json(static_cast<double>(a.macs) / pes / static_cast<double>(a.rtl))
                            : json(nullptr)},
                    {"rtl_cycles", a.rtl},
                    {"model_cycles", a.model},
                    {"bound_cycles", static_cast<uint64_t>(static_cast<double>(a.macs) / pes)},
                    {"median_model_error_pct", median(a.err)}});
  }
  return {{"config", std::string(cfg.name)},
          {"rows", cfg.rows},
          {"cols", cfg.cols},
          {"layers", layers},
          {"by_op", rows},
          {"sim_cycles", sim_cycles},
          {"sim_seconds", sim_seconds},
          {"sim_cycles_per_s", sim_seconds > 0 ? static_cast<double>(sim_cycles) / sim_seconds : 0}};
}

// ---------------------------------------------------------------------------------------------
// 3. Peers.

// The default space with random weights (seed 1), quantized on 32 training images, `n_cands`
// random candidates (seed 3) and the first `n_images` Fashion-MNIST test images: the candidates
// and images of sections 3 and 5.
struct CandidateSet {
  nasa::spec::Supernet net;
  nasa::weights::TensorFile w;
  nasa::compile::QSupernet q;
  std::vector<nasa::spec::Candidate> cands;
  std::vector<std::vector<uint8_t>> imgs;
  std::vector<uint8_t> labels;
  std::vector<float> fimgs;  // the images as the float network takes them
  CandidateSet(size_t n_cands, size_t n_images)
      : net(nasa::spec::builtin_space(std::string(nasa::spec::kDefaultSpace))),
        w(nasa::weights::random_weights(net, 1)) {
    const auto train = nasa::data::load_fashion_mnist("train", 32);
    const auto test = nasa::data::load_fashion_mnist("test", n_images);
    q = nasa::compile::quantize(net, w, nasa::floatnet::dataset_images(train, 0, train.size()));
    cands = nasa::fusion::random_candidates(net, n_cands, 3);
    imgs = test.byte_images(0, n_images);
    labels = test.label_range(0, n_images);
    for (const auto& t : nasa::floatnet::dataset_images(test, 0, n_images)) {
      fimgs.insert(fimgs.end(), t.v.begin(), t.v.end());
    }
  }
};

json peers_study(const CandidateSet& set, int repeats, int threads) {
  const auto& [net, w, q, cands, imgs, labels, fimgs] = set;
  const size_t n_cands = cands.size(), n_images = imgs.size();
  const auto& sim_cfg = nasa::config_by_name("sim");
  const nasa::runtime::DeviceFactory ref = [](const nasa::hw::Config& c, uint64_t m) {
    return nasa::device::make_ref_device(c, m);
  };
  std::vector<double> t_torch, t_fused;
  uint64_t checksum = 0;
  for (int r = 0; r < repeats; ++r) {
    // (i) libtorch fp32, one candidate at a time, all images in one batch per candidate
    auto t0 = Clock::now();
    for (const auto& c : cands) {
      const auto logits =
          nasa::train::torch_forward(net, w, c, fimgs, static_cast<int>(n_images), threads);
      checksum += logits.size();
    }
    t_torch.push_back(since(t0));
    // (ii) fused int8 reference executor: the whole batch fused, images split over the threads
    t0 = Clock::now();
    const size_t pieces = static_cast<size_t>(std::max(threads, 1));
    std::vector<size_t> correct(pieces);
    nasa::parallel_for(pieces, threads, [&](size_t k) {
      nasa::runtime::Runtime rt(q, sim_cfg, ref, "ref");
      const size_t b = n_images * k / pieces, e = n_images * (k + 1) / pieces;
      const auto res = rt.evaluate_fused(cands, 0, std::span(imgs).subspan(b, e - b),
                                         std::span(labels).subspan(b, e - b));
      correct[k] = res.correct.size();
    });
    t_fused.push_back(since(t0));
  }
  // (iii) the modeled accelerator: cycles of the fused batch (cycle-exact reference) at a clock
  json accel = json::object();
  for (const char* name : {"sim", "large", "fpga"}) {
    const auto& cfg = nasa::config_by_name(name);
    json a;
    try {
      nasa::runtime::Runtime rt(q, cfg, ref, "ref");
      const auto res = rt.evaluate_fused(cands, 0, imgs, labels, {});
      const double mhz = std::string(name) == "fpga" ? 24.0 : 500.0;
      const double s = static_cast<double>(res.cycles) / (mhz * 1e6);
      a = {{"clock_mhz", mhz},
           {"cycles", res.cycles},
           {"seconds", s},
           {"cands_per_s", static_cast<double>(n_cands) / s},
           {"images_per_s", static_cast<double>(n_cands * n_images) / s},
           {"macs", res.macs},
           {"dram_bytes", res.dram_read + res.dram_written}};
      a.update(nasa::report::batch_utilization_json(res, cfg));
      a.erase("by_node");  // (per node: `nasa eval --fused --json`)
      a["counters"] = nasa::report::counters_json(res.counters);
      if (std::string(name) == "fpga") {
        a["note"] =
            "at the 24 MHz target clock (the fpga config does not fit the UP5K yet: no Fmax)";
      }
    } catch (const std::exception& e) {
      a = {{"error", e.what()}};
    }
    accel[name] = a;
  }
  // (iv) one candidate per program (nasa eval, search's cycle estimates): layers streaming
  // through the engine against the same layers each run alone, and a program of a mini-batch
  // of images (layer-major: each layer for every image, the weights kept on chip between them)
  constexpr size_t kBatchImages = 8;
  json programs = json::array();
  for (const char* name : {"sim", "large"}) {
    const auto& cfg = nasa::config_by_name(name);
    const auto dram = nasa::cycles::default_dram(cfg);
    uint64_t prog = 0, alone = 0, layers = 0, batch = 0;
    std::map<std::string, std::pair<double, double>> by_op;  // cycles alone, ideal cycles
    for (const auto& c : cands) {
      const auto p = nasa::compile::compile(q, c, std::span(imgs).subspan(0, 1), cfg);
      prog += nasa::cycles::program(p.descs, p.desc_addr, cfg, with_scratch(dram, p))[0];
      const auto pb = nasa::compile::compile(q, c, std::span(imgs).subspan(0, kBatchImages), cfg);
      batch += nasa::cycles::program(pb.descs, pb.desc_addr, cfg, with_scratch(dram, pb))[0];
      for (size_t i = 0; i < p.descs.size(); ++i) {
        nasa::cycles::Counters one{};
        nasa::cycles::add_layer(p.descs[i], cfg, with_scratch(dram, p), one,
                                static_cast<uint32_t>(p.desc_addr + i * nasa::hw::kDescBytes));
        alone += one[0];
        auto& e = by_op[nasa::op_name(p.descs[i].op)];
        e.first += static_cast<double>(one[0]);
        e.second += nasa::cycles::ideal_cycles(p.descs[i], cfg);
      }
      layers += p.descs.size();
    }
    json ops = json::array();
    for (const auto& [op, e] : by_op) {
      ops.push_back({{"op", op},
                     {"share_of_cycles", e.first / static_cast<double>(alone)},
                     {"efficiency", e.second / e.first}});
    }
    programs.push_back({{"config", std::string(name)},
                        {"candidates", cands.size()},
                        {"layers", layers},
                        {"program_cycles", prog},
                        {"layers_alone_cycles", alone},
                        {"saved_per_later_layer",
                         static_cast<double>(alone - prog) /
                             static_cast<double>(layers - cands.size())},
                        {"batch_images", kBatchImages},
                        {"batch_cycles_per_image",
                         static_cast<double>(batch) / static_cast<double>(kBatchImages)},
                        {"by_op", ops}});
  }
  const double mt = median(t_torch), mf = median(t_fused);
  const double torch_cps = static_cast<double>(n_cands) / mt;
  const double fused_cps = static_cast<double>(n_cands) / mf;
  json accel_cps = json::object();
  for (auto& [k, v] : accel.items()) {
    if (v.contains("cands_per_s")) accel_cps[k] = v["cands_per_s"];
  }
  return {{"space", std::string(nasa::spec::kDefaultSpace)},
          {"candidates", n_cands},
          {"images", n_images},
          {"repeats", repeats},
          {"threads", threads},
          {"libtorch_fp32_seconds", t_torch},
          {"fused_ref_seconds", t_fused},
          {"libtorch_fp32_cands_per_s", torch_cps},
          {"libtorch_fp32_images_per_s", torch_cps * static_cast<double>(n_images)},
          {"fused_ref_cands_per_s", fused_cps},
          {"fused_ref_images_per_s", fused_cps * static_cast<double>(n_images)},
          {"fused_ref_vs_libtorch_ratio", fused_cps / torch_cps},
          {"accel_model_cands_per_s", accel_cps},
          {"accel_model_vs_libtorch_ratio",
           [&] {
             json j = json::object();
             for (auto& [k, v] : accel_cps.items()) j[k] = v.get<double>() / torch_cps;
             return j;
           }()},
          {"accel_model", accel},
          {"programs", programs},
          {"checksum", checksum}};
}

// ---------------------------------------------------------------------------------------------
// 5. Does fusion pay? Issue 17's acceptance figures on the current design, reference backend
// (cycle-exact): each batch alone (`nasa eval`: every candidate's own program) and fused (one
// batch run, mini-batch 32).

// Sibling column pairing, the partition of the PE array's columns between sibling nodes of the
// fused trie (docs/engine.md "Partitioning the array"): siblings read the same input, so the
// first layers of two siblings with the same kernel and stride (MBConv expansions: 1x1, stride 1)
// could run as one layer whose channel tiles take both siblings' output channels, a partial tile
// of one sharing the columns with the other's. PE steps (one cycle each) of those first layers
// for `n_images` images run per sibling (today, K-split tiles included) and paired (every
// sibling group of a node as one layer), as the cycle model counts a Conv's steps.
json sibling_pairing(const nasa::spec::Supernet& net, std::span<const nasa::spec::Candidate> cands,
                     size_t n_images, const nasa::hw::Config& cfg) {
  const auto g = nasa::fusion::fuse(net, cands);
  const auto shapes = nasa::spec::layer_shapes(net);
  auto steps = [&](uint32_t cin, uint32_t cout) {
    nasa::Desc d{};
    d.op = static_cast<uint8_t>(nasa::hw::Op::Conv);
    d.cin = static_cast<uint16_t>(cin);
    double s = 0;
    for (uint32_t co = 0; co < cout; co += cfg.cols) {
      const uint32_t cg = std::min<uint32_t>(cfg.cols, cout - co);
      s += static_cast<double>(cin) / nasa::cycles::ksplit_groups(d, cfg, cg);
    }
    return s;
  };
  double alone = 0, paired = 0;
  uint64_t groups = 0;
  for (const auto& n : g.nodes) {
    std::vector<uint32_t> couts;
    double positions = 0;
    uint32_t cin = 0;
    for (const uint32_t c : n.children) {
      const auto& ch = g.nodes[c];
      const auto& op = net.layers[static_cast<size_t>(ch.layer)].choices[static_cast<size_t>(ch.choice)];
      const auto& sh = shapes[static_cast<size_t>(ch.layer)];
      if (op.kind != nasa::spec::OpKind::MBConv || op.expand <= 1) continue;
      cin = static_cast<uint32_t>(sh.cin);
      positions = static_cast<double>(sh.h) * sh.w * static_cast<double>(n_images) / cfg.rows;
      couts.push_back(static_cast<uint32_t>(sh.cin * op.expand));
    }
    if (couts.size() < 2) continue;
    ++groups;
    uint32_t total = 0;
    for (const uint32_t c : couts) {
      alone += steps(cin, c) * positions;
      total += c;
    }
    paired += steps(cin, total) * positions;
  }
  return {{"sibling_groups", groups}, {"steps_per_sibling", alone}, {"steps_paired", paired}};
}

json fusion_pays_case(const CandidateSet& set, const std::string& name,
                      std::span<const nasa::spec::Candidate> cands, size_t n_images,
                      const nasa::hw::Config& cfg, int threads) {
  const auto imgs = std::span(set.imgs).first(n_images);
  const auto labels = std::span(set.labels).first(n_images);
  const nasa::runtime::DeviceFactory ref = [](const nasa::hw::Config& c, uint64_t m) {
    return nasa::device::make_ref_device(c, m);
  };
  std::vector<nasa::runtime::EvalResult> alone(cands.size());
  nasa::parallel_for(cands.size(), threads, [&](size_t i) {
    nasa::runtime::Runtime rt(set.q, cfg, ref, "ref");
    alone[i] = rt.evaluate(cands[i], imgs, labels);
    alone[i].logits.clear();
  });
  uint64_t a_cycles = 0, a_macs = 0, a_dram = 0;
  std::array<uint64_t, nasa::hw::kNumCounters> a_counters{};
  for (const auto& r : alone) {
    a_cycles += r.cycles;
    a_macs += r.macs;
    a_dram += r.dram_read + r.dram_written;
    for (size_t i = 0; i < a_counters.size(); ++i) a_counters[i] += r.counters[i];
  }
  nasa::runtime::Runtime rt(set.q, cfg, ref, "ref");
  const nasa::compile::BatchOptions bo;
  const auto f = rt.evaluate_fused(cands, 0, imgs, labels, bo);
  const uint64_t f_dram = f.dram_read + f.dram_written;
  // DRAM lower bound: every weight set of the fused trie once per mini-batch, every image once,
  // every unique leaf's logits once per image
  const auto g = nasa::fusion::fuse(set.net, cands);
  const auto st = nasa::fusion::fusion_stats(set.net, g);
  const uint64_t mini_batches = (n_images + bo.mini_batch - 1) / bo.mini_batch;
  const uint64_t bound =
      st.weight_bytes_fused * mini_batches +
      uint64_t{static_cast<uint64_t>(set.net.in_h) * set.net.in_w * set.net.in_c} * n_images +
      uint64_t{static_cast<uint64_t>(set.net.classes)} * g.unique_leaves.size() * n_images;
  // issue 17: fused cycles <= 1.05 x alone cycles x fused MACs / alone MACs
  const double pay = static_cast<double>(f.cycles) /
                     (static_cast<double>(a_cycles) * static_cast<double>(f.macs) /
                      static_cast<double>(a_macs));
  return {{"batch", name},
          {"config", std::string(cfg.name)},
          {"candidates", cands.size()},
          {"images", n_images},
          {"alone_cycles", a_cycles},
          {"alone_macs", a_macs},
          {"alone_dram_bytes", a_dram},
          {"alone_pe_utilization", nasa::hw::pe_utilization(a_macs, a_cycles, cfg)},
          {"fused_cycles", f.cycles},
          {"fused_macs", f.macs},
          {"fused_dram_bytes", f_dram},
          {"fused_pe_utilization", nasa::hw::pe_utilization(f.macs, f.cycles, cfg)},
          {"cycles_vs_mac_share", pay},
          {"sibling_pairing", sibling_pairing(set.net, cands, n_images, cfg)},
          {"fusion_pays_cycles", pay <= 1.05},
          {"fusion_pays_dram", f_dram < a_dram},
          {"dram_lower_bound", bound},
          {"dram_vs_bound", static_cast<double>(f_dram) / static_cast<double>(bound)},
          // energy (docs/energy.md) from the same counters, per candidate
          {"alone_energy", nasa::report::energy_json(cfg, a_counters, cands.size())},
          {"fused_energy", nasa::report::energy_json(cfg, f.counters, cands.size())}};
}

json fusion_pays_study(const CandidateSet& set, bool quick, int threads) {
  // an evolution generation: mutations (probability 0.1 a layer) of 8 parents, as SPOS makes them
  std::vector<int> ks;
  for (const auto& l : set.net.layers) ks.push_back(static_cast<int>(l.choices.size()));
  const auto parents = std::span(set.cands).first(std::min<size_t>(8, set.cands.size()));
  auto generation = [&](size_t n) {
    return nasa::cand_gen::generate(nasa::cand_gen::Mode::Mutate, 11,
                                    nasa::cand_gen::kProbOne / 10, ks, n, parents);
  };
  const size_t small = quick ? 4 : 64;
  json cases = json::array();
  for (const char* name : {"sim", "large"}) {
    const auto& cfg = nasa::config_by_name(name);
    status(fmt::format("5/10 fusion pays? {}: {} random candidates", name, set.cands.size()));
    cases.push_back(fusion_pays_case(set, fmt::format("{} random", set.cands.size()), set.cands,
                                     set.imgs.size(), cfg, threads));
    for (size_t n : {quick ? size_t{6} : size_t{50}, quick ? size_t{10} : size_t{200}}) {
      status(fmt::format("5/10 fusion pays? {}: evolution generation of {}", name, n));
      cases.push_back(fusion_pays_case(set, fmt::format("evolution generation of {}", n),
                                       generation(n), std::min(small, set.imgs.size()), cfg,
                                       threads));
    }
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// 6. Whole ImageNet candidates: 224x224 layers run in row bands (docs/engine.md "Row bands").

// `n_cands` random candidates (seed 3) of `space` with random weights (seed 1, quantized on one
// random image) compiled as programs for a mini-batch of `images` random 224x224x3 images, their
// cycles and counters from the cycle model (exact to the RTL on every layer and band).
json imagenet_study(const std::string& space, size_t n_cands, size_t images, bool& ok) {
  const auto net = nasa::spec::builtin_space(space);
  std::mt19937 rng(7);
  const size_t in_bytes = static_cast<size_t>(net.in_h) * net.in_w * net.in_c;
  std::vector<std::vector<uint8_t>> imgs(images, std::vector<uint8_t>(in_bytes));
  for (auto& im : imgs) {
    for (auto& v : im) v = static_cast<uint8_t>(rng() % 256);
  }
  const std::vector<nasa::floatnet::Tensor> calib = {
      nasa::floatnet::image_from_u8(imgs[0].data(), net.in_h, net.in_w, net.in_c)};
  const auto q = nasa::compile::quantize(net, nasa::weights::random_weights(net, 1), calib);
  const auto cands = nasa::fusion::random_candidates(net, n_cands, 3);
  json rows = json::array();
  for (const char* name : {"sim", "large"}) {
    const auto& cfg = nasa::config_by_name(name);
    const auto dram = nasa::cycles::default_dram(cfg);
    uint64_t cycles = 0, macs = 0, dram_bytes = 0, descs = 0, bands = 0;
    std::array<uint64_t, nasa::hw::kNumCounters> counters{};
    // by op (a k x k kernel apart): cycles between the completions of a layer and the one before
    // it (layers overlap: an attribution), and MACs
    std::map<std::string, std::pair<uint64_t, uint64_t>> by_op;
    for (const auto& c : cands) {
      const auto p = nasa::compile::compile(q, c, imgs, cfg);
      std::vector<uint64_t> ends;
      const auto ctr = nasa::cycles::program(p.descs, p.desc_addr, cfg, with_scratch(dram, p), &ends);
      for (size_t i = 0; i < p.descs.size(); ++i) {
        const auto& d = p.descs[i];
        const bool window = d.op == static_cast<uint8_t>(nasa::hw::Op::Conv) ||
                            d.op == static_cast<uint8_t>(nasa::hw::Op::DwConv);
        auto& e = by_op[nasa::op_name(d.op) + (window ? fmt::format(" {}x{}", d.k, d.k) : "")];
        e.first += ends[i] - (i ? ends[i - 1] : 0);
        e.second += nasa::shape_of(d).macs;
      }
      for (size_t i = 0; i < counters.size(); ++i) counters[i] += ctr[i];
      cycles += ctr[static_cast<int>(nasa::hw::Counter::Cycles)];
      const uint64_t m = ctr[static_cast<int>(nasa::hw::Counter::Macs)];
      macs += m;
      dram_bytes += ctr[static_cast<int>(nasa::hw::Counter::DramRdBytes)] +
                    ctr[static_cast<int>(nasa::hw::Counter::DramWrBytes)];
      uint64_t expect = 0;
      for (const auto& d : p.descs) {
        expect += nasa::shape_of(d).macs;
        bands += nasa::is_band(d);
      }
      descs += p.descs.size();
      if (m != expect) {
        status(fmt::format("CHECK FAILED: {} candidate {} on {}: {} MACs counted, {} in its layers",
                           space, nasa::spec::format_candidate(c), name, m, expect));
        ok = false;
      }
    }
    const double util = nasa::hw::pe_utilization(macs, cycles, cfg);
    json ops = json::array();
    for (const auto& [op, e] : by_op) {
      ops.push_back({{"op", op},
                     {"share_of_cycles", static_cast<double>(e.first) / static_cast<double>(cycles)},
                     {"pe_utilization", nasa::hw::pe_utilization(e.second, e.first, cfg)}});
    }
    rows.push_back({{"config", std::string(name)},
                    {"cycles", cycles},
                    {"macs", macs},
                    {"pe_utilization", util},
                    {"dram_bytes", dram_bytes},
                    {"descriptors", descs},
                    {"bands", bands},
                    {"by_op", ops},
                    {"counters", nasa::report::counters_json(counters)},
                    {"cycles_per_image", static_cast<double>(cycles) /
                                             static_cast<double>(n_cands * images)}});
  }
  return {{"space", space}, {"candidates", n_cands}, {"mini_batch", images}, {"configs", rows}};
}

// ---------------------------------------------------------------------------------------------
// 7. The board (up5k) on the default supernet: its cycle-exact model (nasa::mcu::System, the
// firmware on the ISS; the Verilated board equals it cycle for cycle, cosim_firmware).

// The board's core clock (fpga/nasa_pll.sv: 12 MHz x 64 / 32), which make fpga meets.
constexpr double kBoardHz = 24e6;

// Each of `n_cands` candidates of the set compiled as a program for one image on up5k and run on
// the board's model with `rom` on `core`; per op (Conv/DwConv by kernel) a layer's cycles from the
// completion of the layer before it to its own (the firmware runs one layer at a time), of them
// the set-up's: up to the layer's first start of its unit (the dot unit, the MAC array), and the
// unit's own (from each start to its idle cycle). `mems` holds each run's data memory
// afterwards (compared across cores by the caller).
json board_alone(const CandidateSet& set, size_t n_cands, std::span<const uint32_t> rom,
                 nasa::mcu::Core core, nasa::mcu::Unit unit,
                 std::vector<std::vector<uint8_t>>& mems, bool& ok) {
  const auto& cfg = nasa::config_by_name("up5k");
  const auto dram = nasa::cycles::default_dram(cfg);
  const char* core_name = unit == nasa::mcu::Unit::Array    ? "bit-serial RV32I + MAC array"
                          : core == nasa::mcu::Core::Serial ? "bit-serial RV32I"
                                                            : "RV32IM";
  struct Sum {
    uint64_t cycles = 0, macs = 0, setup = 0, layers = 0, unit = 0;
    void add(const Sum& l) {
      cycles += l.cycles;
      macs += l.macs;
      setup += l.setup;
      layers += l.layers;
      unit += l.unit;
    }
  };
  std::map<std::string, Sum> by_op;
  Sum all, win;
  std::vector<double> win_setups;
  mems.clear();
  for (size_t c = 0; c < n_cands; ++c) {
    const auto& cand = set.cands[c];
    status(fmt::format("8/10 the board: candidate {} alone on its model ({} core)",
                       nasa::spec::format_candidate(cand), core_name));
    const auto p = nasa::compile::compile(set.q, cand, std::span(set.imgs).first(1), cfg);
    std::vector<uint8_t>& mem = mems.emplace_back(p.image);
    // (the host page and the firmware's RAM on top)
    mem.resize(nasa::mcu::memory_bytes(cfg, mem.size()), 0);
    nasa::mcu::System sys(cfg, mem, dram, rom, core, unit);
    const auto run =
        sys.run_program(p.desc_addr, p.desc_count, p.win_base, p.win_limit, uint64_t{1} << 40);
    const uint64_t m = sys.counter(nasa::hw::Counter::Macs);
    uint64_t expect = 0;
    for (const auto& d : p.descs) expect += nasa::shape_of(d).macs;
    if (!run.done || run.layer_ends.size() != p.descs.size() ||
        run.compute_starts.size() != p.descs.size() || run.unit_cycles.size() != p.descs.size() ||
        m != expect) {
      status(fmt::format(
          "CHECK FAILED: board candidate {} ({} core): {} of {} layers, {} MACs counted, {} "
          "in its layers",
          nasa::spec::format_candidate(cand), core_name, run.layer_ends.size(), p.descs.size(), m,
          expect));
      ok = false;
      continue;
    }
    mem.resize(p.image.size());  // (the firmware's RAM differs between images)
    all.cycles += sys.counter(nasa::hw::Counter::Cycles);
    all.macs += m;
    for (size_t i = 0; i < p.descs.size(); ++i) {
      const auto& d = p.descs[i];
      const bool window = d.op == static_cast<uint8_t>(nasa::hw::Op::Conv) ||
                          d.op == static_cast<uint8_t>(nasa::hw::Op::DwConv);
      const uint64_t from = i ? run.layer_ends[i - 1] : 0;
      const Sum l{run.layer_ends[i] - from, nasa::shape_of(d).macs, run.compute_starts[i] - from, 1,
                  run.unit_cycles[i]};
      if (l.setup + l.unit > l.cycles) {  // (the unit runs between the set-up and the layer's end)
        status(fmt::format(
            "CHECK FAILED: board candidate {} ({} core), layer {}: set-up {} and "
            "unit {} cycles in a layer of {}",
            nasa::spec::format_candidate(cand), core_name, i, l.setup, l.unit, l.cycles));
        ok = false;
      }
      by_op[nasa::op_name(d.op) + (window ? fmt::format(" {}x{}", d.k, d.k) : "")].add(l);
      if (window) {
        win.add(l);
        win_setups.push_back(static_cast<double>(l.setup));
      }
    }
  }
  json ops = json::array();
  for (const auto& [op, e] : by_op) {
    ops.push_back(
        {{"op", op},
         {"layers", e.layers},
         {"cycles", e.cycles},
         {"setup_cycles", e.setup},
         {"unit_cycles", e.unit},
         {"macs", e.macs},
         {"share_of_cycles", static_cast<double>(e.cycles) / static_cast<double>(all.cycles)},
         {"macs_per_cycle", static_cast<double>(e.macs) / static_cast<double>(e.cycles)}});
  }
  const double setup_max =
      win_setups.empty() ? 0.0 : *std::max_element(win_setups.begin(), win_setups.end());
  return {{"core", core_name},
          {"candidates_alone", n_cands},
          {"cycles", all.cycles},
          {"macs", all.macs},
          {"macs_per_cycle", static_cast<double>(all.macs) / static_cast<double>(all.cycles)},
          {"conv_dwconv_macs_per_cycle",
           static_cast<double>(win.macs) / static_cast<double>(win.cycles)},
          {"conv_dwconv_layers", win.layers},
          {"conv_dwconv_cycles", win.cycles},
          {"conv_dwconv_setup_cycles", win.setup},
          {"conv_dwconv_unit_cycles", win.unit},
          {"conv_dwconv_unit_macs_per_cycle",
           static_cast<double>(win.macs) / static_cast<double>(std::max<uint64_t>(1, win.unit))},
          {"conv_dwconv_setup_per_layer",
           {{"median", static_cast<uint64_t>(median(win_setups))},
            {"max", static_cast<uint64_t>(setup_max)}}},
          {"by_op", ops}};
}

// Section 8: the candidates alone on the board's core (the bit-serial core and the MAC array,
// nasa_fw_array: the model's Unit::Array, rtl/nasa_mcu.sv's Array = 1), the same on the controller
// with the dot unit (Array = 0: the RV32IM core, nasa_fw; and its image for the bit-serial core),
// whose memory must equal the board's, then a fused batch of `batch` candidates x `images`
// images in as many batch runs as the board's memory needs.
json board_study(const CandidateSet& set, size_t n_cands, size_t batch, size_t images, bool& ok) {
  const auto& cfg = nasa::config_by_name("up5k");
  using nasa::mcu::Core, nasa::mcu::Unit;
  std::vector<std::vector<uint8_t>> mems, dot_mems, serial_mems;
  json out =
      board_alone(set, n_cands, nasa::mcu::firmware_array(), Core::Serial, Unit::Array, mems, ok);
  json dot =
      board_alone(set, n_cands, nasa::mcu::firmware(), Core::Multicycle, Unit::Dot, dot_mems, ok);
  json serial = board_alone(set, n_cands, nasa::mcu::firmware_rv32i(), Core::Serial, Unit::Dot,
                            serial_mems, ok);
  if (dot_mems != mems || serial_mems != mems) {
    status(
        "CHECK FAILED: the controller with the dot unit (RV32IM or bit-serial core) left other "
        "memory than the board's");
    ok = false;
  }
  // a fused batch
  status(
      fmt::format("8/10 the board: {} candidates x {} images fused on its model", batch, images));
  nasa::runtime::Runtime rt(
      set.q, cfg,
      [](const nasa::hw::Config& c, uint64_t m) { return nasa::device::make_ref_device(c, m); },
      "ref");
  nasa::compile::BatchOptions bo;
  const auto f =
      rt.evaluate_fused(std::span(set.cands).first(batch), 0, std::span(set.imgs).first(images),
                        std::span(set.labels).first(images), bo);
  const double evals = static_cast<double>(batch * images);
  const double seconds = static_cast<double>(f.cycles) / kBoardHz;
  out["config"] = "up5k";
  out["clock_hz"] = kBoardHz;
  out["data_bytes"] = cfg.addr_space();
  out["dot"] = dot;
  out["serial"] = serial;
  out["fused"] = {{"candidates", batch},
                  {"images", images},
                  {"batch_runs", f.runs},
                  {"cycles", f.cycles},
                  {"macs", f.macs},
                  {"cycles_per_candidate_image", static_cast<double>(f.cycles) / evals},
                  {"candidate_images_per_second", evals / seconds},
                  {"candidates_per_second", static_cast<double>(batch) / seconds}};
  return out;
}

// ---------------------------------------------------------------------------------------------
// 10. Search quality (issue 23): how well the supernet's accuracy predicts a candidate's accuracy
// after a short standalone training, with and without per-candidate BN recalibration, and
// whether evolution beats random search, over seeds, paired.

// 1-based ranks of x, ties sharing their average rank.
std::vector<double> ranks_of(const std::vector<double>& x) {
  std::vector<size_t> idx(x.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j < idx.size() && x[idx[j]] == x[idx[i]]) ++j;
    for (size_t k = i; k < j; ++k) r[idx[k]] = 0.5 * static_cast<double>(i + j + 1);
    i = j;
  }
  return r;
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) mx += x[i] / n, my += y[i] / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0.0;
}

double spearman_rho(const std::vector<double>& x, const std::vector<double>& y) {
  return pearson(ranks_of(x), ranks_of(y));
}

// Kendall's tau-b (ties in either list count as neither concordant nor discordant).
double kendall_tau(const std::vector<double>& x, const std::vector<double>& y) {
  double conc = 0, disc = 0, tx = 0, ty = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    for (size_t j = i + 1; j < x.size(); ++j) {
      const double a = x[i] - x[j], b = y[i] - y[j];
      if (a == 0 && b == 0) continue;
      if (a == 0) {
        ++tx;
      } else if (b == 0) {
        ++ty;
      } else if ((a > 0) == (b > 0)) {
        ++conc;
      } else {
        ++disc;
      }
    }
  }
  const double d = std::sqrt((conc + disc + tx) * (conc + disc + ty));
  return d > 0 ? (conc - disc) / d : 0.0;
}

// The regularized incomplete beta function I_x(a, b) (continued fraction, modified Lentz).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - incomplete_beta(b, a, 1 - x);
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x)) /
                       a;
  const double tiny = 1e-300;
  double f = 1, c = 1, d = 0;
  for (int i = 0; i <= 400; ++i) {
    const int m = i / 2;
    double num;
    if (i == 0) {
      num = 1;
    } else if (i % 2 == 0) {
      num = (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m));
    } else {
      num = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1));
    }
    d = 1 + num * d;
    d = std::abs(d) < tiny ? 1 / tiny : 1 / d;
    c = 1 + num / c;
    if (std::abs(c) < tiny) c = tiny;
    const double cd = c * d;
    f *= cd;
    if (std::abs(1 - cd) < 1e-12) break;
  }
  return front * (f - 1);
}

// One-sided paired t-test of mean(d) > 0: its statistic and p-value (Student's t, n-1 degrees of
// freedom). All differences equal and positive: t = inf, p = 0.
std::pair<double, double> paired_t_test(const std::vector<double>& d) {
  const double n = static_cast<double>(d.size());
  if (d.size() < 2) return {0.0, 1.0};
  double mean = 0;
  for (double v : d) mean += v / n;
  double ss = 0;
  for (double v : d) ss += (v - mean) * (v - mean);
  const double sd = std::sqrt(ss / (n - 1));
  if (sd == 0) return {mean > 0 ? INFINITY : 0.0, mean > 0 ? 0.0 : 1.0};
  const double t = mean / (sd / std::sqrt(n)), df = n - 1;
  const double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));  // P(T > |t|)
  return {t, t > 0 ? tail : 1 - tail};
}

// Exact one-sided sign-flip (randomization) test of the paired differences: the share of the
// 2^n sign patterns whose mean is at least the observed one.
double sign_flip_p(const std::vector<double>& d) {
  const size_t n = d.size();
  double obs = 0;
  for (double v : d) obs += v;
  size_t hits = 0;
  for (size_t mask = 0; mask < (size_t{1} << n); ++mask) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += (mask >> i & 1) ? -d[i] : d[i];
    if (s >= obs - 1e-12) ++hits;
  }
  return static_cast<double>(hits) / static_cast<double>(size_t{1} << n);
}

// The 95% interval of an accuracy of k correct of n (search::accuracy_ci95) as [lo, hi].
json ci95(size_t k, size_t n) {
  const auto ci = nasa::search::accuracy_ci95(k, n);
  return json::array({ci.lo, ci.hi});
}

json search_quality_study(bool quick, int threads, bool& ok) {
  namespace spec = nasa::spec;
  const spec::Supernet net = spec::builtin_space(spec::kDefaultSpace);
  // Fashion-MNIST: training split = the first `train_n` images, the validation split the next
  // `val_n` (as the job's: the last 10,000 of the 60,000), the test set apart.
  const size_t val_n = quick ? 1000 : 10000, train_n = quick ? 2000 : 50000;
  nasa::data::Dataset ds = nasa::data::load_fashion_mnist("train");
  if (quick) {
    // the first train_n images and the last val_n, so the validation split is the job's
    nasa::data::Dataset q;
    q.rows = ds.rows, q.cols = ds.cols, q.channels = ds.channels;
    const size_t px = size_t{ds.rows} * ds.cols * ds.channels;
    auto take = [&](size_t from, size_t to) {
      q.images.insert(q.images.end(), ds.images.begin() + static_cast<ptrdiff_t>(from * px),
                      ds.images.begin() + static_cast<ptrdiff_t>(to * px));
      q.labels.insert(q.labels.end(), ds.labels.begin() + static_cast<ptrdiff_t>(from),
                      ds.labels.begin() + static_cast<ptrdiff_t>(to));
    };
    take(0, train_n);
    take(ds.size() - val_n, ds.size());
    ds = std::move(q);
  }
  const nasa::data::Dataset test = nasa::data::load_fashion_mnist("test", quick ? 1000 : 0);
  const size_t val0 = ds.size() - val_n;

  char tmpl[] = "/tmp/nasa-bench-search-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("cannot create a temporary directory");
  const fs::path dir(tmpl);
  struct Cleanup {
    fs::path d;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } cleanup{dir};

  auto base_config = [&](int epochs) {
    nasa::train::Config tc;
    tc.epochs = epochs;
    tc.seed = 1;
    tc.threads = threads;
    tc.dataset = ds;
    tc.val_images = val_n;
    tc.eval_candidates = 0;
    tc.force = true;
    return tc;
  };
  // The supernets as `nasa run` trains them: its default preset's (2 epochs), which the search
  // below runs on, and its long preset's (4 epochs).
  const int sn_epochs = quick ? 1 : nasa::pipeline::find_preset("default").epochs;
  const int long_epochs = quick ? 2 : nasa::pipeline::find_preset("long").epochs;
  auto train_sn = [&](int epochs, const std::string& name, double& seconds) {
    const auto t = Clock::now();
    status(fmt::format("10/10 search quality: supernet {} for {} epochs", net.name, epochs));
    nasa::train::train_supernet(net, base_config(epochs), dir / name);
    auto out = nasa::runtime::load_supernet_dir(dir / name);
    seconds = since(t);
    return out;
  };
  double sn_seconds = 0, long_seconds = 0;
  const auto sn = train_sn(sn_epochs, "supernet", sn_seconds);
  const auto sn_long = train_sn(long_epochs, "supernet-long", long_seconds);

  // Candidates spread over the space the job searches: every candidate within its preset's MAC
  // limit (the default's 1.5 M; the evolution-vs-random part below searches the same), ordered by
  // MACs, every k-th: where the job's ranking decides (docs/nas-job.md "Finalists").
  const uint64_t max_macs = quick ? 1'000'000 : nasa::pipeline::find_preset("default").max_macs;
  const auto space = nasa::search::feasible_candidates(net, max_macs);
  const size_t n_cands = quick ? 4 : 16;
  std::vector<spec::Candidate> cands;
  {
    std::vector<spec::Candidate> by_macs = space;
    std::stable_sort(by_macs.begin(), by_macs.end(), [&](const auto& a, const auto& b) {
      return spec::candidate_macs(net, a) < spec::candidate_macs(net, b);
    });
    for (size_t i = 0; i < n_cands; ++i) {
      cands.push_back(by_macs[i * (by_macs.size() - 1) / (n_cands - 1)]);
    }
  }

  // (a) inherited weights and the supernet's BatchNorm statistics, float and int8 (the int8
  // accelerator accuracy is what the search ranks by); (b) recalibrated, fused over the trie.
  // activation calibration as the job's (--calib 256), BN recalibration as its finalists'
  // (--recal-images 2048)
  const size_t calib_n = quick ? 64 : 256, recal_n = quick ? 64 : 2048;
  const nasa::runtime::DeviceFactory ref = [](const nasa::hw::Config& c, uint64_t m) {
    return nasa::device::make_ref_device(c, m);
  };
  const auto& sim = nasa::config_by_name("sim");
  const auto val_imgs = ds.byte_images(val0, val0 + val_n);
  const auto val_labels = ds.label_range(val0, val0 + val_n);
  struct Scores {
    std::vector<double> inherited, inherited_int8, recal_int8, recal_test;
    nasa::train::Recalibrated recal;  // float accuracies, and the trie's size and MACs
    double recal_seconds = 0;
  };
  auto score = [&](const nasa::runtime::FloatSupernet& s, const nasa::runtime::Runtime& rt,
                   int epochs) {
    status(
        fmt::format("10/10 search quality: {} candidates, accuracy in the supernet of {} epochs "
                    "before and after BN recalibration",
                    n_cands, epochs));
    Scores sc;
    sc.inherited.resize(n_cands);
    sc.inherited_int8.resize(n_cands);
    sc.recal_int8.resize(n_cands);
    for (size_t i = 0; i < n_cands; ++i) {
      sc.inherited[i] =
          nasa::train::float_accuracy(s.net, s.weights, cands[i], ds, val0, val_n, threads);
    }
    nasa::runtime::Runtime r = rt;
    const auto fr = r.evaluate_fused(cands, 0, val_imgs, val_labels);
    for (size_t i = 0; i < n_cands; ++i) {
      sc.inherited_int8[i] = static_cast<double>(fr.correct[i]) / static_cast<double>(val_n);
    }
    const auto t_rc = Clock::now();
    sc.recal = nasa::train::recalibrated_accuracy(s.net, s.weights, cands, ds, recal_n, ds, val0,
                                                  val_n, threads);
    sc.recal_seconds = since(t_rc);
    // the same on the test images: how much of the supernet's ranking is image noise
    sc.recal_test = nasa::train::recalibrated_accuracy(s.net, s.weights, cands, ds, recal_n, test,
                                                       0, test.size(), threads)
                        .accuracy;
    // int8 with the recalibrated statistics, as `nasa run` ranks its finalists
    const auto rq =
        nasa::pipeline::recalibrated_candidates(s, cands, ds, recal_n, calib_n, sim, ref, threads);
    const spec::Candidate alone(net.layers.size(), 0);
    for (size_t i = 0; i < n_cands; ++i) {
      nasa::runtime::Runtime one = rq[i].rt;
      sc.recal_int8[i] =
          static_cast<double>(one.evaluate_fused({&alone, 1}, 0, val_imgs, val_labels).correct[0]) /
          static_cast<double>(val_n);
    }
    return sc;
  };
  auto runtime_of = [&](const nasa::runtime::FloatSupernet& s) {
    return nasa::runtime::Runtime(nasa::compile::quantize(s.net, s.weights, ds, calib_n), sim, ref,
                                  "ref");
  };
  nasa::runtime::Runtime rt = runtime_of(sn);  // the search's, below
  const Scores sd = score(sn, rt, sn_epochs);
  const Scores sl = score(sn_long, runtime_of(sn_long), long_epochs);

  // The reference: each candidate trained alone from its inherited weights, briefly, with
  // `alone_seeds` training seeds (data order and augmentation) and their accuracies averaged: one
  // seed's training noise is as large as the differences between these candidates. 5 epochs (the
  // job fine-tunes for 25) from the long preset's supernet: the candidates' accuracies after
  // a longer training from the better start, which both supernets' scores are measured against
  // (it was 2 epochs from the default supernet: docs/nas-job.md "Finalists").
  const int alone_epochs = quick ? 1 : 5;
  const size_t alone_seeds = quick ? 2 : 3;
  std::vector<std::vector<double>> per_seed(alone_seeds, std::vector<double>(n_cands));
  std::vector<double> trained(n_cands, 0.0), half_a(n_cands, 0.0), half_b(n_cands, 0.0);
  const auto t_alone = Clock::now();
  for (size_t i = 0; i < n_cands; ++i) {
    for (size_t k = 0; k < alone_seeds; ++k) {
      status(
          fmt::format("10/10 search quality: standalone training {} of {}, seed {} of {} ({}, "
                      "{} MACs)",
                      i + 1, n_cands, k + 1, alone_seeds, spec::format_candidate(cands[i]),
                      spec::candidate_macs(net, cands[i])));
      auto tc = base_config(alone_epochs);
      tc.seed = 1 + k;
      tc.arch = cands[i];
      tc.init = sn_long.weights;
      tc.eval_images = 0;
      if (quick) tc.train_images = 1000;
      const fs::path out = dir / fmt::format("alone{}-{}", i, k);
      per_seed[k][i] = nasa::train::train_supernet(net, tc, out).candidates.at(0).val_accuracy;
      trained[i] += per_seed[k][i] / static_cast<double>(alone_seeds);
      // How reliable the reference is against image noise: each trained candidate scored on the
      // two halves of the validation images apart. The tau between the halves is a pessimistic
      // measure (each half has half the images); training noise is not in it.
      const auto w = nasa::runtime::load_supernet_dir(out).weights;
      half_a[i] += nasa::train::float_accuracy(net, w, cands[i], ds, val0, val_n / 2, threads) /
                   static_cast<double>(alone_seeds);
      half_b[i] += nasa::train::float_accuracy(net, w, cands[i], ds, val0 + val_n / 2,
                                               val_n - val_n / 2, threads) /
                   static_cast<double>(alone_seeds);
      fs::remove_all(out);
    }
  }
  const double alone_seconds = since(t_alone);
  // ... and against training noise: each seed's ranking against another's (Kendall tau of every
  // pair of seeds, averaged; below, the supernet against the first seed alone besides).
  double seed_tau = 0;
  for (size_t a = 0; a < alone_seeds; ++a) {
    for (size_t b = a + 1; b < alone_seeds; ++b) seed_tau += kendall_tau(per_seed[a], per_seed[b]);
  }
  seed_tau /= static_cast<double>(alone_seeds * (alone_seeds - 1) / 2);  // alone_seeds >= 2

  auto corr = [&](const std::vector<double>& x) {
    return json{{"kendall_tau", kendall_tau(x, trained)},
                {"spearman_rho", spearman_rho(x, trained)}};
  };
  // a supernet's scores of candidate i, and their correlations with the reference
  auto scores_of = [&](const Scores& sc, size_t i) {
    return json{{"inherited_float", sc.inherited[i]},
                {"inherited_int8", sc.inherited_int8[i]},
                {"recalibrated_float", sc.recal.accuracy[i]},
                {"recalibrated_int8", sc.recal_int8[i]},
                {"recalibrated_float_test", sc.recal_test[i]},
                {"recalibrated_ci95",
                 ci95(static_cast<size_t>(std::lround(sc.recal.accuracy[i] * val_n)), val_n)}};
  };
  auto correlations = [&](const Scores& sc, json& out) {
    out["inherited_float"] = corr(sc.inherited);
    out["inherited_int8"] = corr(sc.inherited_int8);
    out["recalibrated_float"] = corr(sc.recal.accuracy);
    out["recalibrated_int8"] = corr(sc.recal_int8);
    out["supernet_val_vs_test"] = {
        {"kendall_tau", kendall_tau(sc.recal.accuracy, sc.recal_test)},
        {"spearman_rho", spearman_rho(sc.recal.accuracy, sc.recal_test)}};
  };
  json ranking;
  ranking["candidates"] = json::array();
  for (size_t i = 0; i < n_cands; ++i) {
    json c = {{"arch", spec::format_candidate(cands[i])},
              {"macs", spec::candidate_macs(net, cands[i])}};
    c.update(scores_of(sd, i));
    c["long_supernet"] = scores_of(sl, i);
    c["standalone"] = trained[i];
    c["standalone_per_seed"] = json::array();
    for (const auto& v : per_seed) c["standalone_per_seed"].push_back(v[i]);
    c["standalone_halves"] = {half_a[i], half_b[i]};
    ranking["candidates"].push_back(std::move(c));
  }
  correlations(sd, ranking);
  ranking["long_supernet"] = {{"epochs", long_epochs}};
  correlations(sl, ranking["long_supernet"]);
  ranking["max_macs"] = max_macs;
  ranking["feasible"] = space.size();
  ranking["val_images"] = val_n;
  ranking["calib_images"] = recal_n;
  ranking["quant_calib_images"] = calib_n;
  ranking["standalone_epochs"] = alone_epochs;
  ranking["standalone_seeds"] = alone_seeds;
  ranking["standalone_init"] = "long_supernet";
  ranking["standalone_seed_vs_seed"] = {{"kendall_tau", seed_tau}};
  // the first seed alone, as the reference was before it had several: what averaging buys
  ranking["recalibrated_float_vs_one_seed"] = {
      {"kendall_tau", kendall_tau(sd.recal.accuracy, per_seed[0])},
      {"spearman_rho", spearman_rho(sd.recal.accuracy, per_seed[0])}};
  ranking["standalone_split_half"] = {{"kendall_tau", kendall_tau(half_a, half_b)},
                                      {"spearman_rho", spearman_rho(half_a, half_b)}};
  ranking["supernet_epochs"] = sn_epochs;
  ranking["paths_per_step"] = nasa::train::resolved_paths_per_step(net, base_config(sn_epochs));
  ranking["recal_nodes"] = sd.recal.nodes;
  ranking["recal_macs_fused"] = sd.recal.macs_fused;
  ranking["recal_macs_alone"] = sd.recal.macs_alone;
  ranking["seconds"] = {{"supernet", sn_seconds},
                        {"long_supernet", long_seconds},
                        {"recalibration", sd.recal_seconds},
                        {"standalone", alone_seconds}};
  if (sd.recal.macs_fused > sd.recal.macs_alone) {
    status("CHECK: fused recalibration took more MACs than candidate by candidate");
    ok = false;
  }

  // Evolution against random search, the same seeds and budget, on the search's own objective:
  // the int8 accuracy on the accelerator (reference backend) on fixed validation images, a
  // function of the candidate alone. So every candidate within the MAC limit is evaluated once,
  // as fused batches, and each seed's searches run on that table (search::run_search_table: the
  // decisions run_search takes; checked here for seed 1 against run_search on the accelerator),
  // which makes many seeds affordable. The best's test accuracy besides.
  const auto t_search = Clock::now();
  const size_t seeds = quick ? 4 : 20;
  const size_t search_val = quick ? 500 : 2000;
  const auto s_imgs = ds.byte_images(val0, val0 + search_val);
  const auto s_labels = ds.label_range(val0, val0 + search_val);
  status(
      fmt::format("10/10 search quality: the {} candidates within {} MACs on {} validation "
                  "images",
                  space.size(), max_macs, search_val));
  std::map<spec::Candidate, size_t> table;
  {
    const auto pieces = nasa::search::split_batch(net, sim, space);
    std::vector<std::vector<size_t>> correct(pieces.size());
    nasa::parallel_for(pieces.size(), threads, [&](size_t k) {
      nasa::runtime::Runtime local = rt;
      correct[k] = local.evaluate_fused(pieces[k], 0, s_imgs, s_labels).correct;
    });
    for (size_t k = 0; k < pieces.size(); ++k) {
      for (size_t j = 0; j < pieces[k].size(); ++j) table[pieces[k][j]] = correct[k].at(j);
    }
  }
  const double table_seconds = since(t_search);
  size_t top_correct = 0;
  for (const auto& [c, n] : table) top_correct = std::max(top_correct, n);

  struct Budget {
    size_t population, generations, topk, mutations, crossovers;
  };
  // the first is the one of the headline test; the second a budget of about an eighth of the space
  const std::vector<Budget> budgets =
      quick ? std::vector<Budget>{{4, 2, 2, 2, 2}}
            : std::vector<Budget>{{20, 8, 5, 10, 10}, {8, 8, 4, 4, 4}};
  auto config_of = [&](const Budget& b, uint64_t seed, nasa::search::Strategy st) {
    nasa::search::SearchConfig c;
    c.population = b.population;
    c.generations = b.generations;
    c.topk = b.topk;
    c.mutations = b.mutations;
    c.crossovers = b.crossovers;
    c.constraints.max_macs = max_macs;
    c.seed = seed;
    c.strategy = st;
    return c;
  };
  const std::array<nasa::search::Strategy, 2> strategies = {nasa::search::Strategy::Random,
                                                            nasa::search::Strategy::Evolution};
  // the table decides as the accelerator: seed 1 of the first budget, both strategies
  status("10/10 search quality: seed 1 on the accelerator against the table");
  bool table_matches = true;
  nasa::parallel_for(2, threads, [&](size_t k) {
    const auto c = config_of(budgets[0], 1, strategies[k]);
    nasa::runtime::Runtime local = rt;
    const auto a = nasa::search::run_search(local, sim, c, s_imgs, s_labels);
    const auto b = nasa::search::run_search_table(rt.supernet(), sim, c, table, search_val);
    bool same = a.best == b.best && a.evaluated.size() == b.evaluated.size();
    for (size_t i = 0; same && i < a.evaluated.size(); ++i) {
      same = a.evaluated[i].arch == b.evaluated[i].arch &&
             a.evaluated[i].correct == b.evaluated[i].correct &&
             a.evaluated[i].cycles == b.evaluated[i].cycles;
    }
    if (!same) table_matches = false;
  });
  if (!table_matches) {
    status("CHECK: the search on the table decided differently from run_search on the accelerator");
    ok = false;
  }

  auto test_of = [&](const std::vector<double>& d) {
    double mean = 0;
    for (double v : d) mean += v / static_cast<double>(d.size());
    const auto [t, p] = paired_t_test(d);
    return json{{"mean_difference", mean},
                {"t", std::isfinite(t) ? json(t) : json("inf")},
                {"p_paired_t", p},
                {"p_sign_flip", sign_flip_p(d)}};
  };
  std::vector<nasa::search::SearchResult> all_runs;  // [budget][seed][strategy], flattened
  for (const auto& b : budgets) {
    for (size_t s = 0; s < seeds; ++s) {
      for (const auto st : strategies) {
        all_runs.push_back(nasa::search::run_search_table(
            rt.supernet(), sim, config_of(b, s + 1, st), table, search_val));
      }
    }
  }
  // the test accuracy of every distinct best, fused on the test images
  std::map<spec::Candidate, double> test_acc;
  {
    std::set<spec::Candidate> bests;
    for (const auto& r : all_runs) bests.insert(r.evaluated.at(*r.best).arch);
    const std::vector<spec::Candidate> list(bests.begin(), bests.end());
    const auto test_imgs = test.byte_images(0, test.size());
    for (const auto& piece : nasa::search::split_batch(net, sim, list)) {
      const auto tr = rt.evaluate_fused(piece, 0, test_imgs, test.labels);
      for (size_t j = 0; j < piece.size(); ++j) {
        test_acc[piece[j]] =
            static_cast<double>(tr.correct.at(j)) / static_cast<double>(test.size());
      }
    }
  }
  json budget_rows = json::array();
  for (size_t bi = 0; bi < budgets.size(); ++bi) {
    const auto& b = budgets[bi];
    json runs = json::array();
    std::vector<double> diff_val, diff_test;
    std::array<size_t, 2> found_top{};
    for (size_t s = 0; s < seeds; ++s) {
      json row{{"seed", s + 1}};
      std::array<double, 2> val{}, tst{};
      for (size_t k = 0; k < 2; ++k) {
        const auto& res = all_runs[(bi * seeds + s) * 2 + k];
        const auto& best = res.evaluated.at(*res.best);
        if (best.macs > max_macs) {
          status("CHECK: a search's best breaks its MAC limit");
          ok = false;
        }
        val[k] = best.val_accuracy;
        tst[k] = test_acc.at(best.arch);
        found_top[k] += best.correct == top_correct;
        row[k == 0 ? "random" : "evolution"] = {
            {"best", spec::format_candidate(best.arch)},  {"macs", best.macs},
            {"evaluated", res.evaluated.size()},          {"val_accuracy", best.val_accuracy},
            {"val_ci95", ci95(best.correct, search_val)}, {"test_accuracy", tst[k]}};
      }
      diff_val.push_back(val[1] - val[0]);
      diff_test.push_back(tst[1] - tst[0]);
      runs.push_back(row);
    }
    budget_rows.push_back({{"population", b.population},
                           {"generations", b.generations},
                           {"topk", b.topk},
                           {"mutations", b.mutations},
                           {"crossovers", b.crossovers},
                           {"evaluations", runs[0]["random"]["evaluated"]},
                           {"runs", runs},
                           {"found_top", {{"random", found_top[0]}, {"evolution", found_top[1]}}},
                           {"val", test_of(diff_val)},
                           {"test", test_of(diff_test)}});
  }
  json evo{{"val_images", search_val},
           {"test_images", test.size()},
           {"max_macs", max_macs},
           {"feasible", space.size()},
           {"top_accuracy", static_cast<double>(top_correct) / static_cast<double>(search_val)},
           {"seeds", seeds},
           {"table_checked", table_matches},
           {"budgets", budget_rows},
           {"seconds", {{"table", table_seconds}, {"total", since(t_search)}}}};
  return {{"space", net.name}, {"ranking", ranking}, {"evolution_vs_random", evo}};
}

// ---------------------------------------------------------------------------------------------
// 9. The search stage of `nasa run` on 1 and 2 ranks (mpirun, docs/mpi.md), and the scaling
// model fitted to it.

// Runs `cmd` (a shell command line) and returns its stdout; throws on a non-zero exit.
std::string shell(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("cannot run: " + cmd);
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int rc = pclose(p);
  if (rc != 0) throw std::runtime_error(fmt::format("exit {}: {}", rc, cmd));
  return out;
}

std::string sh_quote(const std::string& s) { return "'" + s + "'"; }

// The modelled speed-up on n ranks: a generation's serial part (every rank's own), its shards
// spread over the ranks (the slowest rank takes ceil(shards / n)), and its collectives on a
// network of latency alpha and bandwidth 1/beta (ring all-reduce, log2 n steps of latency).
json scaling_model(double t1, double t2, const json& traffic, double alpha, double beta) {
  const double gens = traffic["generations"].get<double>();
  const double shards = traffic["shards_per_generation"].get<double>();
  const double coll = traffic["collectives"].get<double>() / std::max(1.0, gens);
  const double payload = traffic["payload_bytes"].get<double>() / std::max(1.0, gens);
  // t(n) = serial + parallel * ceil(shards / n) / shards, fitted to the measured t1 and t2
  const double f2 = std::ceil(shards / 2) / shards;
  const double parallel = f2 < 1 ? std::max(0.0, (t1 - t2) / (1 - f2)) : 0.0;
  const double serial = std::max(0.0, t1 - parallel);
  json rows = json::array();
  for (int n = 2; n <= 1024; n *= 2) {
    const double comm_per_gen =
        coll * alpha * std::ceil(std::log2(n)) + 2.0 * (n - 1) / n * payload * beta;
    const double t = serial + parallel * std::ceil(shards / n) / shards + gens * comm_per_gen;
    rows.push_back({{"ranks", n},
                    {"seconds", t},
                    {"speedup", t1 / t},
                    {"bytes_sent_per_rank_per_generation", 2.0 * (n - 1) / n * payload}});
  }
  return {{"serial_seconds", serial},
          {"parallel_seconds", parallel},
          {"alpha_s", alpha},
          {"beta_s_per_byte", beta},
          {"collectives_per_generation", coll},
          {"payload_bytes_per_generation", payload},
          {"rows", rows}};
}

json mpi_study(bool quick, int repeats, bool& ok) {
  const fs::path bin = fs::read_symlink("/proc/self/exe").parent_path();
  const fs::path nasa = bin / "nasa";
  std::string mpirun;
  try {
    mpirun = shell("command -v mpirun");
    while (!mpirun.empty() && mpirun.back() == '\n') mpirun.pop_back();
  } catch (const std::exception&) {
  }
  if (mpirun.empty()) {
    status("9/10 mpirun not found (make deps installs openmpi-bin): the ranks study fails");
    ok = false;
    return {{"error", "mpirun not found"}};
  }
  const fs::path dir = fs::temp_directory_path() / fmt::format("nasa-bench-mpi-{}", getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string env =
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
      "OMPI_MCA_btl_vader_single_copy_mechanism=none ";
  shell(fmt::format("{} init --space fmnist-mb14 --seed 1 --out {} --quiet",
                    sh_quote(nasa.string()), sh_quote((dir / "sn").string())));
  // the search stage of the default job (population 50, 500 validation images in shards of 4
  // mini-batches of 32) on fewer generations; the rest of the run as small as it goes
  const std::string work =
      quick ? "--population 8 --mutations 4 --crossovers 4 --generations 2 --val-images 128"
            : "--generations 3";
  json runs = json::array();
  std::map<int, std::vector<double>> secs;
  std::map<int, std::string> result;
  json traffic;
  for (int rep = 0; rep < repeats; ++rep) {
    for (int n : {1, 2}) {
      const std::string name = fmt::format("np{}-{}", n, rep);
      status(fmt::format("9/10 nasa run, search stage on {} rank(s) x 1 thread (repeat {} of {})",
                         n, rep + 1, repeats));
      const std::string launch =
          n == 1 ? "" : fmt::format("{}{} -np {} --bind-to none ", env, sh_quote(mpirun), n);
      shell(fmt::format(
          "{}{} run --supernet {} --runs-dir {} --name {} --threads 1 {} --rtl-images 0 "
          "--test-images 64 --top 1 --finalists 1 --finalist-images 256 --finetune-epochs 1 "
          "--train-images 256 --quiet >/dev/null",
          launch, sh_quote(nasa.string()), sh_quote((dir / "sn").string()),
          sh_quote((dir / "runs").string()), name, work));
      std::ifstream tf(dir / "runs" / name / "timing.json");
      const json t = json::parse(tf);
      for (const auto& st : t["stages"]) {
        if (st["stage"] == "search") secs[n].push_back(st["seconds"].get<double>());
      }
      if (n == 2) traffic = t["search_traffic"];
      std::ifstream rf(dir / "runs" / name / "search" / "result.json");
      const std::string res((std::istreambuf_iterator<char>(rf)), std::istreambuf_iterator<char>());
      if (result.count(n) == 0) result[n] = res;
      runs.push_back({{"ranks", n}, {"repeat", rep}, {"search_seconds", secs[n].back()}});
    }
  }
  const bool identical = result[1] == result[2];
  if (!identical) {
    status("CHECK: the search's result.json differs between 1 and 2 ranks");
    ok = false;
  }
  const double t1 = median(secs[1]), t2 = median(secs[2]);
  fs::remove_all(dir);
  json out = {{"work", work},
              {"timed_runs", runs},
              {"search_seconds_1_rank", t1},
              {"search_seconds_2_ranks", t2},
              {"speedup_2_ranks", t1 / t2},
              {"result_identical", identical},
              {"traffic_2_ranks", traffic}};
  // shared memory on one machine; 10 GbE between machines (50 us, 1.25 GB/s)
  out["model_shared_memory"] = scaling_model(t1, t2, traffic, 2e-6, 1.0 / 10e9);
  out["model_10gbe"] = scaling_model(t1, t2, traffic, 50e-6, 1.0 / 1.25e9);
  return out;
}

// The table of where a run's cycles go by the hardware counters (`counters`: counters_json).
std::string cycle_shares_header() {
  return "| config | PE busy | vector busy | output stall | input / weight stall | descriptor "
         "| array fill |\n|---|---:|---:|---:|---:|---:|---:|\n";
}
std::string cycle_shares_row(const std::string& config, const json& c) {
  const auto& cfg = nasa::config_by_name(config);
  const double cyc = c["Cycles"].get<double>();
  auto pct = [&](double x) { return fmt::format("{:.1f}%", 100.0 * x / cyc); };
  return fmt::format(
      "| {} | {} | {} | {} | {} | {} | {:.3f} |\n", config, pct(c["PeBusy"].get<double>()),
      pct(c["VecBusy"].get<double>()), pct(c["StallOutput"].get<double>()),
      pct(c["StallInput"].get<double>() + c["StallWeight"].get<double>()),
      pct(c["StallDesc"].get<double>()),
      c["Macs"].get<double>() /
          (static_cast<double>(cfg.rows) * cfg.cols * std::max(1.0, c["PeBusy"].get<double>())));
}

std::string machine() {
  utsname u{};
  uname(&u);
  std::string cpu = "unknown CPU";
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    if (line.starts_with("model name")) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  return fmt::format("{}, {} hardware threads, {} {}", cpu, std::thread::hardware_concurrency(),
                     u.sysname, u.release);
}

// Per generation of each fusion study: MACs of (a) alone, (b) fused, (d) fused + cache as grouped
// bars, one panel per space.
std::string fusion_svg(const json& fusion) {
  const double w = 820, panel = 240, left = 70, right = 20;
  const double h = 40 + panel * static_cast<double>(fusion.size());
  nasa::svg::Doc d(w, h);
  d.text(w / 2, 22, "MACs per SPOS generation: alone / fused / fused + cross-generation cache", 13);
  const char* keys[3] = {"macs_alone", "macs_fused", "macs_fused_grouped_cached"};
  const char* colors[3] = {"#bab0ac", "#4e79a7", "#59a14f"};
  double y0 = 40;
  for (const auto& s : fusion) {
    const auto& gens = s["generations"];
    double top = 0;
    for (const auto& g : gens) top = std::max(top, static_cast<double>(g["macs_alone"].get<uint64_t>()));
    const double ph = panel - 60, base = y0 + panel - 35;
    d.text(left, y0 + 12, s["space"].get<std::string>(), 12, "start");
    d.line(left, base, w - right, base);
    d.line(left, base, left, base - ph);
    d.text(left - 6, base - ph + 4, fmt::format("{:.0f} G", top / 1e9), 10, "end");
    d.text(left - 6, base + 4, "0", 10, "end");
    const double slot = (w - left - right) / std::max<double>(1, static_cast<double>(gens.size()));
    for (size_t i = 0; i < gens.size(); ++i) {
      for (int k = 0; k < 3; ++k) {
        const double v = static_cast<double>(gens[i][keys[k]].get<uint64_t>());
        const double bh = top > 0 ? v / top * ph : 0;
        d.rect(left + slot * static_cast<double>(i) + slot * (0.15 + 0.23 * k), base - bh,
               slot * 0.22, bh, colors[k],
               fmt::format("generation {}: {} {:.1f} G", i, keys[k], v / 1e9));
      }
      if (gens.size() <= 20 || i % 5 == 0) {
        d.text(left + slot * (static_cast<double>(i) + 0.5), base + 14, std::to_string(i), 10);
      }
    }
    y0 += panel;
  }
  for (int k = 0; k < 3; ++k) {
    d.rect(left + 200.0 * k, h - 16, 10, 10, colors[k]);
    d.text(left + 200.0 * k + 14, h - 7, keys[k], 10, "start");
  }
  return d.str();
}

std::string gb(uint64_t b) { return fmt::format("{:.2f} GB", static_cast<double>(b) / 1e9); }
std::string gmac(uint64_t m) { return fmt::format("{:.1f} G", static_cast<double>(m) / 1e9); }

std::string markdown(const json& r) {
  std::string md = "# Benchmarks\n\n";
  md += fmt::format(
      "Generated by `make bench` ({}) on {}, {}. Every figure below comes from that run (but the "
      "sections re-run since, if any are listed next); times are medians of {} repeats.\n\n",
      r["mode"].get<std::string>(), r["machine"].get<std::string>(), r["date"].get<std::string>(),
      r["repeats"].get<int>());
  for (const auto& u : r.value("updates", json::array())) {
    md += fmt::format(
        "Re-run since with `nasa-bench --only` ({}) on {}, {}: the sections of {}.\n\n",
        u["mode"].get<std::string>(), u["machine"].get<std::string>(), u["date"].get<std::string>(),
        fmt::join(u["studies"].get<std::vector<std::string>>(), ", "));
  }
  if (r.contains("fusion")) {
    md += "## 1. Fusion on standard search spaces\n\n";
    md +=
        "SPOS evolution (population 50, top-10 parents, 25 mutations with p = 0.1, 25 crossovers, "
        "a MAC limit) with a deterministic stand-in fitness, every generation a batch. MACs and "
        "DRAM "
        "bytes over all generations for the benchmark images, DRAM modeled with the buffers of the "
        "`sim` configuration (nasa/schedule.h): (a) every candidate alone, (b) within-generation "
        "fusion (depth-first), (c) (b) with sibling / weight-grouped order, (d) (c) plus an LRU "
        "cache of node outputs across generations in off-chip memory, bounded by the stated "
        "budget (cache reads and writes included).\n\n";
    md +=
        "| space | generations | evaluated | images | MACs a / b / c / d | DRAM a / b / c / d | "
        "MAC ratio a/b, a/d | DRAM ratio a/b, a/c, a/d | cache budget (peak) |\n";
    md += "|---|---:|---:|---:|---|---|---|---|---|\n";
    for (const auto& s : r["fusion"]) {
      const auto& t = s["total"];
      md += fmt::format(
          "| {} | {} | {} | {} | {} / {} / {} / {} | {} / {} / {} / {} | {:.2f}, {:.2f} | {:.2f}, "
          "{:.2f}, {:.2f} | {} ({}) |\n",
          s["space"].get<std::string>(), s["generations"].size(), s["evaluated"].get<size_t>(),
          s["images"].get<size_t>(), gmac(t["macs_alone"]), gmac(t["macs_fused"]),
          gmac(t["macs_fused_grouped"]), gmac(t["macs_fused_grouped_cached"]), gb(t["dram_alone"]),
          gb(t["dram_fused"]), gb(t["dram_fused_grouped"]), gb(t["dram_fused_grouped_cached"]),
          t["mac_ratio_fused"].get<double>(), t["mac_ratio_fused_grouped_cached"].get<double>(),
          t["dram_ratio_fused"].get<double>(), t["dram_ratio_fused_grouped"].get<double>(),
          t["dram_ratio_fused_grouped_cached"].get<double>(), gb(s["cache_budget_bytes"]),
          gb(s["cache_peak_bytes"]));
    }
    for (const auto& s : r["fusion"]) {
      md +=
          fmt::format("\nPer generation, `{}` (MACs in G, DRAM in GB; a / b / c / d as above):\n\n",
                      s["space"].get<std::string>());
      md += "| gen | candidates | nodes | cache hits | MACs a | b | c | d | DRAM a | b | c | d |\n";
      md += "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
      for (const auto& g : s["generations"]) {
        auto G = [&](const char* k) { return static_cast<double>(g[k].get<uint64_t>()) / 1e9; };
        md += fmt::format(
            "| {} | {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.2f} | {:.2f} | {:.2f} | "
            "{:.2f} |\n",
            g["generation"].get<size_t>(), g["candidates"].get<size_t>(), g["nodes"].get<size_t>(),
            g["cache_hits"].get<size_t>(), G("macs_alone"), G("macs_fused"),
            G("macs_fused_grouped"), G("macs_fused_grouped_cached"), G("dram_alone"),
            G("dram_fused"), G("dram_fused_grouped"), G("dram_fused_grouped_cached"));
      }
    }
    md += "\n![MACs per generation](bench/fusion.svg)\n\n";
  }
  if (r.contains("efficiency")) {
    md += "## 2. Accelerator efficiency (RTL)\n\n";
    md +=
        "Random layers (the cosim generator) on the Verilated RTL; efficiency = (MACs / "
        "(Rows*Cols)) / RTL cycles; bound = MACs / (Rows*Cols); model = the analytic cycle "
        "model.\n\n";
    md +=
        "| config | op | shape class | layers | median eff. | aggregate eff. | RTL cycles | bound "
        "| model cycles | median model error |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& e : r["efficiency"]) {
      for (const auto& row : e["by_op"]) {
        auto f = [](const json& v) {
          return v.is_null() ? std::string("-") : fmt::format("{:.3f}", v.get<double>());
        };
        md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2f}% |\n",
                          e["config"].get<std::string>(), row["op"].get<std::string>(),
                          row["shape_class"].get<std::string>(), row["layers"].get<uint64_t>(),
                          f(row["median_efficiency"]), f(row["aggregate_efficiency"]),
                          row["rtl_cycles"].get<uint64_t>(), row["bound_cycles"].get<uint64_t>(),
                          row["model_cycles"].get<uint64_t>(),
                          row["median_model_error_pct"].get<double>());
      }
    }
  }
  if (r.contains("peers")) {
    const auto& p = r["peers"];
    md += "\n## 3. Peers side by side\n\n";
    md += fmt::format(
        "{} random `{}` candidates (random weights) on the same {} Fashion-MNIST test images, {} "
        "CPU threads each:\n\n",
        p["candidates"].get<size_t>(), p["space"].get<std::string>(), p["images"].get<size_t>(),
        p["threads"].get<int>());
    const double base = p["libtorch_fp32_cands_per_s"].get<double>();
    md +=
        "| evaluator | candidates/s | images/s (candidate-images) | vs libtorch fp32 |\n"
        "|---|---:|---:|---:|\n";
    md += fmt::format("| libtorch fp32, one candidate at a time | {:.2f} | {:.0f} | 1.00x |\n",
                      base, p["libtorch_fp32_images_per_s"].get<double>());
    md += fmt::format("| fused int8 reference executor (this CPU) | {:.2f} | {:.0f} | {:.2f}x |\n",
                      p["fused_ref_cands_per_s"].get<double>(),
                      p["fused_ref_images_per_s"].get<double>(),
                      p["fused_ref_cands_per_s"].get<double>() / base);
    for (auto& [k, v] : p["accel_model"].items()) {
      if (!v.contains("cands_per_s")) {
        md += fmt::format("| modeled accelerator `{}` | n/a: {} | | |\n", k,
                          v.value("error", std::string("not modeled")));
        continue;
      }
      md += fmt::format("| modeled accelerator `{}` at {} MHz | {:.1f} | {:.0f} | {:.2f}x |\n", k,
                        v["clock_mhz"].get<double>(), v["cands_per_s"].get<double>(),
                        v["images_per_s"].get<double>(), v["cands_per_s"].get<double>() / base);
    }
    md += fmt::format("\nFused int8 reference vs libtorch fp32: **{:.2f}x** candidates/s.\n",
                      p["fused_ref_vs_libtorch_ratio"].get<double>());
    md +=
        "\nPE utilization of that fused batch (MACs / (Rows x Cols x cycles), reference backend, "
        "cycle-exact; docs/engine.md \"Utilization\"; issue 17 asks for >= 0.75 on `sim` and >= "
        "0.60 on `large`), and where its cycles go by op (share of the run's cycles / PE "
        "utilization of those cycles; control: the batch units' own cycles):\n\n"
        "| config | PEs | cycles | MACs | DRAM bytes | PE utilization | by op |\n"
        "|---|---:|---:|---:|---:|---:|---|\n";
    for (auto& [k, v] : p["accel_model"].items()) {
      if (!v.contains("pe_utilization")) continue;
      std::string ops;
      for (const auto& o : v.value("by_op", json::array())) {
        ops += fmt::format("{} {:.1f}% / {:.3f}; ", o["op"].get<std::string>(),
                           100 * o["share_of_cycles"].get<double>(),
                           o["pe_utilization"].get<double>());
      }
      if (v.contains("control_cycles")) {
        ops += fmt::format("control {:.1f}%",
                           100 * v["control_cycles"].get<double>() / v["cycles"].get<double>());
      }
      const auto& cfg = nasa::config_by_name(k);
      md += fmt::format("| {} | {}x{} | {} | {} | {} | **{:.3f}** | {} |\n", k, cfg.rows, cfg.cols,
                        v["cycles"].get<uint64_t>(), v["macs"].get<uint64_t>(),
                        v["dram_bytes"].get<uint64_t>(), v["pe_utilization"].get<double>(), ops);
    }
    md +=
        "\nWhere the same runs' cycles go by the hardware counters (share of cycles): the PE array "
        "issuing a MAC step, the vector unit issuing a step, compute waiting for the output path "
        "(the drain writes one row of a tile, one position's channels, a cycle), for input or "
        "weights, or no layer running (descriptor); *array fill*: MACs per MAC step over Rows x "
        "Cols (partial tiles: few positions or channels). PE utilization = PE busy x fill.\n\n" +
        cycle_shares_header();
    for (auto& [k, v] : p["accel_model"].items()) {
      if (v.contains("counters")) md += cycle_shares_row(k, v["counters"]);
    }
    md +=
        "\nOne candidate per program (cycle model): one image, its layers streaming through the "
        "engine (each fetched, decoded and loaded while the one before computes) against the same "
        "layers each run alone; and a program of a mini-batch of images, compiled layer-major "
        "(each layer for every image: they overlap, and the weights stay on chip):\n\n"
        "| config | candidates | layers | program cycles | layers alone | ratio | cycles saved "
        "per later layer | mini-batch | cycles per image (all candidates) | vs one image |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& e : p["programs"]) {
      const auto prog = e["program_cycles"].get<uint64_t>();
      const auto alone = e["layers_alone_cycles"].get<uint64_t>();
      const double per = e["batch_cycles_per_image"].get<double>();
      md += fmt::format("| {} | {} | {} | {} | {} | {:.3f} | {:.1f} | {} | {:.0f} | {:.3f} |\n",
                        e["config"].get<std::string>(), e["candidates"].get<size_t>(),
                        e["layers"].get<uint64_t>(), prog, alone,
                        static_cast<double>(prog) / static_cast<double>(alone),
                        e["saved_per_later_layer"].get<double>(), e["batch_images"].get<size_t>(),
                        per, per / static_cast<double>(prog));
    }
    md +=
        "\nWhere those programs' cycles go (layers alone), by op: share of cycles / efficiency "
        "(ideal cycles / cycles):\n\n| config | op | share | efficiency |\n|---|---|---:|---:|\n";
    for (const auto& e : p["programs"]) {
      for (const auto& o : e["by_op"]) {
        md += fmt::format("| {} | {} | {:.1f}% | {:.3f} |\n", e["config"].get<std::string>(),
                          o["op"].get<std::string>(), 100 * o["share_of_cycles"].get<double>(),
                          o["efficiency"].get<double>());
      }
    }
  }
  if (r.contains("efficiency")) {
    md += "\n## 4. Simulation speed\n\n| config | Verilator cycles/s |\n|---|---:|\n";
    for (const auto& e : r["efficiency"]) {
      md += fmt::format("| {} | {:.0f} |\n", e["config"].get<std::string>(),
                        e["sim_cycles_per_s"].get<double>());
    }
  }
  if (r.contains("fusion_pays")) {
    md +=
        "\n## 5. Does fusion pay? (issue 17's acceptance, current design)\n\n"
        "Reference backend (cycle-exact). *Alone*: every candidate's own program (`nasa eval`); "
        "*fused*: one batch run (`nasa eval --fused`, mini-batch 32). Fusion pays in cycles when "
        "fused cycles <= 1.05 x alone cycles x fused MACs / alone MACs (the ratio column), in DRAM "
        "when fused bytes < alone bytes. DRAM lower bound: every weight set of the fused trie once "
        "per mini-batch, every image once, every unique leaf's logits once per image (issue 17 "
        "asks "
        "for <= 10x). Evolution generations: mutations (0.1 a layer) of 8 of the random candidates "
        "(cand_gen's model), on the first images only (the images column).\n\n"
        "| config | batch | images | alone cycles | fused cycles | MACs fused / alone | ratio "
        "(<= 1.05) | alone DRAM | fused DRAM | fused / bound | PE util. alone | PE util. fused "
        "|\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& c : r["fusion_pays"]) {
      md += fmt::format(
          "| {} | {} | {} | {} | {} | {:.3f} | {:.3f} {} | {} | {} {} | {:.1f}x | {:.3f} | {:.3f} "
          "|\n",
          c["config"].get<std::string>(), c["batch"].get<std::string>(), c["images"].get<size_t>(),
          c["alone_cycles"].get<uint64_t>(), c["fused_cycles"].get<uint64_t>(),
          c["fused_macs"].get<double>() / c["alone_macs"].get<double>(),
          c["cycles_vs_mac_share"].get<double>(),
          c["fusion_pays_cycles"].get<bool>() ? "pays" : "no",
          c["alone_dram_bytes"].get<uint64_t>(), c["fused_dram_bytes"].get<uint64_t>(),
          c["fusion_pays_dram"].get<bool>() ? "pays" : "no", c["dram_vs_bound"].get<double>(),
          c["alone_pe_utilization"].get<double>(), c["fused_pe_utilization"].get<double>());
    }
    md +=
        "\nPartitioning the PE array's columns between sibling nodes of the fused trie "
        "(docs/engine.md \"Partitioning the array\"): siblings read the same input, so their "
        "first layers (MBConv expansions, 1x1) could run as one layer whose channel tiles hold "
        "both siblings' channels. PE steps of those first layers, each sibling alone (as built, "
        "K-split tiles included) and paired, as the cycle model counts them, and what pairing "
        "would save as a share of the fused run's cycles:\n\n"
        "| config | batch | sibling groups | steps, per sibling | steps, paired | saved, share of "
        "fused cycles |\n|---|---|---:|---:|---:|---:|\n";
    for (const auto& c : r["fusion_pays"]) {
      const auto& p = c["sibling_pairing"];
      const double a = p["steps_per_sibling"].get<double>(), b = p["steps_paired"].get<double>();
      md += fmt::format("| {} | {} | {} | {:.0f} | {:.0f} | {:.2f}% |\n",
                        c["config"].get<std::string>(), c["batch"].get<std::string>(),
                        p["sibling_groups"].get<uint64_t>(), a, b,
                        100.0 * (a - b) / c["fused_cycles"].get<double>());
    }
    md += "\n## 6. Energy per candidate, fused and alone\n\n";
    md +=
        "The energy model (docs/energy.md: per-event energies from Horowitz, ISSCC 2014, 45 nm) "
        "applied to the counters of the runs of section 5 (RTL and cycle model agree on every "
        "counter). Per candidate: the batch's energy over its candidates; DRAM share: the DRAM "
        "bytes' part of it after the reuse each run achieves. The main events' shares of the "
        "fused run follow.\n\n"
        "| config | batch | alone uJ / candidate | fused uJ / candidate | fused / alone | DRAM "
        "share "
        "alone | DRAM share fused | fused: MAC | input buffer | weight ring | requant | control |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& c : r["fusion_pays"]) {
      const auto& a = c["alone_energy"];
      const auto& f = c["fused_energy"];
      if (!a.contains("energy_pj") || !f.contains("energy_pj")) continue;
      auto share = [&](std::initializer_list<const char*> names) {
        double s = 0;
        for (const auto& e : f["energy_breakdown"]) {
          for (const char* n : names) {
            if (e["event"].get<std::string>() == n) s += e["share"].get<double>();
          }
        }
        return fmt::format("{:.1f}%", 100.0 * s);
      };
      const double ae = a["energy_per_candidate_pj"].get<double>();
      const double fe = f["energy_per_candidate_pj"].get<double>();
      md += fmt::format(
          "| {} | {} | {:.1f} | {:.1f} | {:.3f} | {:.1f}% | {:.1f}% | {} | {} | {} "
          "| {} | {} |\n",
          c["config"].get<std::string>(), c["batch"].get<std::string>(), ae * 1e-6, fe * 1e-6,
          fe / ae, 100.0 * a["energy_dram_share"].get<double>(),
          100.0 * f["energy_dram_share"].get<double>(), share({"mac"}),
          share({"in_buf_read", "in_buf_write"}), share({"wbuf_read", "wbuf_write"}),
          share({"requant"}), share({"control"}));
    }
    md += "\n![Energy per candidate by event](bench/energy.svg)\n";
  }
  if (r.contains("imagenet")) {
    const auto& im = r["imagenet"];
    md += "\n## 7. Whole ImageNet candidates (row bands)\n\n";
    md += fmt::format(
        "{} random `{}` candidates (seed 3, random weights), each compiled as a program for a "
        "mini-batch of {} random 224x224x3 images. Layers whose input exceeds the input buffer "
        "run in row bands (docs/engine.md \"Row bands\"). Cycles and counters come from the cycle "
        "model, which equals the RTL on every layer and band (cosim). Issue 17 asks for PE "
        "utilization >= 0.85 on `sim`.\n\n"
        "| config | descriptors | of them bands | cycles | MACs | PE utilization | DRAM bytes | "
        "cycles / image |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
        im["candidates"].get<size_t>(), im["space"].get<std::string>(),
        im["mini_batch"].get<size_t>());
    for (const auto& c : im["configs"]) {
      md += fmt::format("| {} | {} | {} | {} | {} | {:.3f} | {} | {:.0f} |\n",
                        c["config"].get<std::string>(), c["descriptors"].get<uint64_t>(),
                        c["bands"].get<uint64_t>(), c["cycles"].get<uint64_t>(),
                        c["macs"].get<uint64_t>(), c["pe_utilization"].get<double>(),
                        c["dram_bytes"].get<uint64_t>(), c["cycles_per_image"].get<double>());
    }
    md += "\nBy op (a layer's cycles: from the completion of the layer before it to its own; "
          "share of cycles / PE utilization):\n\n";
    for (const auto& c : im["configs"]) {
      md += fmt::format("- `{}`:", c["config"].get<std::string>());
      for (const auto& o : c["by_op"]) {
        md += fmt::format(" {} {:.1f}% / {:.3f};", o["op"].get<std::string>(),
                          100.0 * o["share_of_cycles"].get<double>(),
                          o["pe_utilization"].get<double>());
      }
      md.back() = '\n';
    }
    md += "\nWhere their cycles go by the hardware counters (as in section 3):\n\n" +
          cycle_shares_header();
    for (const auto& c : im["configs"]) {
      md += cycle_shares_row(c["config"].get<std::string>(), c["counters"]);
    }
  }
  if (r.contains("board")) {
    const json& b = r["board"];
    const json& f = b["fused"];
    md += "\n## 8. The board (`up5k`) on the default supernet\n\n";
    md += fmt::format(
        "The iCEBreaker's core (the firmware `nasa_fw_array` on its bit-serial RV32I controller "
        "with the MAC array on all eight DSPs: the 1x1 Convs, DwConvs, stems, residual adds and "
        "FCs the array takes run on it, the rest in software; docs/fpga.md) on its cycle-exact "
        "model, which the Verilated board equals cycle for cycle. {} candidates of section 3's "
        "set, each alone as a program for one image: {:.4f} MACs a cycle over all layers, "
        "**{:.4f} on Conv/DwConv layers** (issue 20 asks for >= 8); the array itself, while it "
        "runs them, {:.2f} ({} of their {} cycles; the rest is the firmware's: the set-up and "
        "what follows the array). By op (a layer's cycles: from the completion of the layer "
        "before it to its own; set-up: the firmware's, up to the array's first start; the "
        "array's: from each start to its idle cycle, a folded residual's add included):\n\n"
        "| op | layers | cycles | of them set-up | the array's | share of cycles | MACs / cycle | "
        "MACs / array cycle |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|\n",
        b["candidates_alone"].get<size_t>(), b["macs_per_cycle"].get<double>(),
        b["conv_dwconv_macs_per_cycle"].get<double>(),
        b["conv_dwconv_unit_macs_per_cycle"].get<double>(),
        b["conv_dwconv_unit_cycles"].get<uint64_t>(), b["conv_dwconv_cycles"].get<uint64_t>());
    for (const auto& o : b["by_op"]) {
      const auto unit = o["unit_cycles"].get<uint64_t>();
      md +=
          fmt::format("| {} | {} | {} | {} | {} | {:.1f}% | {:.4f} | {} |\n",
                      o["op"].get<std::string>(), o["layers"].get<uint64_t>(),
                      o["cycles"].get<uint64_t>(), o["setup_cycles"].get<uint64_t>(), unit,
                      100.0 * o["share_of_cycles"].get<double>(), o["macs_per_cycle"].get<double>(),
                      unit ? fmt::format("{:.2f}", static_cast<double>(o["macs"].get<uint64_t>()) /
                                                       static_cast<double>(unit))
                           : std::string("-"));
    }
    if (b.contains("dot") && b.contains("serial")) {
      const json& d = b["dot"];
      const json& sc = b["serial"];
      const json& per = sc["conv_dwconv_setup_per_layer"];
      md += fmt::format(
          "\nThe controller with the one-MAC dot unit instead (rtl/nasa_mcu.sv's Array = 0, the "
          "board before the array: the RV32IM core and `nasa_fw`) leaves the same memory: "
          "{:.4f} MACs a cycle on Conv/DwConv; with that image built for the bit-serial core, "
          "{:.5f}, its set-up of a Conv/DwConv layer (the descriptor read and checked, the "
          "records' shifts checked, up to the first dot-unit run) {} cycles median, {} at most "
          "over {} layers. By op (the RV32IM core):\n\n"
          "| op | cycles | MACs | MACs / cycle |\n|---|---:|---:|---:|\n",
          d["conv_dwconv_macs_per_cycle"].get<double>(),
          sc["conv_dwconv_macs_per_cycle"].get<double>(), per["median"].get<uint64_t>(),
          per["max"].get<uint64_t>(), sc["conv_dwconv_layers"].get<uint64_t>());
      for (const auto& o : d["by_op"]) {
        md += fmt::format("| {} | {} | {} | {:.4f} |\n", o["op"].get<std::string>(),
                          o["cycles"].get<uint64_t>(), o["macs"].get<uint64_t>(),
                          o["macs_per_cycle"].get<double>());
      }
    }
    md += fmt::format(
        "\nFused: {} candidates x {} images in {} batch runs (the board's {} bytes of data, below "
        "its host page and the firmware's RAM, hold a candidate's weights and an image's "
        "activations, not the supernet's: docs/fusion.md \"Batch runs of a target\"): {} cycles, "
        "{:.0f} per candidate-image; at {:.0f} MHz **{:.3f} candidate-images per second**, {:.4f} "
        "candidates (of {} images) per second.\n",
        f["candidates"].get<size_t>(), f["images"].get<size_t>(), f["batch_runs"].get<size_t>(),
        b.value("data_bytes", uint64_t{0}), f["cycles"].get<uint64_t>(),
        f["cycles_per_candidate_image"].get<double>(), b["clock_hz"].get<double>() / 1e6,
        f["candidate_images_per_second"].get<double>(), f["candidates_per_second"].get<double>(),
        f["images"].get<size_t>());
  }
  if (r.contains("mpi") && r["mpi"].contains("speedup_2_ranks")) {
    const json& m = r["mpi"];
    md += "\n## 9. Search on several ranks (mpirun, docs/mpi.md)\n\n";
    md += fmt::format(
        "The search stage of `nasa run` (random and evolution, `{}`, on an untrained "
        "`fmnist-mb14`: the same work as a trained one) with `--threads 1`, alone and under "
        "`mpirun -np 2`; median of {} runs each: **{:.1f} s on 1 rank, {:.1f} s on 2 ranks, "
        "{:.2f}x** (issue 22 asks for >= 1.7x); the search's result.json {} on both.\n\n",
        m["work"].get<std::string>(), m["timed_runs"].size() / 2,
        m["search_seconds_1_rank"].get<double>(), m["search_seconds_2_ranks"].get<double>(),
        m["speedup_2_ranks"].get<double>(),
        m["result_identical"].get<bool>() ? "is identical" : "DIFFERS");
    const json& sm = m["model_shared_memory"];
    const json& net = m["model_10gbe"];
    md += fmt::format(
        "Scaling model (fitted to the two medians: {:.1f} s a rank does whatever the number of "
        "ranks, {:.1f} s spread over the {} image shards of a generation; per generation: "
        "collectives {:.1f}, payload bytes {:.0f}):\n\n"
        "| ranks | bytes sent per rank per generation | speed-up, one machine | speed-up, 10 GbE "
        "cluster (50 us, 1.25 GB/s) |\n|---:|---:|---:|---:|\n",
        sm["serial_seconds"].get<double>(), sm["parallel_seconds"].get<double>(),
        m["traffic_2_ranks"]["shards_per_generation"].get<size_t>(),
        sm["collectives_per_generation"].get<double>(),
        sm["payload_bytes_per_generation"].get<double>());
    for (size_t i = 0; i < sm["rows"].size(); ++i) {
      const json& a = sm["rows"][i];
      const json& b = net["rows"][i];
      md += fmt::format("| {} | {:.0f} | {:.2f}x | {:.2f}x |\n", a["ranks"].get<int>(),
                        a["bytes_sent_per_rank_per_generation"].get<double>(),
                        a["speedup"].get<double>(), b["speedup"].get<double>());
    }
    md +=
        "\nIt stops scaling at as many ranks as a generation has image shards (more validation "
        "images or smaller `--shard-batches` give more), and at the part every rank does alone "
        "(the search's own bookkeeping, each rank's data and quantization).\n";
  }
  if (r.contains("search_quality")) {
    const json& s = r["search_quality"];
    const json& rk = s["ranking"];
    md += "\n## 10. Search quality: ranking and evolution against random\n\n";
    // every key below is one the study writes (bench/results.json is always a whole run's)
    const json& lg = rk["long_supernet"];
    const int def_epochs = rk["supernet_epochs"].get<int>(), long_ep = lg["epochs"].get<int>();
    md += fmt::format(
        "Supernet `{}` trained {} epoch(s) (the default preset's) and {} epochs (the long "
        "preset's), {} paths per step (as `nasa run` does). {} candidates spread over the region "
        "the job searches (the {} candidates within {} MACs ordered by MACs, evenly spaced), "
        "each scored by the supernet with "
        "inherited weights (float and int8 on the accelerator, the search's own objective: the "
        "supernet's BatchNorm statistics), and float after per-candidate BN recalibration on {} "
        "training images (fused over the trie: {} nodes, {} MACs per calibration image instead "
        "of {}) and int8 with those statistics (each candidate quantized on its own, as `nasa "
        "run` ranks its finalists), against the accuracy of the candidate trained alone from its "
        "inherited weights (the long preset's supernet) for {} epoch(s), the mean of {} training "
        "seed(s); all on the {} validation images.\n\n",
        s["space"].get<std::string>(), def_epochs, long_ep, rk["paths_per_step"].get<size_t>(),
        rk["candidates"].size(), rk["feasible"].get<size_t>(), rk["max_macs"].get<uint64_t>(),
        rk["calib_images"].get<size_t>(), rk["recal_nodes"].get<size_t>(),
        rk["recal_macs_fused"].get<uint64_t>(), rk["recal_macs_alone"].get<uint64_t>(),
        rk["standalone_epochs"].get<int>(), rk["standalone_seeds"].get<size_t>(),
        rk["val_images"].get<size_t>());
    md += fmt::format(
        "| supernet score | Kendall tau, {0} epochs | Spearman rho, {0} epochs | Kendall tau, {1} "
        "epochs | Spearman rho, {1} epochs |\n|---|---:|---:|---:|---:|\n",
        def_epochs, long_ep);
    for (const char* k :
         {"inherited_float", "inherited_int8", "recalibrated_float", "recalibrated_int8"}) {
      md += fmt::format("| {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} |\n", k,
                        rk[k]["kendall_tau"].get<double>(), rk[k]["spearman_rho"].get<double>(),
                        lg[k]["kendall_tau"].get<double>(), lg[k]["spearman_rho"].get<double>());
    }
    {
      // the baseline any score has to beat: a candidate's size alone
      std::vector<double> macs, trained;
      for (const auto& c : rk["candidates"]) {
        macs.push_back(static_cast<double>(c["macs"].get<uint64_t>()));
        trained.push_back(c["standalone"].get<double>());
      }
      const double t = kendall_tau(macs, trained), r = spearman_rho(macs, trained);
      md += fmt::format(
          "| MACs (no supernet: the baseline) | {0:.3f} | {1:.3f} | {0:.3f} | "
          "{1:.3f} |\n",
          t, r);
    }
    md += fmt::format(
        "\nThe reference's own reliability: the standalone accuracies on the first and the "
        "second half of the validation images (half as many images each) agree with Kendall "
        "tau {:.3f} (Spearman {:.3f}); a score's tau against the reference is limited by the "
        "reference's own noise, of which this is a pessimistic measure.\n",
        rk["standalone_split_half"]["kendall_tau"].get<double>(),
        rk["standalone_split_half"]["spearman_rho"].get<double>());
    md += fmt::format(
        "\nAnd against training noise: one training seed's ranking against another's, Kendall "
        "tau {:.3f} (the mean over pairs of seeds); the recalibrated float score against the "
        "first seed alone has tau {:.3f}, against the mean of the {} seeds {:.3f}.\n",
        rk["standalone_seed_vs_seed"]["kendall_tau"].get<double>(),
        rk["recalibrated_float_vs_one_seed"]["kendall_tau"].get<double>(),
        rk["standalone_seeds"].get<size_t>(),
        rk["recalibrated_float"]["kendall_tau"].get<double>());
    md += fmt::format(
        "\nThe supernet's own: its recalibrated float accuracies on the validation images and "
        "on the {} test images agree with Kendall tau {:.3f} (Spearman {:.3f}), the long "
        "preset's {:.3f} ({:.3f}); where this is well above its tau against the reference, the "
        "supernet orders the candidates differently from training, not at random.\n",
        s["evolution_vs_random"]["test_images"].get<size_t>(),
        rk["supernet_val_vs_test"]["kendall_tau"].get<double>(),
        rk["supernet_val_vs_test"]["spearman_rho"].get<double>(),
        lg["supernet_val_vs_test"]["kendall_tau"].get<double>(),
        lg["supernet_val_vs_test"]["spearman_rho"].get<double>());
    md += fmt::format(
        "\n| candidate | MACs | inherited float | inherited int8 | recalibrated float (95% CI) | "
        "recalibrated int8 | recalibrated float, {0} epochs | recalibrated int8, {0} epochs | "
        "standalone |\n|---|---:|---:|---:|---|---:|---:|---:|---:|\n",
        long_ep);
    for (const auto& c : rk["candidates"]) {
      md += fmt::format(
          "| {} | {} | {:.2f}% | {:.2f}% | {:.2f}% ({:.2f}-{:.2f}) | {:.2f}% | {:.2f}% | {:.2f}% "
          "| {:.2f}% |\n",
          c["arch"].get<std::string>(), c["macs"].get<uint64_t>(),
          100 * c["inherited_float"].get<double>(), 100 * c["inherited_int8"].get<double>(),
          100 * c["recalibrated_float"].get<double>(),
          100 * c["recalibrated_ci95"][0].get<double>(),
          100 * c["recalibrated_ci95"][1].get<double>(), 100 * c["recalibrated_int8"].get<double>(),
          100 * c["long_supernet"]["recalibrated_float"].get<double>(),
          100 * c["long_supernet"]["recalibrated_int8"].get<double>(),
          100 * c["standalone"].get<double>());
    }
    const json& e = s["evolution_vs_random"];
    const json& b0 = e["budgets"][0];
    md += fmt::format(
        "\nEvolution against random search, seeds 1-{}, MAC limit {}, objective the int8 accuracy "
        "on the accelerator (reference backend) on {} validation images; the best's test accuracy "
        "on the {} test images besides. The objective depends on the candidate alone, so the {} "
        "candidates within the limit were evaluated once as fused batches ({:.0f} s; the best "
        "scores {:.2f}%) and every search ran on that table, which takes the decisions "
        "`run_search` takes on the accelerator ({}). Per seed, the first budget ({} initial, {} "
        "generations, {} candidates each):\n\n"
        "| seed | random best | val (95% CI) | test | evolution best | val (95% CI) | test |\n"
        "|---:|---|---|---:|---|---|---:|\n",
        e["seeds"].get<size_t>(), e["max_macs"].get<uint64_t>(), e["val_images"].get<size_t>(),
        e["test_images"].get<size_t>(), e["feasible"].get<size_t>(),
        e["seconds"]["table"].get<double>(), 100 * e["top_accuracy"].get<double>(),
        e["table_checked"].get<bool>() ? "checked for seed 1: the same candidates, accuracies and "
                                         "best"
                                       : "NOT the same for seed 1",
        b0["population"].get<size_t>(), b0["generations"].get<size_t>(),
        b0["evaluations"].get<size_t>());
    auto cell = [](const json& x) {
      return fmt::format("{} | {:.2f}% ({:.2f}-{:.2f}) | {:.2f}%", x["best"].get<std::string>(),
                         100 * x["val_accuracy"].get<double>(),
                         100 * x["val_ci95"][0].get<double>(), 100 * x["val_ci95"][1].get<double>(),
                         100 * x["test_accuracy"].get<double>());
    };
    for (const auto& row : b0["runs"]) {
      md += fmt::format("| {} | {} | {} |\n", row["seed"].get<size_t>(), cell(row["random"]),
                        cell(row["evolution"]));
    }
    auto tstat = [](const json& t) {
      return t["t"].is_string() ? t["t"].get<std::string>()
                                : fmt::format("{:.2f}", t["t"].get<double>());
    };
    md +=
        "\nEvolution minus random over the seeds (paired; one-sided p of a paired t-test and of "
        "the "
        "exact sign-flip test):\n\n"
        "| budget (initial x generations, evaluations) | best found: random / evolution | "
        "validation (the objective): mean, t, p, sign-flip p | test: mean, t, p, sign-flip p |\n"
        "|---|---:|---|---|\n";
    for (const auto& b : e["budgets"]) {
      const json &v = b["val"], &t = b["test"];
      md += fmt::format(
          "| {} x {}, {} | {} / {} of {} | {:+.2f} points, t = {}, p = {:.4f}, {:.4f} | {:+.2f} "
          "points, t = {}, p = {:.4f}, {:.4f} |\n",
          b["population"].get<size_t>(), b["generations"].get<size_t>(),
          b["evaluations"].get<size_t>(), b["found_top"]["random"].get<size_t>(),
          b["found_top"]["evolution"].get<size_t>(), b["runs"].size(),
          100 * v["mean_difference"].get<double>(), tstat(v), v["p_paired_t"].get<double>(),
          v["p_sign_flip"].get<double>(), 100 * t["mean_difference"].get<double>(), tstat(t),
          t["p_paired_t"].get<double>(), t["p_sign_flip"].get<double>());
    }
    md +=
        "\n\"Best found\" counts the seeds whose search ended on a candidate with the best score "
        "of the whole space. The test set plays no part in the search: its difference says whether "
        "what evolution gains on the objective carries over, which depends on how well the "
        "objective ranks (the tau above), not on the search.\n";
  }
  md += "\nCommands: `make bench` (full; `build/bin/nasa-bench --quick` is the CI version, ctest "
        "`bench_quick`). Raw numbers: `bench/results.json`.\n";
  return md;
}

// Energy per candidate of every batch of section 5, alone and fused, as stacked bars by event.
std::string energy_svg(const json& cases) {
  std::vector<const json*> rows;
  for (const auto& c : cases) {
    if (c["alone_energy"].contains("energy_pj") && c["fused_energy"].contains("energy_pj")) {
      rows.push_back(&c);
    }
  }
  const double w = 860, left = 250, right = 30, bar = 14, gap = 10;
  const double h = 70 + (2 * bar + gap) * static_cast<double>(rows.size()) + 40;
  nasa::svg::Doc d(w, h);
  d.text(w / 2, 22, "Energy per candidate (model, docs/energy.md): alone / fused, by event", 13);
  const char* colors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                          "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  double top = 0;
  for (const json* c : rows) {
    top = std::max({top, (*c)["alone_energy"]["energy_per_candidate_pj"].get<double>(),
                    (*c)["fused_energy"]["energy_per_candidate_pj"].get<double>()});
  }
  const double pw = w - left - right - 60;  // (room for the totals)
  double y = 50;
  std::vector<std::string> events;
  for (const json* c : rows) {
    for (const char* k : {"alone_energy", "fused_energy"}) {
      const json& e = (*c)[k];
      const double n = static_cast<double>((*c)["candidates"].get<size_t>());
      double x = left;
      size_t i = 0;
      for (const auto& ev : e["energy_breakdown"]) {
        const std::string name = ev["event"].get<std::string>();
        if (events.size() <= i) events.push_back(name);
        const double v = ev["pj"].get<double>() / n;
        const double bw = top > 0 ? v / top * pw : 0;
        d.rect(x, y, bw, bar - 2, colors[i % 10],
               fmt::format("{} {}: {} {:.1f} uJ per candidate", (*c)["config"].get<std::string>(),
                           (*c)["batch"].get<std::string>(), name, v * 1e-6));
        x += bw;
        ++i;
      }
      const bool is_alone = k == std::string("alone_energy");
      d.text(left - 6, y + bar - 4,
             fmt::format("{} {} {}", (*c)["config"].get<std::string>(),
                         (*c)["batch"].get<std::string>(), is_alone ? "alone" : "fused"),
             10, "end");
      d.text(x + 4, y + bar - 4,
             fmt::format("{:.0f} uJ", e["energy_per_candidate_pj"].get<double>() * 1e-6), 10,
             "start");
      y += bar;
    }
    y += gap;
  }
  for (size_t i = 0; i < events.size(); ++i) {
    const double x = 60 + 78.0 * static_cast<double>(i % 10);
    d.rect(x, h - 30, 10, 10, colors[i % 10]);
    d.text(x + 12, h - 21, events[i], 9, "start");
  }
  return d.str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nasa-bench: fusion, efficiency, peers and simulation-speed benchmarks"};
  Options o;
  app.add_flag("--quick", o.quick, "small sizes for CI, with checks");
  app.add_option("--out", o.out, "results JSON (default bench/results.json)");
  app.add_option("--md", o.md, "markdown report (default BENCHMARKS.md)");
  app.add_option("--repeats", o.repeats, "timed repeats, medians reported (default 3)");
  app.add_option("--threads", o.threads, "CPU threads of the timed evaluators (default 2)");
  app.add_option("--only", o.only,
                 "run only these studies: fusion efficiency peers imagenet board mpi search "
                 "(default: all); with an existing --out file their results replace its own and "
                 "the report keeps the rest")
      ->check(
          CLI::IsMember({"fusion", "efficiency", "peers", "imagenet", "board", "mpi", "search"}));
  std::string render;
  app.add_option("--render", render,
                 "only render this results JSON as the markdown report (--md); runs nothing");
  CLI11_PARSE(app, argc, argv);
  try {
    if (!render.empty()) {
      std::ifstream in(render);
      if (!in) throw std::runtime_error("cannot read " + render);
      nasa::write_file_atomic(o.md, markdown(json::parse(in)));
      return 0;
    }
    if (o.quick) o.repeats = 1;
    bool ok = true;
    const auto t_all = Clock::now();
    std::string today;
    {
      const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
      char buf[32];
      std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
      today = buf;
    }
    json r;
    // --only with an earlier results file: its studies are replaced, the rest kept, and the
    // report says which sections come from which run
    const bool update = !o.only.empty() && fs::exists(o.out);
    if (update) {
      std::ifstream in(o.out);
      r = json::parse(in);
    } else {
      r["mode"] = o.quick ? "quick" : "full";
      r["machine"] = machine();
      r["date"] = today;
      r["repeats"] = o.repeats;
    }
    const auto& sim = nasa::config_by_name("sim");
    auto want = [&](const char* study) { return o.only.empty() || o.only.count(study) != 0; };
    if (want("fusion")) {
      status("1/10 fusion on fbnet-imagenet and proxyless-imagenet");
      const size_t gens = o.quick ? 3 : 20, images = o.quick ? 4 : 64;
      const uint64_t budget = o.quick ? (64ull << 20) : (1ull << 30);
      r["fusion"] = json::array(
          {fusion_study("fbnet-imagenet", 400'000'000, gens, images, budget, sim, ok),
           fusion_study("proxyless-imagenet", 400'000'000, gens, images, budget, sim, ok)});
    }
    if (want("efficiency")) {
      status("2/10 accelerator efficiency on the RTL, 4/10 simulation speed");
      json eff = json::array();
      for (const char* name : {"fpga", "sim", "large"}) {
        const uint64_t n = o.quick ? 10 : (std::string(name) == "large" ? 250 : 800);
        eff.push_back(efficiency_study(nasa::config_by_name(name), n, ok));
      }
      r["efficiency"] = eff;
    }
    const CandidateSet set(o.quick ? 4 : 20, o.quick ? 32 : 256);
    if (want("peers")) {
      status("3/10 peers: libtorch fp32, fused int8 reference, modeled accelerator");
      r["peers"] = peers_study(set, o.repeats, o.threads);
      r["fusion_pays"] = fusion_pays_study(set, o.quick, o.threads);
    }
    if (want("imagenet")) {
      status("7/10 whole fbnet-imagenet candidates (row bands) on the cycle model");
      r["imagenet"] = imagenet_study("fbnet-imagenet", o.quick ? 2 : 10, 8, ok);
    }
    if (want("board")) {
      r["board"] = board_study(set, o.quick ? 1 : 4, o.quick ? 2 : 4, o.quick ? 1 : 8, ok);
    }
    if (want("mpi")) r["mpi"] = mpi_study(o.quick, o.repeats, ok);
    if (want("search")) r["search_quality"] = search_quality_study(o.quick, o.threads, ok);
    if (update) {
      const json u = {{"studies", o.only},
                      {"mode", o.quick ? "quick" : "full"},
                      {"machine", machine()},
                      {"date", today},
                      {"seconds", since(t_all)}};
      // (the same sections re-run on the same day and machine: one entry, the last run's)
      json kept = json::array();
      for (const auto& e : r.value("updates", json::array())) {
        const bool same = e["studies"] == u["studies"] && e["mode"] == u["mode"] &&
                          e["machine"] == u["machine"] && e["date"] == u["date"];
        if (!same) kept.push_back(e);
      }
      kept.push_back(u);
      r["updates"] = kept;
    } else {
      r["seconds"] = since(t_all);
    }
    r["checks_passed"] = ok;
    const fs::path out(o.out);
    if (out.has_parent_path()) fs::create_directories(out.parent_path());
    nasa::write_file_atomic(o.out, r.dump(2) + "\n");
    nasa::write_file_atomic(o.md, markdown(r));
    const fs::path svg_path = (out.has_parent_path() ? out.parent_path() : fs::path(".")) / "fusion.svg";
    if (r.contains("fusion")) nasa::svg::write_file(svg_path, fusion_svg(r["fusion"]));
    if (r.contains("fusion_pays")) {
      nasa::svg::write_file(svg_path.parent_path() / "energy.svg", energy_svg(r["fusion_pays"]));
    }
    status(fmt::format("wrote {} and {} in {:.0f} s; {}", o.out, o.md, since(t_all),
                       ok ? "checks passed" : "CHECKS FAILED"));
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "nasa-bench: error: {}\n", e.what());
    return 1;
  }
}
