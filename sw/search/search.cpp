#include "nasa/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <random>
#include <set>

#include "nasa/device.h"
#include "nasa/fusion.h"
#include "nasa/interrupt.h"
#include "nasa/parallel.h"

namespace nasa::search {

std::string_view strategy_name(Strategy s) {
  return s == Strategy::Random ? "random" : "evolution";
}

Strategy parse_strategy(std::string_view s) {
  if (s == "random") return Strategy::Random;
  if (s == "evolution") return Strategy::Evolution;
  throw SearchError(fmt::format("strategy '{}': expected random or evolution", s));
}

void validate(const SearchConfig& c) {
  if (c.population == 0) throw SearchError("--population 0: expected at least 1");
  if (c.generations == 0) throw SearchError("--generations 0: expected at least 1");
  if (c.strategy == Strategy::Evolution && c.topk == 0) {
    throw SearchError("--topk 0: evolution needs at least 1 parent");
  }
  if (c.generations > 1 && c.mutations + c.crossovers == 0) {
    throw SearchError(
        "--mutations 0 --crossovers 0: generations after the first would evaluate nothing");
  }
  if (!(c.mut_prob >= 0.0 && c.mut_prob <= 1.0)) {
    throw SearchError(fmt::format("--mut-prob {}: expected a probability in [0, 1]", c.mut_prob));
  }
  if (c.max_tries == 0) throw SearchError("max_tries 0: expected at least 1");
  if (c.mini_batch == 0) throw SearchError("mini_batch 0: expected at least 1");
  if (c.shard_batches == 0) throw SearchError("--shard-batches 0: expected at least 1");
}

std::vector<std::pair<size_t, size_t>> image_shards(size_t n, const SearchConfig& c) {
  std::vector<std::pair<size_t, size_t>> s;
  const size_t step = c.shard_batches * c.mini_batch;
  for (size_t b = 0; b < n; b += step) s.emplace_back(b, std::min(n, b + step));
  return s;
}

std::vector<size_t> SearchResult::top(size_t n) const {
  std::vector<size_t> idx(evaluated.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    const auto &x = evaluated[a], &y = evaluated[b];
    if (x.val_accuracy != y.val_accuracy) return x.val_accuracy > y.val_accuracy;
    return x.cycles < y.cycles;
  });
  if (idx.size() > n) idx.resize(n);
  return idx;
}

std::vector<size_t> pareto_front(std::span<const Evaluated> points) {
  std::vector<size_t> idx(points.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    if (points[a].cycles != points[b].cycles) return points[a].cycles < points[b].cycles;
    return points[a].val_accuracy > points[b].val_accuracy;
  });
  std::vector<size_t> front;
  for (size_t i : idx) {
    // sorted by cycles: a point is on the front iff it beats every cheaper point's accuracy
    if (front.empty() || points[i].val_accuracy > points[front.back()].val_accuracy) {
      front.push_back(i);
    }
  }
  return front;
}

CycleModel::CycleModel(const compile::QSupernet& q, const hw::Config& cfg)
    : q_(&q),
      cfg_(cfg),
      // cycles do not depend on pixel values: one blank image of the input shape
      image_(1, std::vector<uint8_t>(static_cast<size_t>(q.net.in_h) * q.net.in_w * q.net.in_c)) {}

uint64_t CycleModel::cycles(const spec::Candidate& c) {
  if (auto it = cache_.find(c); it != cache_.end()) return it->second;
  // the target's own timing: its ref device (the engine's cycle model, or the board's model)
  const compile::Program p = compile::compile(*q_, c, image_, cfg_);
  auto dev = device::make_ref_device(cfg_, p.image.size());
  dev->write_memory(0, p.image);
  const device::WaitResult w =
      dev->run(p.desc_addr, p.desc_count, p.win_base, p.win_limit, uint64_t{1} << 40,
               p.scratch_base);
  if (!w.done || w.err != hw::Err::None) {
    throw SearchError(fmt::format("cycle model of `{}`: candidate {} did not run ({})", cfg_.name,
                                  spec::format_candidate(c), err_name(w.err)));
  }
  const uint64_t cyc = dev->counter(hw::Counter::Cycles);
  cache_.emplace(c, cyc);
  return cyc;
}

