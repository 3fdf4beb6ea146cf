// Unit tests of the candidate generator model (nasa/cand_gen.h): the xorshift32 sequence, the
// statistics of the three modes (uniform samples, mutation rate, crossover sources) and the
// argument checks. The RTL is compared with this model in rtlunit_cand_gen.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <stdexcept>
#include <vector>

#include "nasa/cand_gen.h"

#include "thrown_message.h"

namespace nasa::cand_gen {
namespace {

using nasa::testing::expect_invalid;

// Seed 1, worked by hand from x ^= x << 13; x ^= x >> 17; x ^= x << 5:
//   0x1     -> 0x2001     -> 0x2001     -> 0x42021    = 270369
//   0x42021 -> 0x84000021 -> 0x84004221 -> 0x04080601 = 67634689
TEST(Xorshift32, KnownSequenceSeedOne) {
  Xorshift32 x(1);
  const std::array<uint32_t, 5> want = {270369u, 67634689u, 2647435461u, 307599695u, 2398689233u};
  for (uint32_t w : want) EXPECT_EQ(x.next(), w);
}

TEST(Xorshift32, ZeroSeedUsesGoldenRatioState) {
  Xorshift32 zero(0);
  EXPECT_EQ(zero.state(), 0x9E3779B9u);
  Xorshift32 golden(0x9E3779B9u);
  EXPECT_EQ(zero.next(), 0x510C4619u);  // 0x9E3779B9 stepped once
  EXPECT_EQ(golden.next(), 0x510C4619u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(zero.next(), golden.next());
}

TEST(Xorshift32, NeverReachesZero) {
  Xorshift32 x(0xDEADBEEFu);
  for (int i = 0; i < 1'000'000; ++i) ASSERT_NE(x.next(), 0u);
}

TEST(Sample, IsHighWordOfProduct) {
  Xorshift32 a(1), b(1);
  for (uint32_t k : {1u, 2u, 3u, 7u, 16u, 255u}) {
    const uint32_t r = b.next();
    const uint32_t s = sample(a, k);
    EXPECT_EQ(s, static_cast<uint32_t>((uint64_t{r} * k) >> 32));
    EXPECT_LT(s, k);
  }
  // 2647435461 = 0x9DCD_3EC5: * 16 >> 32 is its top nibble, 9.
  Xorshift32 c(1);
  c.next();
  c.next();
  EXPECT_EQ(sample(c, 16), 9u);
}

// Chi-square critical values at p = 0.001 for df = 1..15 degrees of freedom (upper tail; from the
// standard table, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.4). A uniform source exceeds them with
// probability 0.001 per layer; the seed is fixed, so the test is deterministic.
constexpr std::array<double, 16> kChi2Crit001 = {0.0,    10.828, 13.816, 16.266, 18.467, 20.515,
                                                 22.458, 24.322, 26.124, 27.877, 29.588, 31.264,
                                                 32.909, 34.528, 36.123, 37.697};

TEST(Generate, SampleModeIsUniformPerLayer) {
  const std::vector<int> k = {2, 3, 4, 5, 7, 16};
  constexpr size_t kDraws = 60'000;
  const auto cands = generate(Mode::Sample, 12345, 0, k, kDraws, {});
  ASSERT_EQ(cands.size(), kDraws);
  for (size_t i = 0; i < k.size(); ++i) {
    std::vector<double> hist(static_cast<size_t>(k[i]), 0.0);
    for (const auto& c : cands) {
      ASSERT_EQ(c.size(), k.size());
      ASSERT_GE(c[i], 0);
      ASSERT_LT(c[i], k[i]);
      hist[static_cast<size_t>(c[i])] += 1.0;
    }
    const double expect = static_cast<double>(kDraws) / k[i];
    double chi2 = 0.0;
    for (double h : hist) chi2 += (h - expect) * (h - expect) / expect;
    const double bound = kChi2Crit001[static_cast<size_t>(k[i] - 1)];
    std::printf("layer %zu K %d: chi2 %.3f (bound %.3f)\n", i, k[i], chi2, bound);
    EXPECT_LT(chi2, bound) << "layer " << i << " K " << k[i] << " (df " << k[i] - 1 << ")";
  }
}

TEST(Generate, MutationRateMatchesProb) {
  // Parents hold 255, which sample(K) never returns (K <= 16): a layer differs iff it mutated.
  const std::vector<int> k(10, 16);
  const std::vector<spec::Candidate> parents(3, spec::Candidate(10, 255));
  const auto cands = generate(Mode::Mutate, 777, 16384, k, 10'000, parents);
  size_t mutated = 0, total = 0;
  for (const auto& c : cands) {
    for (int v : c) {
      ++total;
      if (v != 255) {
        ++mutated;
        EXPECT_LT(v, 16);
      }
    }
  }
  ASSERT_EQ(total, 100'000u);
  const double rate = static_cast<double>(mutated) / static_cast<double>(total);
  std::printf("mutation rate %.4f over %zu layer draws\n", rate, total);
  EXPECT_NEAR(rate, 0.25, 0.01);
}

TEST(Generate, MutateProbEndsAndParentIndex) {
  const std::vector<int> k = {4, 4, 4};
  const std::vector<spec::Candidate> parents = {{200, 201, 202}, {210, 211, 212}, {220, 221, 222}};
  // prob 0: candidate j is parent j mod P, whatever the draws.
  const auto copy = generate(Mode::Mutate, 9, 0, k, 10, parents);
  for (size_t j = 0; j < copy.size(); ++j) EXPECT_EQ(copy[j], parents[j % 3]) << "j " << j;
  // prob 65536: every layer is resampled (the 17th bit makes "always" reachable).
  const auto all = generate(Mode::Mutate, 9, kProbOne, k, 1000, parents);
  for (const auto& c : all) {
    for (int v : c) EXPECT_LT(v, 4);
  }
  // In between, a mutated layer takes a second draw for sample(K): the sequence spelled out.
  Xorshift32 rng(9);
  const auto some = generate(Mode::Mutate, 9, 30000, k, 50, parents);
  for (size_t j = 0; j < some.size(); ++j) {
    for (size_t i = 0; i < k.size(); ++i) {
      const uint32_t r = rng.next();
      const int want = (r >> 16) < 30000 ? static_cast<int>(sample(rng, 4)) : parents[j % 3][i];
      ASSERT_EQ(some[j][i], want) << "j " << j << " i " << i;
    }
  }
}

TEST(Generate, CrossoverTakesOnlyFromTheTwoParents) {
  const std::vector<int> k(8, 16);
  for (size_t num_parents : {1u, 2u, 3u, 5u, 7u}) {
    std::vector<spec::Candidate> parents;
    for (size_t p = 0; p < num_parents; ++p) {
      spec::Candidate v(8);
      for (size_t i = 0; i < 8; ++i) v[i] = static_cast<int>(p * 16 + i);  // unique per (p, i)
      parents.push_back(v);
    }
    ASSERT_EQ(parents.size(), num_parents);
    const auto cands = generate(Mode::Crossover, 4242, 0, k, 500, parents);
    size_t from_b = 0, total = 0;
    for (size_t j = 0; j < cands.size(); ++j) {
      const size_t a = (2 * j) % parents.size(), b = (2 * j + 1) % parents.size();
      for (size_t i = 0; i < 8; ++i) {
        const int v = cands[j][i];
        ASSERT_TRUE(v == parents[a][i] || v == parents[b][i])
            << "P " << num_parents << " j " << j << " i " << i << " value " << v;
        if (a != b) {
          ++total;
          if (v == parents[b][i]) ++from_b;
        }
      }
    }
    if (total > 0) {
      // Each side with probability 1/2 (r >> 31); 4000 draws, sd ~ 0.008.
      EXPECT_NEAR(static_cast<double>(from_b) / static_cast<double>(total), 0.5, 0.04)
          << "P " << num_parents;
    }
  }
}

TEST(Generate, SameSeedSameCandidates) {
  const std::vector<int> k = {3, 5, 16};
  EXPECT_EQ(generate(Mode::Sample, 0, 0, k, 20, {}),
            generate(Mode::Sample, 0x9E3779B9u, 0, k, 20, {}));
  EXPECT_NE(generate(Mode::Sample, 1, 0, k, 20, {}), generate(Mode::Sample, 2, 0, k, 20, {}));
  EXPECT_TRUE(generate(Mode::Sample, 1, 0, k, 0, {}).empty());
}

TEST(Generate, RejectsBadArguments) {
  const std::vector<int> k = {4, 4};
  const std::vector<spec::Candidate> parents = {{1, 2}};
  expect_invalid([&] { generate(Mode::Mutate, 1, 65537, k, 1, parents); },
                 {"probability", "65537", "65536"});
  expect_invalid([&] { generate(Mode::Mutate, 1, 100, k, 1, {}); }, {"mutate", "parent"});
  expect_invalid([&] { generate(Mode::Crossover, 1, 100, k, 1, {}); }, {"crossover", "parent"});
  const std::vector<spec::Candidate> short_parent = {{1, 2}, {1}};
  expect_invalid([&] { generate(Mode::Crossover, 1, 0, k, 1, short_parent); },
                 {"parent 1", "1 layers", "expected 2"});
  const std::vector<spec::Candidate> big = {{1, 256}};
  expect_invalid([&] { generate(Mode::Mutate, 1, 0, k, 1, big); }, {"parent 0 layer 1", "256"});
  const std::vector<int> k0 = {4, 0};
  expect_invalid([&] { generate(Mode::Sample, 1, 0, k0, 1, {}); }, {"layer 1", "K = 0", "1..255"});
  const std::vector<int> k256 = {256};
  expect_invalid([&] { generate(Mode::Sample, 1, 0, k256, 1, {}); }, {"K = 256"});
  expect_invalid([&] { generate(static_cast<Mode>(0), 1, 0, k, 1, {}); }, {"mode 0"});
  // Parents are ignored (and may be absent) in sample mode.
  EXPECT_NO_THROW(generate(Mode::Sample, 1, 0, k, 1, {}));
}

}  // namespace
}  // namespace nasa::cand_gen
