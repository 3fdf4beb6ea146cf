// The host's thread-parallel paths, written to run under ThreadSanitizer (`make sanitize`):
// parallel_for itself, and the patterns `nasa run` uses on it (a search generation's image shards
// and cycle counts on threads, each on its own copy of a Runtime; calibration on threads; a test
// set evaluated in pieces on copies of one Runtime), which must give exactly what the same work
// gives on one thread.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <stdexcept>
#include <vector>

#include "nasa/compiler.h"
#include "nasa/device.h"
#include "nasa/float_eval.h"
#include "nasa/parallel.h"
#include "nasa/runtime.h"
#include "nasa/search.h"
#include "nasa/supernet_weights.h"
#include "ref_runtime.h"
#include "tiny_net.h"

namespace {

using nasa::spec::OpKind;

TEST(ParallelFor, EveryIndexRunsOnceOnAnyThreadCount) {
  for (int threads : {1, 2, 3, 8}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{5}, size_t{64}}) {
      std::vector<std::atomic<int>> hits(n);
      nasa::parallel_for(n, threads, [&](size_t i) { ++hits[i]; });
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1) << threads << " " << n;
    }
  }
}

TEST(ParallelFor, FirstErrorIsRethrownAndLaterIndicesAreSkipped) {
  for (int threads : {1, 2}) {
    std::atomic<size_t> ran{0};
    try {
      nasa::parallel_for(1000, threads, [&](size_t i) {
        ++ran;
        if (i == 3) throw std::runtime_error("piece 3 failed");
      });
      FAIL() << "no error";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "piece 3 failed");
    }
    // on one thread nothing after the failing index starts (on more, the pieces other threads
    // had already taken may still run)
    if (threads == 1) {
      EXPECT_EQ(ran.load(), 4u);
    }
  }
}

struct SmallRun {
  nasa::spec::Supernet net;
  nasa::runtime::Runtime rt;
  std::vector<std::vector<uint8_t>> images;
  std::vector<uint8_t> labels;
  const nasa::hw::Config& cfg = nasa::config_by_name("sim");

  static nasa::spec::Supernet make_net() {
    const std::vector<nasa::spec::OpSpec> pool = {
        {OpKind::MBConv, 3, 1}, {OpKind::Skip, 3, 1}, {OpKind::Conv, 3, 1}};
    return nasa::testing::tiny_net(3, pool);
  }
  static nasa::runtime::Runtime make_rt(const nasa::spec::Supernet& net) {
    return nasa::testing::random_ref_runtime(net, 5);
  }
  SmallRun() : net(make_net()), rt(make_rt(net)) {
    std::mt19937 rng(6);
    for (int i = 0; i < 12; ++i) {
      std::vector<uint8_t> im(static_cast<size_t>(net.in_h) * net.in_w * net.in_c);
      for (auto& v : im) v = static_cast<uint8_t>(rng() % 256);
      images.push_back(im);
      labels.push_back(static_cast<uint8_t>(rng() % static_cast<uint32_t>(net.classes)));
    }
  }
};

nasa::search::SearchConfig small_search(nasa::search::Strategy s) {
  nasa::search::SearchConfig c;
  c.strategy = s;
  c.population = 6;
  c.generations = 2;
  c.topk = 3;
  c.mutations = 3;
  c.crossovers = 3;
  c.seed = 11;
  return c;
}

// `nasa run`: random search, then evolution on random's measurements, each generation's shards
// of images and new candidates' cycles on two threads, each on its own copy of the runtime.
TEST(Parallel, SearchesOnTwoThreadsEqualTheSameSearchesAlone) {
  SmallRun s;
  const std::vector<nasa::search::Strategy> strategies = {nasa::search::Strategy::Random,
                                                          nasa::search::Strategy::Evolution};
  auto c = small_search(strategies[0]);
  c.mini_batch = 2;
  c.shard_batches = 2;  // three shards of four images
  const auto par =
      nasa::search::run_searches(s.rt, s.cfg, c, strategies, s.images, s.labels, {}, 2);
  ASSERT_EQ(par.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    nasa::runtime::Runtime local = s.rt;
    c.strategy = strategies[k];
    const auto seq = nasa::search::run_search(local, s.cfg, c, s.images, s.labels);
    ASSERT_EQ(par[k].evaluated.size(), seq.evaluated.size());
    for (size_t i = 0; i < seq.evaluated.size(); ++i) {
      EXPECT_EQ(par[k].evaluated[i].arch, seq.evaluated[i].arch);
      EXPECT_EQ(par[k].evaluated[i].correct, seq.evaluated[i].correct);
      EXPECT_EQ(par[k].evaluated[i].cycles, seq.evaluated[i].cycles);
    }
  }
}