std::vector<std::vector<int>> allowed_choices(const spec::Supernet& net) {
  std::vector<std::vector<int>> out;
  for (size_t l = 0; l < net.layers.size(); ++l) {
    std::vector<int> ok;
    for (size_t k = 0; k < net.layers[l].choices.size(); ++k) {
      if (net.layers[l].choices[k].kind != spec::OpKind::Skip || spec::skip_allowed(net, l)) {
        ok.push_back(static_cast<int>(k));
      }
    }
    out.push_back(std::move(ok));
  }
  return out;
}

spec::OpCost smallest_cost(const spec::Supernet& net) {
  spec::OpCost lo = spec::stem_cost(net);
  lo += spec::head_cost(net);
  const auto allowed = allowed_choices(net);
  for (size_t l = 0; l < allowed.size(); ++l) {
    uint64_t m = UINT64_MAX, p = UINT64_MAX;
    for (int k : allowed[l]) {
      const auto oc = spec::op_cost(net, l, static_cast<size_t>(k));
      m = std::min(m, oc.macs);
      p = std::min(p, oc.params);
    }
    lo.macs += m;
    lo.params += p;
  }
  return lo;
}

std::vector<spec::Candidate> feasible_candidates(const spec::Supernet& net, uint64_t max_macs,
                                                 uint64_t max_params, size_t limit) {
  const auto allowed = allowed_choices(net);
  const size_t n = allowed.size();
  // costs add up per layer: the stem and head's, then each layer's choice's
  std::vector<std::vector<spec::OpCost>> cost(n);
  for (size_t l = 0; l < n; ++l) {
    for (int k : allowed[l]) cost[l].push_back(spec::op_cost(net, l, static_cast<size_t>(k)));
  }
  spec::OpCost base = spec::stem_cost(net);
  base += spec::head_cost(net);
  std::vector<spec::Candidate> out;
  spec::Candidate c(n);
  std::vector<spec::OpCost> sum(n + 1);
  sum[0] = base;
  auto fits = [&](const spec::OpCost& x) {
    return (!max_macs || x.macs <= max_macs) && (!max_params || x.params <= max_params);
  };
  // depth-first in lexicographic order of the allowed choices' positions
  std::function<void(size_t)> walk = [&](size_t l) {
    if (l == n) {
      if (out.size() >= limit) {
        throw SearchError(
            fmt::format("'{}' has more than {} candidates within the limits", net.name, limit));
      }
      out.push_back(c);
      return;
    }
    for (size_t i = 0; i < allowed[l].size(); ++i) {
      sum[l + 1] = sum[l];
      sum[l + 1] += cost[l][i];
      if (!fits(sum[l + 1])) continue;  // costs only grow further down
      c[l] = allowed[l][i];
      walk(l + 1);
    }
  };
  if (fits(base)) walk(0);
  return out;
}

Interval accuracy_ci95(size_t correct, size_t n) {
  if (n == 0) return {};
  const double z = 1.959963984540054, nn = static_cast<double>(n);
  const double p = static_cast<double>(std::min(correct, n)) / nn;
  const double den = 1 + z * z / nn, mid = (p + z * z / (2 * nn)) / den;
  const double half = z * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / den;
  return {std::max(0.0, mid - half), std::min(1.0, mid + half)};
}

std::vector<std::vector<spec::Candidate>> split_batch(const spec::Supernet& net,
                                                      const hw::Config& cfg,
                                                      std::span<const spec::Candidate> batch) {
  std::vector<std::vector<spec::Candidate>> out;
  std::optional<fusion::Fuser> cur;
  for (const auto& c : batch) {
    if (cur) {
      fusion::Fuser trial = *cur;
      trial.add(c);
      if (trial.graph().nodes.size() <= cfg.node_cap && out.back().size() < cfg.max_cands) {
        cur = std::move(trial);
        out.back().push_back(c);
        continue;
      }
    }
    cur.emplace(net);
    cur->add(c);
    if (cur->graph().nodes.size() > cfg.node_cap) {
      throw SearchError(fmt::format(
          "candidate {} alone needs {} nodes, more than the {} of `{}`'s node table",
          spec::format_candidate(c), cur->graph().nodes.size(), cfg.node_cap, cfg.name));
    }
    out.push_back({c});
  }
  return out;
}

