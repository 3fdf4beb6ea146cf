// Search (random, evolution, constraints, Pareto) and its reports on the reference backend with a
// tiny supernet: Pareto front on hand-made points, determinism, constraints, impossible
// constraints, no duplicates, valid children, batch splitting and the output files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "nasa/compiler.h"
#include "nasa/desc.h"
#include "nasa/device.h"
#include "nasa/fusion.h"
#include "nasa/report.h"
#include "nasa/runtime.h"
#include "nasa/search.h"
#include "nasa/supernet_weights.h"
#include "ref_runtime.h"
#include "tiny_net.h"

namespace {

using nasa::search::Evaluated;
using nasa::search::SearchConfig;
using nasa::search::SearchResult;
using nasa::search::Strategy;
using nasa::spec::OpKind;
using nasa::spec::OpSpec;

// A chain supernet that simulates fast: 6x6 input, 4 channels, `layers` choice layers with the
// first `k` ops of the pool (skip included from k = 2).
nasa::spec::Supernet tiny_net(int layers, int k) {
  const std::vector<OpSpec> pool = {{OpKind::MBConv, 3, 1}, {OpKind::Skip, 3, 1},
                                    {OpKind::MBConv, 5, 1}, {OpKind::Conv, 3, 1},
                                    {OpKind::MBConv, 3, 3}, {OpKind::Conv, 5, 1}};
  return nasa::testing::tiny_net(layers, std::span(pool).first(static_cast<size_t>(k)));
}

struct Fixture {
  nasa::spec::Supernet net;
  std::vector<std::vector<uint8_t>> images;
  std::vector<uint8_t> labels;
  nasa::runtime::Runtime rt;
  const nasa::hw::Config& cfg = nasa::config_by_name("sim");

  static nasa::runtime::Runtime make(const nasa::spec::Supernet& net, uint64_t seed) {
    return nasa::testing::random_ref_runtime(net, seed);
  }

  explicit Fixture(nasa::spec::Supernet n, size_t n_images = 6, uint64_t seed = 7)
      : net(std::move(n)), rt(make(net, seed)) {
    std::mt19937 rng(static_cast<uint32_t>(seed) + 1);
    for (size_t i = 0; i < n_images; ++i) {
      std::vector<uint8_t> im(static_cast<size_t>(net.in_h) * net.in_w * net.in_c);
      for (auto& v : im) v = static_cast<uint8_t>(rng() % 256);
      images.push_back(im);
      labels.push_back(static_cast<uint8_t>(rng() % static_cast<uint32_t>(net.classes)));
    }
  }