// Calibration shared by threads: the same scales as on one.
TEST(Parallel, CalibrationOnThreadsEqualsOneThread) {
  SmallRun s;
  const auto w = nasa::weights::random_weights(s.net, 4);
  std::vector<nasa::floatnet::Tensor> calib;
  std::mt19937 rng(8);
  for (int i = 0; i < 7; ++i) {
    nasa::floatnet::Tensor t;
    t.c = s.net.in_c, t.h = s.net.in_h, t.w = s.net.in_w;
    t.v.resize(static_cast<size_t>(t.c) * t.h * t.w);
    for (auto& v : t.v) v = static_cast<float>(rng() % 1000) / 250.0f - 2.0f;
    calib.push_back(t);
  }
  const auto one = nasa::compile::quantize(s.net, w, calib, nullptr, 1);
  for (int threads : {2, 3, 16}) {
    const auto many = nasa::compile::quantize(s.net, w, calib, nullptr, threads);
    EXPECT_EQ(many.scale, one.scale) << threads;
    EXPECT_EQ(many.logit_scale, one.logit_scale) << threads;
    ASSERT_EQ(many.ops.size(), one.ops.size());
    for (size_t l = 0; l < one.ops.size(); ++l) {
      for (size_t c = 0; c < one.ops[l].size(); ++c) {
        for (size_t k = 0; k < one.ops[l][c].convs.size(); ++k) {
          EXPECT_EQ(many.ops[l][c].convs[k].out_scale, one.ops[l][c].convs[k].out_scale)
              << threads << " layer " << l << " choice " << c << " conv " << k;
        }
      }
    }
  }
}

// `nasa run`: a test set in pieces, each on a copy of the runtime, fused and alone.
TEST(Parallel, PiecesOnRuntimeCopiesAddUpToTheWholeRun) {
  SmallRun s;
  const std::vector<nasa::spec::Candidate> cands = {{0, 1, 2}, {0, 1, 0}, {2, 2, 1}};
  const size_t pieces = 3, per = s.images.size() / pieces;
  std::vector<std::vector<size_t>> fused(pieces);
  std::vector<nasa::runtime::EvalResult> alone(pieces);
  nasa::parallel_for(pieces, 2, [&](size_t k) {
    nasa::runtime::Runtime local = s.rt;
    const auto imgs = std::span(s.images).subspan(k * per, per);
    const auto labels = std::span(s.labels).subspan(k * per, per);
    fused[k] = local.evaluate_fused(cands, 0, imgs, labels, {}).correct;
    alone[k] = local.evaluate(cands[0], imgs, labels);
  });
  nasa::runtime::Runtime whole = s.rt;
  const auto all_fused = whole.evaluate_fused(cands, 0, s.images, s.labels, {}).correct;
  const auto all_alone = whole.evaluate(cands[0], s.images, s.labels);
  std::vector<int8_t> logits;
  size_t correct = 0;
  for (size_t k = 0; k < pieces; ++k) {
    ASSERT_EQ(fused[k].size(), cands.size());
    logits.insert(logits.end(), alone[k].logits.begin(), alone[k].logits.end());
    correct += alone[k].correct;
  }
  for (size_t i = 0; i < cands.size(); ++i) {
    EXPECT_EQ(fused[0][i] + fused[1][i] + fused[2][i], all_fused[i]) << "candidate " << i;
  }
  EXPECT_EQ(logits, all_alone.logits);
  EXPECT_EQ(correct, all_alone.correct);
}

}  // namespace