namespace {

// Why a draw was rejected, for the "constraint impossible" message.
enum Reject { kMacs, kParams, kCycles, kNumRejects };

// What one evaluation of a batch gives back: a score per candidate (validation accuracy, or a
// stand-in fitness) and, for accelerator runs, correct counts and the batch runs' counters.
struct BatchOutcome {
  std::vector<double> score;
  std::vector<size_t> correct;  // empty when the score is not a count
  // each candidate's cycles alone; empty: the searcher's cycle model gives them
  std::vector<uint64_t> cycles_each;
  size_t reused = 0;  // candidates an earlier search measured (GenerationStats::reused)
  size_t batches = 0, nodes = 0;
  uint64_t cycles = 0, macs = 0;
};
using BatchEval = std::function<BatchOutcome(const std::vector<spec::Candidate>&)>;

class Searcher {
 public:
  // `q` (for the cycle model) may be null when no constraint or report needs cycles; `eval` may
  // be empty for a feasibility check (nothing is evaluated then).
  Searcher(const spec::Supernet& net, const compile::QSupernet* q, const hw::Config& cfg,
           const SearchConfig& c, BatchEval eval, size_t val_images, const ProgressFn& progress,
           dist::Comm* ranks = nullptr)
      : ranks_(ranks),
        net_(net),
        c_(c),
        eval_(std::move(eval)),
        val_images_(val_images),
        progress_(progress),
        rng_(c.seed),
        t0_(std::chrono::steady_clock::now()) {
    if (q) cycles_.emplace(*q, cfg);
    allowed_ = allowed_choices(net_);
    check_static_bounds();
  }

  // Draws random candidates until one satisfies the constraints; throws when none does.
  void check_feasible() {
    std::vector<spec::Candidate> batch;
    fill_random(batch, 1);
  }

  SearchResult run(const std::string& backend_name, const hw::Config& cfg) {
    res_.config = c_;
    res_.supernet = net_.name;
    res_.backend = backend_name;
    res_.hw_config = std::string(cfg.name);
    hw_ = &cfg;
    res_.val_images = val_images_;
    for (size_t g = 0; g < c_.generations; ++g) {
      throw_if_interrupted("the search");
      std::vector<spec::Candidate> batch;
      // Random search draws exactly as many candidates per generation as evolution evaluates,
      // so the two compare at equal evaluations.
      const size_t want = g == 0 ? c_.population : c_.mutations + c_.crossovers;
      if (c_.strategy == Strategy::Random || g == 0 || res_.evaluated.empty()) {
        fill_random(batch, want);
      } else {
        const auto parents = res_.top(c_.topk);
        for (size_t i = 0; i < c_.mutations; ++i) child(batch, parents, false);
        for (size_t i = 0; i < c_.crossovers; ++i) child(batch, parents, true);
        // children exhausted (duplicates): keep the budget with random candidates
        fill_random(batch, want - batch.size());
      }
      if (batch.empty()) break;  // the whole feasible space has been evaluated
      evaluate(batch, g);
    }
    res_.pareto = pareto_front(res_.evaluated);
    if (!res_.evaluated.empty()) res_.best = res_.top(1).front();
    return std::move(res_);
  }

 private:
  uint64_t draw(uint64_t n) { return rng_() % n; }
  double uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

  spec::Candidate random_candidate() {
    spec::Candidate c(net_.layers.size());
    for (size_t l = 0; l < c.size(); ++l) c[l] = allowed_[l][draw(allowed_[l].size())];
    return c;
  }