  SearchResult run(const SearchConfig& c) {
    return nasa::search::run_search(rt, cfg, c, images, labels);
  }
};

SearchConfig tiny_config(Strategy s, uint64_t seed = 3) {
  SearchConfig c;
  c.strategy = s;
  c.population = 8;
  c.generations = 3;
  c.topk = 3;
  c.mutations = 4;
  c.crossovers = 4;
  c.mut_prob = 0.3;
  c.seed = seed;
  return c;
}

Evaluated point(double acc, uint64_t cycles) {
  Evaluated e;
  e.val_accuracy = acc;
  e.cycles = cycles;
  return e;
}

TEST(SearchPareto, HandMadePoints) {
  // 0: (0.5, 100) front; 1: (0.4, 150) dominated by 0; 2: (0.7, 200) front;
  // 3: (0.7, 250) dominated by 2; 4: (0.9, 400) front; 5: (0.2, 50) front (cheapest);
  // 6: (0.5, 100) equal to 0, not repeated; 7: (0.9, 500) dominated by 4
  const std::vector<Evaluated> pts = {point(0.5, 100), point(0.4, 150), point(0.7, 200),
                                      point(0.7, 250), point(0.9, 400), point(0.2, 50),
                                      point(0.5, 100), point(0.9, 500)};
  EXPECT_EQ(nasa::search::pareto_front(pts), (std::vector<size_t>{5, 0, 2, 4}));
  EXPECT_TRUE(nasa::search::pareto_front(std::vector<Evaluated>{}).empty());
  // one point dominating all others
  const std::vector<Evaluated> dom = {point(0.3, 10), point(0.9, 5), point(0.1, 7)};
  EXPECT_EQ(nasa::search::pareto_front(dom), (std::vector<size_t>{1}));
}

TEST(SearchPareto, FrontOfARunIsNonDominatedAndComplete) {
  Fixture f(tiny_net(3, 5));
  const auto r = f.run(tiny_config(Strategy::Evolution));
  ASSERT_FALSE(r.pareto.empty());
  const std::set<size_t> front(r.pareto.begin(), r.pareto.end());
  for (size_t i = 0; i < r.evaluated.size(); ++i) {
    bool dominated = false;
    for (size_t j = 0; j < r.evaluated.size(); ++j) {
      const auto &a = r.evaluated[i], &b = r.evaluated[j];
      if (b.val_accuracy >= a.val_accuracy && b.cycles <= a.cycles &&
          (b.val_accuracy > a.val_accuracy || b.cycles < a.cycles)) {
        dominated = true;
      }
    }
    if (dominated) {
      EXPECT_FALSE(front.contains(i)) << i;
    } else if (!front.contains(i)) {
      // left out only as an exact copy of a point on the front
      bool copy = false;
      for (size_t j : r.pareto) {
        copy |= r.evaluated[j].val_accuracy == r.evaluated[i].val_accuracy &&
                r.evaluated[j].cycles == r.evaluated[i].cycles;
      }
      EXPECT_TRUE(copy) << "non-dominated point " << i << " missing from the front";
    }
  }
  ASSERT_TRUE(r.best.has_value());
  // best: highest accuracy, ties by fewer cycles; it is always on the front
  for (const auto& e : r.evaluated) {
    EXPECT_LE(e.val_accuracy, r.evaluated[*r.best].val_accuracy);
    if (e.val_accuracy == r.evaluated[*r.best].val_accuracy) {
      EXPECT_GE(e.cycles, r.evaluated[*r.best].cycles);
    }
  }
  EXPECT_TRUE(front.contains(*r.best));
}

TEST(Search, DeterministicGivenTheSeed) {
  for (Strategy s : {Strategy::Evolution, Strategy::Random}) {
    Fixture f(tiny_net(3, 5));
    const std::vector<SearchResult> a = {f.run(tiny_config(s, 11))};
    const std::vector<SearchResult> b = {f.run(tiny_config(s, 11))};
    const std::vector<SearchResult> c = {f.run(tiny_config(s, 12))};
    const std::string ja = nasa::report::result_json(a).dump(2);
    EXPECT_EQ(ja, nasa::report::result_json(b).dump(2)) << "seed 11";
    EXPECT_NE(ja, nasa::report::result_json(c).dump(2)) << "seeds 11 and 12";
    EXPECT_EQ(nasa::report::markdown(a), nasa::report::markdown(b));
    EXPECT_EQ(nasa::report::pareto_svg(a), nasa::report::pareto_svg(b));
  }
}

TEST(Search, EveryCandidateValidUniqueAndWithinConstraints) {
  Fixture f(tiny_net(4, 6));
  // limits at about the median of random candidates, so some candidates violate each
  const auto sample = nasa::fusion::random_candidates(f.net, 200, 5);
  std::vector<uint64_t> macs, params;
  nasa::search::CycleModel cm(f.rt.supernet(), f.cfg);
  std::vector<uint64_t> cyc;
  for (const auto& c : sample) {
    try {
      nasa::spec::validate_candidate(f.net, c);
    } catch (const nasa::spec::SpecError&) {
      continue;
    }
    macs.push_back(nasa::spec::candidate_macs(f.net, c));
    params.push_back(nasa::spec::candidate_params(f.net, c));
    cyc.push_back(cm.cycles(c));
  }
  for (auto* v : {&macs, &params, &cyc}) std::sort(v->begin(), v->end());
  for (Strategy s : {Strategy::Evolution, Strategy::Random}) {
    SearchConfig c = tiny_config(s, 21);
    c.constraints.max_macs = macs[macs.size() * 3 / 4];
    c.constraints.max_params = params[params.size() * 3 / 4];
    c.constraints.max_cycles = cyc[cyc.size() * 3 / 4];
    const auto r = f.run(c);
    EXPECT_EQ(r.evaluated.size(), c.population + (c.generations - 1) * 8);
    std::set<nasa::spec::Candidate> seen;
    for (const auto& e : r.evaluated) {
      const std::string a = nasa::spec::format_candidate(e.arch);
      EXPECT_NO_THROW(nasa::spec::validate_candidate(f.net, e.arch)) << a;
      EXPECT_TRUE(seen.insert(e.arch).second) << "evaluated twice: " << a;
      EXPECT_LE(e.macs, c.constraints.max_macs) << a;
      EXPECT_LE(e.params, c.constraints.max_params) << a;
      EXPECT_LE(e.cycles, c.constraints.max_cycles) << a;
      EXPECT_EQ(e.macs, nasa::spec::candidate_macs(f.net, e.arch)) << a;
      EXPECT_EQ(e.cycles, cm.cycles(e.arch)) << a;
      EXPECT_DOUBLE_EQ(e.val_accuracy, static_cast<double>(e.correct) / f.images.size()) << a;
    }
    // each generation's PE utilization is its batches' MACs over what the array could do
    ASSERT_EQ(r.generations.size(), c.generations);
    for (const auto& g : r.generations) {
      ASSERT_GT(g.cycles, 0u);
      EXPECT_DOUBLE_EQ(g.pe_utilization, static_cast<double>(g.macs) /
                                             (static_cast<double>(f.cfg.rows) * f.cfg.cols *
                                              static_cast<double>(g.cycles)));
      EXPECT_GT(g.pe_utilization, 0.0);
      EXPECT_LT(g.pe_utilization, 1.0);
    }
  }
}

TEST(Search, FusedAccuracyEqualsEvaluationAlone) {
  Fixture f(tiny_net(3, 5));
  const auto r = f.run(tiny_config(Strategy::Evolution));
  for (size_t i = 0; i < r.evaluated.size(); i += 5) {
    const auto alone = f.rt.evaluate(r.evaluated[i].arch, f.images, f.labels);
    EXPECT_EQ(alone.correct, r.evaluated[i].correct)
        << nasa::spec::format_candidate(r.evaluated[i].arch);
  }
}

TEST(Search, CycleModelEqualsTheBackendOnOneImage) {
  Fixture f(tiny_net(3, 5));
  nasa::search::CycleModel cm(f.rt.supernet(), f.cfg);
  const std::vector<std::vector<uint8_t>> one(f.images.begin(), f.images.begin() + 1);
  const std::vector<uint8_t> label(f.labels.begin(), f.labels.begin() + 1);
  for (const auto& c : nasa::fusion::random_candidates(f.net, 6, 4)) {
    EXPECT_EQ(cm.cycles(c), f.rt.evaluate(c, one, label).cycles) << nasa::spec::format_candidate(c);
  }
}

TEST(Search, ImpossibleConstraintNamesIt) {
  Fixture f(tiny_net(3, 5));
  const auto expect_error = [&](SearchConfig c, const std::string& needle) {
    try {
      f.run(c);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const nasa::search::SearchError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("constraint impossible"), std::string::npos) << m;
      EXPECT_NE(m.find(needle), std::string::npos) << m;
    }
  };
  SearchConfig c = tiny_config(Strategy::Evolution);
  c.constraints.max_macs = 1;
  expect_error(c, "--max-macs 1");
  c = tiny_config(Strategy::Random);
  c.constraints.max_params = 3;
  expect_error(c, "--max-params 3");
  c = tiny_config(Strategy::Evolution);
  c.constraints.max_cycles = 10;
  c.max_tries = 300;
  expect_error(c, "--max-cycles 10");
  // check_feasible finds the same without evaluating anything, and accepts feasible settings
  try {
    nasa::search::check_feasible(f.rt.supernet(), f.cfg, c);
    ADD_FAILURE() << "check_feasible accepted --max-cycles 10";
  } catch (const nasa::search::SearchError& e) {
    EXPECT_NE(std::string(e.what()).find("constraint impossible: --max-cycles 10"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(nasa::search::check_feasible(f.rt.supernet(), f.cfg,
                                               tiny_config(Strategy::Evolution)));
}

TEST(Search, SmallSpaceIsExhaustedWithoutDuplicates) {
  // 2 layers of 3 choices: 9 candidates in all
  Fixture f(tiny_net(2, 3));
  for (Strategy s : {Strategy::Evolution, Strategy::Random}) {
    SearchConfig c = tiny_config(s);
    c.population = 4;
    c.mutations = c.crossovers = 2;
    c.generations = 5;
    c.max_tries = 200;
    const auto r = f.run(c);
    std::set<nasa::spec::Candidate> seen;
    for (const auto& e : r.evaluated) EXPECT_TRUE(seen.insert(e.arch).second);
    EXPECT_EQ(r.evaluated.size(), 9u);
  }
}

TEST(Search, FeasibleCandidatesAreExactlyThoseWithinTheLimits) {
  const auto net = tiny_net(4, 6);
  const auto allowed = nasa::search::allowed_choices(net);
  // brute force over every choice vector
  std::vector<nasa::spec::Candidate> every;
  nasa::spec::Candidate c(net.layers.size());
  std::function<void(size_t)> walk = [&](size_t l) {
    if (l == c.size()) return every.push_back(c);
    for (int k : allowed[l]) c[l] = k, walk(l + 1);
  };
  walk(0);
  std::vector<uint64_t> macs;
  for (const auto& e : every) macs.push_back(nasa::spec::candidate_macs(net, e));
  std::sort(macs.begin(), macs.end());
  for (uint64_t lim : {uint64_t{0}, macs[macs.size() / 3], macs[macs.size() / 2], macs.front()}) {
    std::vector<nasa::spec::Candidate> want;
    for (const auto& e : every) {
      if (!lim || nasa::spec::candidate_macs(net, e) <= lim) want.push_back(e);
    }
    EXPECT_EQ(nasa::search::feasible_candidates(net, lim), want) << lim;
  }
  const uint64_t p_lim = nasa::spec::candidate_cost(net, every[every.size() / 2]).params;
  std::vector<nasa::spec::Candidate> want;
  for (const auto& e : every) {
    if (nasa::spec::candidate_cost(net, e).params <= p_lim) want.push_back(e);
  }
  EXPECT_EQ(nasa::search::feasible_candidates(net, 0, p_lim), want);
  EXPECT_TRUE(nasa::search::feasible_candidates(net, macs.front() - 1).empty());
  EXPECT_THROW(nasa::search::feasible_candidates(net, 0, 0, every.size() - 1),
               nasa::search::SearchError);
}

TEST(Search, TableOfTheFeasibleSpaceDecidesAsTheAccelerator) {
  // every feasible candidate evaluated once as fused batches, then the search on that table
  Fixture f(tiny_net(3, 5));
  const auto all = nasa::search::feasible_candidates(f.net, 0);
  std::map<nasa::spec::Candidate, size_t> table;
  for (const auto& piece : nasa::search::split_batch(f.net, f.cfg, all)) {
    const auto r = f.rt.evaluate_fused(piece, 0, f.images, f.labels);
    for (size_t i = 0; i < piece.size(); ++i) table[piece[i]] = r.correct[i];
  }
  for (Strategy s : {Strategy::Evolution, Strategy::Random}) {
    for (uint64_t seed : {3u}) {
      SearchConfig cfg = tiny_config(s, seed);
      const auto a = f.run(cfg);
      const auto b =
          nasa::search::run_search_table(f.rt.supernet(), f.cfg, cfg, table, f.images.size());
      ASSERT_EQ(a.evaluated.size(), b.evaluated.size());
      for (size_t i = 0; i < a.evaluated.size(); ++i) {
        EXPECT_EQ(a.evaluated[i].arch, b.evaluated[i].arch) << i;
        EXPECT_EQ(a.evaluated[i].correct, b.evaluated[i].correct) << i;
        EXPECT_EQ(a.evaluated[i].val_accuracy, b.evaluated[i].val_accuracy) << i;
        EXPECT_EQ(a.evaluated[i].cycles, b.evaluated[i].cycles) << i;
      }
      EXPECT_EQ(a.best, b.best);
      EXPECT_EQ(a.pareto, b.pareto);
    }
  }
  // a candidate missing from the table is named
  table.erase(table.begin());
  SearchConfig cfg = tiny_config(Strategy::Random);
  cfg.population = all.size();  // draws every feasible candidate, the missing one too
  cfg.generations = 1;
  cfg.max_tries = 100000;
  try {
    nasa::search::run_search_table(f.rt.supernet(), f.cfg, cfg, table, f.images.size());
    ADD_FAILURE() << "expected std::out_of_range";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("was not measured"), std::string::npos) << e.what();
  }
}

TEST(Search, SearchesOneAfterAnotherRunEachCandidateOnce) {
  // run_searches: evolution takes random search's measurements instead of running them again,
  // and decides, evaluates and reports exactly as run_search alone; its counters count only what
  // it ran. Three image shards, so the threads share a generation's runs.
  Fixture f(tiny_net(3, 5));
  const std::array<Strategy, 2> order = {Strategy::Random, Strategy::Evolution};
  SearchConfig c = tiny_config(Strategy::Random);
  c.mini_batch = 1;
  c.shard_batches = 2;
  std::vector<SearchResult> alone;
  for (Strategy s : order) {
    c.strategy = s;
    alone.push_back(f.run(c));
  }
  const auto one = nasa::search::run_searches(f.rt, f.cfg, c, order, f.images, f.labels, {}, 1);
  const auto two = nasa::search::run_searches(f.rt, f.cfg, c, order, f.images, f.labels, {}, 2);
  ASSERT_EQ(one.size(), 2u);
  ASSERT_EQ(two.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    const SearchResult& a = alone[k];
    for (const SearchResult* b : {&one[k], &two[k]}) {
      EXPECT_EQ(b->config.strategy, order[k]);
      ASSERT_EQ(a.evaluated.size(), b->evaluated.size()) << k;
      for (size_t i = 0; i < a.evaluated.size(); ++i) {
        EXPECT_EQ(a.evaluated[i].arch, b->evaluated[i].arch) << k << " " << i;
        EXPECT_EQ(a.evaluated[i].correct, b->evaluated[i].correct) << k << " " << i;
        EXPECT_EQ(a.evaluated[i].val_accuracy, b->evaluated[i].val_accuracy) << k << " " << i;
        EXPECT_EQ(a.evaluated[i].cycles, b->evaluated[i].cycles) << k << " " << i;
        EXPECT_EQ(a.evaluated[i].generation, b->evaluated[i].generation) << k << " " << i;
      }
      EXPECT_EQ(a.best, b->best);
      EXPECT_EQ(a.pareto, b->pareto);
      ASSERT_EQ(a.generations.size(), b->generations.size());
      for (size_t g = 0; g < a.generations.size(); ++g) {
        EXPECT_EQ(a.generations[g].candidates, b->generations[g].candidates);
        EXPECT_EQ(a.generations[g].best_val_accuracy, b->generations[g].best_val_accuracy);
      }
    }
    // the threads change nothing, counters included
    for (size_t g = 0; g < one[k].generations.size(); ++g) {
      const auto &x = one[k].generations[g], &y = two[k].generations[g];
      EXPECT_EQ(x.reused, y.reused);
      EXPECT_EQ(x.batches, y.batches);
      EXPECT_EQ(x.nodes, y.nodes);
      EXPECT_EQ(x.cycles, y.cycles);
      EXPECT_EQ(x.macs, y.macs);
    }
  }
  // random search first: nothing measured before it, its counters those of run_search
  uint64_t rnd_cycles = 0;
  for (size_t g = 0; g < one[0].generations.size(); ++g) {
    EXPECT_EQ(one[0].generations[g].reused, 0u);
    EXPECT_EQ(one[0].generations[g].cycles, alone[0].generations[g].cycles);
    EXPECT_EQ(one[0].generations[g].macs, alone[0].generations[g].macs);
    rnd_cycles += one[0].generations[g].cycles;
  }
  EXPECT_GT(rnd_cycles, 0u);
  // evolution: every candidate random search measured is reused, the others run
  std::set<nasa::spec::Candidate> measured;
  for (const auto& e : one[0].evaluated) measured.insert(e.arch);
  size_t reused = 0, want = 0;
  uint64_t evo_cycles = 0, evo_alone = 0;
  for (const auto& g : one[1].generations) reused += g.reused, evo_cycles += g.cycles;
  for (const auto& g : alone[1].generations) evo_alone += g.cycles;
  for (const auto& e : one[1].evaluated) want += measured.contains(e.arch);
  EXPECT_EQ(reused, want);
  EXPECT_GT(reused, 0u);
  EXPECT_LT(evo_cycles, evo_alone);
  for (const auto& g : one[1].generations) {
    if (g.reused == g.candidates) {
      EXPECT_EQ(g.batches, 0u);
    } else {
      EXPECT_GT(g.cycles, 0u);
    }
  }
}

TEST(Search, BadConfigIsRejected) {
  Fixture f(tiny_net(2, 3));
  SearchConfig c = tiny_config(Strategy::Evolution);
  c.mut_prob = 1.5;
  EXPECT_THROW(f.run(c), nasa::search::SearchError);
  c = tiny_config(Strategy::Evolution);
  c.topk = 0;
  EXPECT_THROW(f.run(c), nasa::search::SearchError);
  EXPECT_THROW(nasa::search::parse_strategy("genetic"), nasa::search::SearchError);
}

TEST(SearchBatch, SplitRespectsNodeTableAndCandidateCap) {
  const auto net = nasa::spec::builtin_space("fmnist-mb");
  const auto batch = nasa::fusion::random_candidates(net, 1500, 9);
  std::vector<nasa::spec::Candidate> valid;
  for (const auto& c : batch) {
    try {
      nasa::spec::validate_candidate(net, c);
      valid.push_back(c);
    } catch (const nasa::spec::SpecError&) {
    }
  }
  // every configuration's own capacities (fpga's tables are smaller: more pieces)
  std::map<std::string_view, size_t> n_pieces;
  for (const nasa::hw::Config& cfg : nasa::hw::kConfigs) {
    const auto pieces = nasa::search::split_batch(net, cfg, valid);
    ASSERT_GT(pieces.size(), 1u) << cfg.name;
    std::vector<nasa::spec::Candidate> joined;
    for (const auto& p : pieces) {
      EXPECT_LE(p.size(), cfg.max_cands) << cfg.name;
      EXPECT_LE(nasa::fusion::fuse(net, p).nodes.size(), cfg.node_cap) << cfg.name;
      joined.insert(joined.end(), p.begin(), p.end());
    }
    EXPECT_EQ(joined, valid) << cfg.name;
    n_pieces[cfg.name] = pieces.size();
  }
  EXPECT_GT(n_pieces["fpga"], n_pieces["sim"]) << "fpga's node table is the smaller one";
}

TEST(SearchReport, FilesAndRefusalToOverwrite) {
  Fixture f(tiny_net(3, 5));
  std::vector<SearchResult> runs = {f.run(tiny_config(Strategy::Random)),
                                    f.run(tiny_config(Strategy::Evolution))};
  const auto j = nasa::report::result_json(runs);
  for (const char* k : {"best", "top", "pareto", "evaluated", "settings", "comparison", "runs"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  EXPECT_EQ(j["settings"]["strategy"], "evolution");
  EXPECT_LE(j["top"].size(), 5u);
  EXPECT_EQ(j["evaluated"].size(), runs[1].evaluated.size());
  const auto md = nasa::report::markdown(runs);
  EXPECT_NE(md.find("Evolution vs random at equal evaluations"), std::string::npos);
  const auto svg = nasa::report::pareto_svg(runs);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("Pareto"), std::string::npos);
  EXPECT_NE(svg.find("best "), std::string::npos);

  const auto dir = std::filesystem::temp_directory_path() /
                   ("nasa_unit_search_" + std::to_string(static_cast<long>(::getpid())));
  std::filesystem::remove_all(dir);
  nasa::report::write_outputs(dir, runs, false);
  for (const char* name : {"result.json", "report.md", "pareto.svg"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / name)) << name;
  }
  EXPECT_THROW(nasa::report::write_outputs(dir, runs, false), std::runtime_error);
  EXPECT_NO_THROW(nasa::report::write_outputs(dir, runs, true));
  std::filesystem::remove_all(dir);
}

}  // namespace
