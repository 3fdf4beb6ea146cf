// Architecture search over a quantized supernet: random search and SPOS-style evolution under
// MAC / parameter / accelerator-cycle constraints, each generation evaluated as fused batches on a
// Runtime (validation accuracy is the objective), plus the accuracy-vs-cycles Pareto front.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "nasa/compiler.h"
#include "nasa/dist.h"
#include "nasa/hw_spec.h"
#include "nasa/runtime.h"
#include "nasa/spec.h"

namespace nasa::search {

// Bad settings and impossible constraints; the message names the option and the limit.
class SearchError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class Strategy { Random, Evolution };
std::string_view strategy_name(Strategy s);
Strategy parse_strategy(std::string_view s);  // "random" | "evolution"

// 0 = no limit. Cycles are the accelerator's cycles for one image of the candidate alone.
struct Constraints {
  uint64_t max_macs = 0, max_params = 0, max_cycles = 0;
};

struct SearchConfig {
  Strategy strategy = Strategy::Evolution;
  size_t population = 50;  // initial population; batch size of random search
  size_t generations = 10;
  size_t topk = 10;        // parents kept per generation
  size_t mutations = 25;   // children by mutation per generation
  size_t crossovers = 25;  // children by crossover per generation
  double mut_prob = 0.1;   // per-layer probability of a mutation
  Constraints constraints;
  uint64_t seed = 1;
  size_t max_tries = 10000;  // draws before a constraint is declared impossible
  uint32_t mini_batch = 32;  // images per mini-batch of the fused runs
  // The validation images are evaluated in shards of this many mini-batches, each shard a batch
  // run of its own; the ranks of an mpirun job share the shards (docs/mpi.md). Fixed here, not by
  // the number of ranks: a search's results are the same on any number of ranks.
  size_t shard_batches = 4;
};

// Throws SearchError naming the first bad field.
void validate(const SearchConfig& c);

struct Evaluated {
  spec::Candidate arch;
  double val_accuracy = 0;  // fraction in [0, 1]
  size_t correct = 0;
  uint64_t macs = 0, params = 0, cycles = 0;
  size_t generation = 0;
};

// What each generation cost on the accelerator (fused batches). `reused` of its candidates were
// measured by an earlier search on the same images (run_searches) and not run again: the
// counters are those of the other candidates' batches.
struct GenerationStats {
  size_t generation = 0, candidates = 0, reused = 0, batches = 0, nodes = 0;
  uint64_t cycles = 0, macs = 0;
  double pe_utilization = 0;     // macs / (Rows x Cols x cycles) of the generation's batches
  double best_val_accuracy = 0;  // best so far
};

struct SearchResult {
  SearchConfig config;
  std::string supernet, backend, hw_config;
  size_t val_images = 0, calib_images = 0;
  std::vector<Evaluated> evaluated;          // evaluation order
  std::vector<GenerationStats> generations;  // one per generation run
  std::vector<size_t> pareto;                // indices into evaluated, cycles ascending
  std::optional<size_t> best;                // index into evaluated
  std::vector<size_t> top(size_t n) const;   // indices, by val accuracy (ties: fewer cycles)
};

// The choices a search draws at each layer (a skip only where the layer keeps its shape).
std::vector<std::vector<int>> allowed_choices(const spec::Supernet& net);
// The least MACs and the least params any candidate of `net` has (each layer's cheapest allowed
// choice, stem and head): a limit below them is impossible.
spec::OpCost smallest_cost(const spec::Supernet& net);

// Every candidate a search may evaluate within a MAC and a parameter limit (0 = none): the
// allowed choices' combinations, in lexicographic order. Throws SearchError when there are more
// than `limit` (the built-in spaces' unconstrained sizes run to ~10^10).
std::vector<spec::Candidate> feasible_candidates(const spec::Supernet& net, uint64_t max_macs,
                                                 uint64_t max_params = 0, size_t limit = 1'000'000);

// The 95% confidence interval (Wilson score) of an accuracy of `correct` of `n` images: what the
// search's accuracies are worth (about +-1.8 points near 80% on 500 images). {0, 1} for n = 0.
struct Interval {
  double lo = 0, hi = 1;
};
Interval accuracy_ci95(size_t correct, size_t n);

// Indices of the points not dominated in (accuracy max, cycles min), by cycles ascending. Of
// points with equal accuracy and cycles only the first is kept.
std::vector<size_t> pareto_front(std::span<const Evaluated> points);

// Accelerator cycles of one candidate on one image on `cfg`'s own timing model (its ref device:
// the engine's cycle model, or the board's cycle-exact model for the board's configuration),
// cached per candidate.
class CycleModel {
 public:
  CycleModel(const compile::QSupernet& q, const hw::Config& cfg);
  uint64_t cycles(const spec::Candidate& c);