  // Exact minima of MACs and params (costs add up per layer): a limit below them is impossible
  // without sampling.
  void check_static_bounds() {
    const spec::OpCost lo = smallest_cost(net_);
    const uint64_t min_macs = lo.macs, min_params = lo.params;
    const auto& k = c_.constraints;
    if (k.max_macs && k.max_macs < min_macs) {
      throw SearchError(fmt::format(
          "constraint impossible: --max-macs {}: the smallest candidate of '{}' has {} MACs",
          k.max_macs, net_.name, min_macs));
    }
    if (k.max_params && k.max_params < min_params) {
      throw SearchError(fmt::format(
          "constraint impossible: --max-params {}: the smallest candidate of '{}' has {} params",
          k.max_params, net_.name, min_params));
    }
  }

  // Fills costs; returns the first constraint violated, or kNumRejects when it is feasible.
  Reject check(const spec::Candidate& c, Evaluated& e) {
    const auto cost = spec::candidate_cost(net_, c);
    e.arch = c;
    e.macs = cost.macs;
    e.params = cost.params;
    const auto& k = c_.constraints;
    if (k.max_macs && e.macs > k.max_macs) return kMacs;
    if (k.max_params && e.params > k.max_params) return kParams;
    // without a cycle limit the cycles are only reported: evaluate() computes a generation's
    // on all ranks at once
    if (!k.max_cycles) return kNumRejects;
    e.cycles = cycles_ ? cycles_->cycles(c) : 0;
    min_cycles_ = std::min(min_cycles_, e.cycles);
    if (e.cycles > k.max_cycles) return kCycles;
    return kNumRejects;
  }

  // Accepts `c` into the batch when new and feasible.
  bool accept(const spec::Candidate& c, std::vector<spec::Candidate>& batch) {
    if (seen_.contains(c)) return false;
    Evaluated e;
    const Reject r = check(c, e);
    seen_.insert(c);  // infeasible ones are never worth another look either
    if (r != kNumRejects) {
      ++rejects_[r];
      return false;
    }
    ++feasible_;
    pending_.emplace(c, e);
    batch.push_back(c);
    return true;
  }

  void fill_random(std::vector<spec::Candidate>& batch, size_t n) {
    for (size_t added = 0; added < n; ++added) {
      size_t tries = 0;
      while (!accept(random_candidate(), batch)) {
        if (++tries >= c_.max_tries) {
          if (feasible_ == 0) impossible();
          return;  // feasible candidates exist but all have been drawn: space exhausted
        }
      }
    }
  }

  [[noreturn]] void impossible() const {
    const auto& k = c_.constraints;
    const size_t worst =
        static_cast<size_t>(std::max_element(rejects_.begin(), rejects_.end()) - rejects_.begin());
    std::string what;
    if (worst == kCycles) {
      what =
          fmt::format("--max-cycles {}: the fewest cycles seen were {}", k.max_cycles, min_cycles_);
    } else if (worst == kParams) {
      what = fmt::format("--max-params {}", k.max_params);
    } else {
      what = fmt::format("--max-macs {}", k.max_macs);
    }
    throw SearchError(fmt::format(
        "constraint impossible: {} (no candidate of '{}' satisfies the constraints in {} random "
        "draws: {} over --max-macs, {} over --max-params, {} over --max-cycles)",
        what, net_.name, c_.max_tries, rejects_[kMacs], rejects_[kParams], rejects_[kCycles]));
  }

  void child(std::vector<spec::Candidate>& batch, const std::vector<size_t>& parents,
             bool crossover) {
    // SPOS: up to 10x the wanted number of tries, then give up on this child
    for (size_t t = 0; t < 10; ++t) {
      const auto& a = res_.evaluated[parents[draw(parents.size())]].arch;
      spec::Candidate c = a;
      if (crossover) {
        const auto& b = res_.evaluated[parents[draw(parents.size())]].arch;
        for (size_t l = 0; l < c.size(); ++l) c[l] = draw(2) ? b[l] : a[l];
      } else {
        for (size_t l = 0; l < c.size(); ++l) {
          if (uniform() < c_.mut_prob) c[l] = allowed_[l][draw(allowed_[l].size())];
        }
      }
      if (accept(c, batch)) return;
    }
  }

  void evaluate(const std::vector<spec::Candidate>& batch, size_t g) {
    GenerationStats st;
    st.generation = g;
    st.candidates = batch.size();
    const BatchOutcome r = eval_(batch);
    if (!r.cycles_each.empty()) {
      if (r.cycles_each.size() != batch.size()) {
        throw std::runtime_error(fmt::format("evaluation of {} candidates returned {} cycle counts",
                                             batch.size(), r.cycles_each.size()));
      }
      for (size_t i = 0; i < batch.size(); ++i) pending_.at(batch[i]).cycles = r.cycles_each[i];
    } else if (cycles_ && !c_.constraints.max_cycles) {
      // each candidate's cycles alone, the candidates shared over the ranks
      dist::Comm self;
      dist::Comm& comm = ranks_ ? *ranks_ : self;
      std::vector<uint64_t> cyc(batch.size(), 0);
      for (size_t i = static_cast<size_t>(comm.rank()); i < batch.size();
           i += static_cast<size_t>(comm.size())) {
        cyc[i] = cycles_->cycles(batch[i]);
      }
      comm.sum(cyc);
      for (size_t i = 0; i < batch.size(); ++i) pending_.at(batch[i]).cycles = cyc[i];
    }
    if (r.score.size() != batch.size() || (!r.correct.empty() && r.correct.size() != batch.size())) {
      throw std::runtime_error(fmt::format("evaluation of {} candidates returned {} scores",
                                           batch.size(), r.score.size()));
    }
    st.reused = r.reused;
    st.batches = r.batches;
    st.nodes = r.nodes;
    st.cycles = r.cycles;
    st.macs = r.macs;
    st.pe_utilization = hw::pe_utilization(r.macs, r.cycles, *hw_);
    for (size_t i = 0; i < batch.size(); ++i) {
      Evaluated e = pending_.at(batch[i]);
      e.correct = r.correct.empty() ? 0 : r.correct[i];
      e.val_accuracy = r.score[i];
      e.generation = g;
      res_.evaluated.push_back(std::move(e));
    }
    pending_.clear();
    const size_t b = res_.top(1).front();
    st.best_val_accuracy = res_.evaluated[b].val_accuracy;
    res_.generations.push_back(st);
    if (progress_) {
      Progress p;
      p.strategy = c_.strategy;
      p.generation = g;
      p.generations = c_.generations;
      p.evaluated = res_.evaluated.size();
      p.best_val_accuracy = st.best_val_accuracy;
      p.best_arch = spec::format_candidate(res_.evaluated[b].arch);
      p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
      progress_(p);
    }
  }