 private:
  const compile::QSupernet* q_;
  hw::Config cfg_;
  std::vector<std::vector<uint8_t>> image_;
  std::map<spec::Candidate, uint64_t> cache_;
};

struct Progress {
  Strategy strategy{};
  size_t generation = 0, generations = 0, evaluated = 0;
  double best_val_accuracy = 0;
  std::string best_arch;
  double elapsed_s = 0;
};
using ProgressFn = std::function<void(const Progress&)>;
// The status line of a generation, as every tool prints it: generations count from 0 there as in
// result.json and report.md ("generation 2 (3 of 10)").
std::string progress_line(const Progress& p);

// Runs the search; every candidate evaluated satisfies the constraints and is evaluated once.
// Deterministic for a given config, supernet and images. Throws SearchError
// ("constraint impossible: ...") when no candidate can satisfy the constraints.
//
// `ranks`: the ranks of an mpirun job that run this search together (each calls run_search with
// the same arguments; docs/mpi.md): each rank evaluates its share of every generation's image
// shards, the correct counts and costs are summed on every rank, so every rank takes the same
// decisions and returns the same result, the result of one rank alone. Default: this process.
SearchResult run_search(runtime::Runtime& rt, const hw::Config& cfg, const SearchConfig& config,
                        std::span<const std::vector<uint8_t>> images,
                        std::span<const uint8_t> labels, const ProgressFn& progress = {},
                        dist::Comm* ranks = nullptr);

// Searches with each of `strategies` in turn, `config` otherwise, as run_search on the same
// images: a candidate is run on the accelerator once, by the first search that draws it, and a
// later search takes its correct count and cycles from that run. The objective is a function of
// the candidate alone, so every search decides, evaluates and reports what run_search alone
// would; only its generations' accelerator counters differ: they count the batches it ran
// (GenerationStats::reused). `threads` threads of this process share each generation's work
// (image shards of its fused batches, the new candidates' cycles), each on its own copy of rt.
std::vector<SearchResult> run_searches(runtime::Runtime& rt, const hw::Config& cfg,
                                       const SearchConfig& config,
                                       std::span<const Strategy> strategies,
                                       std::span<const std::vector<uint8_t>> images,
                                       std::span<const uint8_t> labels,
                                       const ProgressFn& progress = {}, int threads = 1,
                                       dist::Comm* ranks = nullptr);
// The shards [begin, end) of n validation images (SearchConfig::shard_batches).
std::vector<std::pair<size_t, size_t>> image_shards(size_t n, const SearchConfig& c);

// The same protocol with a caller-supplied fitness (higher is better; stored as val_accuracy) in
// place of accelerator runs: studies of the search itself on shape-only spaces (bench). No cycle
// model: max_cycles must be 0 and cycles are reported as 0. Each generation's `nodes` is its
// fused graph's size.
using FitnessFn = std::function<std::vector<double>(std::span<const spec::Candidate>)>;
SearchResult run_search_fitness(const spec::Supernet& net, const SearchConfig& config,
                                const FitnessFn& fitness, const ProgressFn& progress = {});

// The protocol of run_search on results measured beforehand: `correct` maps every candidate the
// search may evaluate (e.g. the whole feasible space, evaluated once as fused batches) to its
// correct count on the same `val_images` validation images. The objective is a function of the
// candidate alone, so the decisions, the evaluated candidates and their accuracies and cycles
// (from q's cycle model on `cfg`, as run_search: they break ties) are run_search's on those
// images; the generations' accelerator counters (cycles, MACs) are 0. For studies that repeat a
// search over many seeds (bench). Throws std::out_of_range naming a candidate missing from it.
SearchResult run_search_table(const compile::QSupernet& q, const hw::Config& cfg,
                              const SearchConfig& config,
                              const std::map<spec::Candidate, size_t>& correct, size_t val_images,
                              const ProgressFn& progress = {});

// Throws SearchError ("constraint impossible: ...") when no candidate satisfies the constraints,
// as run_search would, but without evaluating anything. `q` may hold any weights (cycles depend on
// the shapes only), so this runs before the supernet is trained.
void check_feasible(const compile::QSupernet& q, const hw::Config& cfg,
                    const SearchConfig& config);

// Splits a batch into consecutive pieces configuration `cfg` accepts (<= cfg.max_cands
// candidates and <= cfg.node_cap fused nodes each).
std::vector<std::vector<spec::Candidate>> split_batch(const spec::Supernet& net,
                                                      const hw::Config& cfg,
                                                      std::span<const spec::Candidate> batch);

}  // namespace nasa::search