  dist::Comm* ranks_;  // null: this process alone
  const spec::Supernet& net_;
  SearchConfig c_;
  BatchEval eval_;
  size_t val_images_ = 0;
  const ProgressFn& progress_;
  std::optional<CycleModel> cycles_;
  std::mt19937_64 rng_;
  std::chrono::steady_clock::time_point t0_;
  std::vector<std::vector<int>> allowed_;
  std::set<spec::Candidate> seen_;
  std::map<spec::Candidate, Evaluated> pending_;
  std::array<size_t, kNumRejects> rejects_{};
  size_t feasible_ = 0;
  uint64_t min_cycles_ = UINT64_MAX;
  SearchResult res_;
  const hw::Config* hw_ = nullptr;  // the target (run())
};

// What an earlier search on the same images measured of a candidate (run_searches).
struct Known {
  size_t correct = 0;
  uint64_t cycles = 0;
};
using Memo = std::map<spec::Candidate, Known>;

// run_search, and each search of run_searches: `memo` (may be null) gives the candidates measured
// before and takes the ones this search measures.
SearchResult search_on_device(runtime::Runtime& rt, const hw::Config& cfg,
                              const SearchConfig& config,
                              std::span<const std::vector<uint8_t>> images,
                              std::span<const uint8_t> labels, const ProgressFn& progress,
                              dist::Comm* ranks, int threads, Memo* memo) {
  validate(config);
  if (images.size() != labels.size()) {
    throw SearchError(
        fmt::format("search: {} validation images but {} labels", images.size(), labels.size()));
  }
  if (images.empty()) throw SearchError("search: no validation images");
  dist::Comm self;
  dist::Comm& comm = ranks ? *ranks : self;
  const auto shards = image_shards(images.size(), config);
  const auto rank = static_cast<size_t>(comm.rank()), nranks = static_cast<size_t>(comm.size());
  // With a cycle limit the searcher's own cycle model has every candidate's cycles already.
  const bool want_cycles = !config.constraints.max_cycles;
  // Each generation's new candidates as fused batches (split where the hardware tables would
  // overflow), each on the validation images' shards, shard k on rank k mod N and there on one of
  // the threads; their cycles alone, candidate i on rank i mod N; all summed over the ranks.
  BatchEval eval = [&](const std::vector<spec::Candidate>& batch) {
    BatchOutcome out;
    std::vector<spec::Candidate> fresh;
    for (const auto& c : batch) {
      if (!memo || !memo->contains(c)) fresh.push_back(c);
    }
    out.reused = batch.size() - fresh.size();
    const auto pieces = split_batch(rt.supernet().net, rt.config(), fresh);
    std::vector<std::pair<size_t, size_t>> runs;  // (piece, shard) of this rank
    for (size_t p = 0; p < pieces.size(); ++p) {
      for (size_t k = rank; k < shards.size(); k += nranks) runs.emplace_back(p, k);
    }
    std::vector<size_t> mine;  // this rank's share of the new candidates' cycles
    for (size_t i = rank; want_cycles && i < fresh.size(); i += nranks) mine.push_back(i);
    std::vector<runtime::FusedResult> results(runs.size());
    // per piece: a correct count per candidate, then cycles, MACs and the fused nodes (of shard
    // 0's run); then each new candidate's cycles
    std::vector<size_t> at;  // where each piece's sums start
    size_t tail = 0;
    for (const auto& piece : pieces) at.push_back(tail), tail += piece.size() + 3;
    std::vector<uint64_t> sum(tail + fresh.size(), 0);
    const size_t workers = std::max<size_t>(
        1, std::min(static_cast<size_t>(std::max(threads, 1)), std::max(runs.size(), mine.size())));
    compile::BatchOptions opt;
    opt.mini_batch = config.mini_batch;
    parallel_for(workers, static_cast<int>(workers), [&](size_t t) {
      std::optional<runtime::Runtime> copy;
      runtime::Runtime& dev = workers == 1 ? rt : copy.emplace(rt);
      for (size_t j = t; j < runs.size(); j += workers) {
        throw_if_interrupted("the search");
        const auto [b, e] = shards[runs[j].second];
        results[j] = dev.evaluate_fused(pieces[runs[j].first], 0, images.subspan(b, e - b),
                                        labels.subspan(b, e - b), opt);
      }
      CycleModel model(rt.supernet(), cfg);
      for (size_t j = t; j < mine.size(); j += workers) {
        throw_if_interrupted("the search");
        sum[tail + mine[j]] = model.cycles(fresh[mine[j]]);
      }
    });
    for (size_t j = 0; j < runs.size(); ++j) {
      const auto& piece = pieces[runs[j].first];
      const runtime::FusedResult& r = results[j];
      const size_t n = piece.size(), o = at[runs[j].first];
      if (r.candidates != piece || r.correct.size() != n) {
        throw std::runtime_error(
            fmt::format("{} backend: the batch of {} candidates came back as {} candidates",
                        rt.backend(), n, r.candidates.size()));
      }
      for (size_t i = 0; i < n; ++i) sum[o + i] += r.correct[i];
      sum[o + n] += r.cycles;
      sum[o + n + 1] += r.macs;
      if (runs[j].second == 0) sum[o + n + 2] = r.nodes.size();
    }
    comm.sum(sum);
    Memo now;  // this generation's measurements
    for (size_t p = 0; p < pieces.size(); ++p) {
      const size_t n = pieces[p].size(), o = at[p];
      ++out.batches;
      out.cycles += sum[o + n];
      out.macs += sum[o + n + 1];
      out.nodes += sum[o + n + 2];
      for (size_t i = 0; i < n; ++i) now[pieces[p][i]].correct = sum[o + i];
    }
    for (size_t i = 0; i < fresh.size(); ++i) now[fresh[i]].cycles = sum[tail + i];
    for (const auto& c : batch) {
      const auto it = now.find(c);
      const Known k = it != now.end() ? it->second : memo->at(c);
      out.correct.push_back(k.correct);
      out.score.push_back(static_cast<double>(k.correct) / static_cast<double>(images.size()));
      if (want_cycles) out.cycles_each.push_back(k.cycles);
    }
    if (memo) memo->merge(now);
    return out;
  };
  Searcher s(rt.supernet().net, &rt.supernet(), cfg, config, std::move(eval), images.size(),
             progress, &comm);
  return s.run(rt.backend(), cfg);
}

}  // namespace

SearchResult run_search(runtime::Runtime& rt, const hw::Config& cfg, const SearchConfig& config,
                        std::span<const std::vector<uint8_t>> images,
                        std::span<const uint8_t> labels, const ProgressFn& progress,
                        dist::Comm* ranks) {
  return search_on_device(rt, cfg, config, images, labels, progress, ranks, 1, nullptr);
}

std::vector<SearchResult> run_searches(runtime::Runtime& rt, const hw::Config& cfg,
                                       const SearchConfig& config,
                                       std::span<const Strategy> strategies,
                                       std::span<const std::vector<uint8_t>> images,
                                       std::span<const uint8_t> labels, const ProgressFn& progress,
                                       int threads, dist::Comm* ranks) {
  Memo memo;
  std::vector<SearchResult> out;
  for (const Strategy st : strategies) {
    SearchConfig c = config;
    c.strategy = st;
    out.push_back(search_on_device(rt, cfg, c, images, labels, progress, ranks, threads, &memo));
  }
  return out;
}

SearchResult run_search_fitness(const spec::Supernet& net, const SearchConfig& config,
                                const FitnessFn& fitness, const ProgressFn& progress) {
  validate(config);
  if (config.constraints.max_cycles) {
    throw SearchError("--max-cycles needs the accelerator's cycle model (run_search)");
  }
  BatchEval eval = [&](const std::vector<spec::Candidate>& batch) {
    BatchOutcome out;
    out.score = fitness(batch);
    out.batches = 1;
    out.nodes = fusion::fuse(net, batch).nodes.size();
    return out;
  };
  Searcher s(net, nullptr, hw::kConfigs[0], config, std::move(eval), 0, progress);
  return s.run("fitness", hw::kConfigs[0]);
}

SearchResult run_search_table(const compile::QSupernet& q, const hw::Config& cfg,
                              const SearchConfig& config,
                              const std::map<spec::Candidate, size_t>& correct, size_t val_images,
                              const ProgressFn& progress) {
  validate(config);
  if (val_images == 0) throw SearchError("search: no validation images");
  BatchEval eval = [&](const std::vector<spec::Candidate>& batch) {
    BatchOutcome out;
    for (const auto& c : batch) {
      const auto it = correct.find(c);
      if (it == correct.end()) {
        throw std::out_of_range(
            fmt::format("search table: candidate {} was not measured", spec::format_candidate(c)));
      }
      out.correct.push_back(it->second);
      out.score.push_back(static_cast<double>(it->second) / static_cast<double>(val_images));
    }
    out.batches = 1;
    out.nodes = fusion::fuse(q.net, batch).nodes.size();
    return out;
  };
  Searcher s(q.net, &q, cfg, config, std::move(eval), val_images, progress);
  return s.run("table", cfg);
}

void check_feasible(const compile::QSupernet& q, const hw::Config& cfg,
                    const SearchConfig& config) {
  validate(config);
  const ProgressFn none;  // the searcher keeps a reference
  Searcher s(q.net, &q, cfg, config, {}, 0, none);
  s.check_feasible();
}

std::string progress_line(const Progress& p) {
  return fmt::format("search {}: generation {} ({} of {}): {} evaluated, best val acc {:.2f}% ({}), "
                     "{:.1f} s",
                     strategy_name(p.strategy), p.generation, p.generation + 1, p.generations,
                     p.evaluated, 100.0 * p.best_val_accuracy, p.best_arch, p.elapsed_s);
}

}  // namespace nasa::search
