// rtl/nasa_fifo.sv alone (Width 8, Depth 4): random pushes and pops against a queue model, and
// the protocol assertions shown to fire: a sender that changes or withdraws its data while the
// FIFO is full (valid && !ready) breaks valid/ready, and the model must stop with the assertion's
// message, in a child process that dies (GoogleTest death test) and in-process (ModelError).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <string>

#include "Vnasa_fifo.h"
#include "nasa/sim/vbench.h"

namespace {

using nasa::sim::Bench;
using nasa::sim::ModelError;

constexpr int kDepth = 4;  // the RTL's default

struct Fifo {
  Bench<Vnasa_fifo> b;
  explicit Fifo(uint64_t seed = 1) : b("nasa_fifo", seed) {
    b->flush_i = 0;
    b->in_valid_i = 0;
    b->in_data_i = 0;
    b->out_ready_i = 0;
    b.reset(2);
  }
  // Pushes `data` (it must fit) in one clock.
  void push(uint8_t data) {
    b->in_valid_i = 1;
    b->in_data_i = data;
    b.settle();
    ASSERT_TRUE(b->in_ready_o);
    b.tick();
    b->in_valid_i = 0;
    b.settle();
  }
};

// The power-up state (nasa/sim/x_seed.h): the FIFO's storage has no reset, and an empty FIFO
// shows the word at its read pointer. NASA_X_SEED = 0 powers up all zeros; a seed gives random
// words, so the xseed ctest runs do test other power-up states.
TEST(FifoRtl, PowerUpStateFollowsNasaXSeed) {
  const char* was = std::getenv("NASA_X_SEED");
  const std::string saved = was != nullptr ? was : "";
  auto power_up_words = [](const char* seed) {
    setenv("NASA_X_SEED", seed, 1);
    std::string words;
    for (int i = 0; i < 8; ++i) {
      Fifo f;
      EXPECT_FALSE(f.b->out_valid_o);
      words += static_cast<char>(f.b->out_data_o);
    }
    return words;
  };
  EXPECT_EQ(power_up_words("0"), std::string(8, '\0'));
  const std::string a = power_up_words("7"), b = power_up_words("7"), c = power_up_words("8");
  EXPECT_NE(a, std::string(8, '\0'));
  EXPECT_EQ(a, b);  // (a seed is a power-up state: the run can be repeated)
  EXPECT_NE(a, c);
  if (was != nullptr) {
    setenv("NASA_X_SEED", saved.c_str(), 1);
  } else {
    unsetenv("NASA_X_SEED");
  }
}

TEST(FifoRtl, RandomTrafficMatchesQueue) {
  const uint32_t seed = nasa::sim::test_seed("rtlunit_fifo random traffic", 17);
  Fifo f(seed);
  auto& b = f.b;
  std::deque<uint8_t> model;
  bool offering = false;
  uint8_t offer = 0;
  uint64_t pushed = 0, popped = 0;
  for (uint64_t cyc = 0, n = nasa::sim::iterations(20000); cyc < n; ++cyc) {
    // a well-behaved sender: a new value only after the last one was taken
    if (!offering && b.rng().chance(60)) {
      offering = true;
      offer = static_cast<uint8_t>(b.rng()());
    }
    b->in_valid_i = offering;
    b->in_data_i = offer;
    b->out_ready_i = b.rng().chance(50);
    const bool flush = b.rng().chance(1);
    b->flush_i = flush;
    b.settle();
    ASSERT_EQ(b->count_o, model.size()) << "cycle " << cyc;
    ASSERT_EQ(b->in_ready_o, model.size() < kDepth) << "cycle " << cyc;
    ASSERT_EQ(b->out_valid_o, !model.empty()) << "cycle " << cyc;
    if (!model.empty()) {
      ASSERT_EQ(b->out_data_o, model.front()) << "cycle " << cyc;
    }
    const bool push = offering && b->in_ready_o;
    const bool pop = !model.empty() && b->out_ready_i;
    b.tick();
    if (flush) {
      model.clear();
      offering = false;  // a flush withdraws the offer
      continue;
    }
    if (pop) {
      model.pop_front();
      ++popped;
    }
    if (push) {
      model.push_back(offer);
      offering = false;
      ++pushed;
    }
  }
  EXPECT_GT(pushed, 1000u);
  EXPECT_GT(popped, 1000u);
}

// Fills the FIFO, offers `first` while it is full for a cycle, then offers `second` (or nothing):
// the valid/ready rule says the offer must stay. The cycle after the change the assertion fires.
void break_handshake(Fifo& f, bool withdraw) {
  for (int i = 0; i < kDepth; ++i) f.push(static_cast<uint8_t>(i));
  auto& b = f.b;
  b->in_valid_i = 1;
  b->in_data_i = 0xAA;
  b.settle();
  if (b->in_ready_o) throw std::logic_error("the FIFO is not full after Depth pushes");
  b.tick();  // offered while full: a stall
  if (withdraw) {
    b->in_valid_i = 0;
  } else {
    b->in_data_i = 0x55;  // changed while still stalled
  }
  b.settle();
  b.tick();  // the assertion samples the change at this edge
}

constexpr const char* kStallMessage =
    "nasa_fifo: input data changed or withdrawn while stalled";

// The compliant version of the same sequence: no assertion.
TEST(FifoRtlAssertions, HeldOfferIsQuiet) {
  Fifo f;
  for (int i = 0; i < kDepth; ++i) f.push(static_cast<uint8_t>(i));
  auto& b = f.b;
  b->in_valid_i = 1;
  b->in_data_i = 0xAA;
  for (int i = 0; i < 5; ++i) b.tick();
  b->out_ready_i = 1;  // pop: room again from the next cycle on
  b.tick();
  b->out_ready_i = 0;
  b.settle();
  ASSERT_TRUE(b->in_ready_o);
  b.tick();  // the held offer goes in
  b->in_valid_i = 0;
  b.settle();
  for (int i = 0; i < 5; ++i) b.tick();
  EXPECT_FALSE(b.context().gotError());
  EXPECT_EQ(b->count_o, kDepth);
}

// In a child process, with Verilator's default fatal $error: the simulation stops (abort) and
// the assertion's message is printed. (Verilator prints on stdout; the child sends it to stderr,
// which the death test matches.) The child must stop inside break_handshake, never reach the exit.
void die_of_broken_handshake(bool withdraw) {
  std::fflush(stdout);
  ::dup2(2, 1);
  Fifo f;
  f.b.context().fatalOnError(true);
  break_handshake(f, withdraw);
  std::fprintf(stderr, "still running after the violation\n");
  std::_Exit(0);
}

TEST(FifoRtlAssertionsDeathTest, ChangedDataWhileStalledStopsTheSim) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(die_of_broken_handshake(/*withdraw=*/false),
               std::string(kStallMessage) + "(.|\n)*Verilog \\$stop");
}

TEST(FifoRtlAssertionsDeathTest, WithdrawnOfferWhileStalledStopsTheSim) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(die_of_broken_handshake(/*withdraw=*/true),
               std::string(kStallMessage) + "(.|\n)*Verilog \\$stop");
}

// In process, with the bench's non-fatal context: the tick that samples the violation throws
// ModelError (the bench stops there) and the message is on stdout.
TEST(FifoRtlAssertions, ChangedDataWhileStalledThrowsAtThatCycle) {
  Fifo f;
  const uint64_t before = f.b.cycle();
  testing::internal::CaptureStdout();
  bool threw = false;
  std::string what;
  try {
    break_handshake(f, /*withdraw=*/false);
  } catch (const ModelError& e) {
    threw = true;
    what = e.what();
  }
  const std::string out = testing::internal::GetCapturedStdout();
  ASSERT_TRUE(threw) << "no assertion fired; stdout:\n" << out;
  EXPECT_NE(out.find(kStallMessage), std::string::npos) << out;
  EXPECT_NE(what.find("stopped with an error"), std::string::npos) << what;
  // pushes (kDepth ticks), one stalled cycle, then the violating edge: no tick after it
  EXPECT_EQ(f.b.cycle(), before + kDepth + 2);
  EXPECT_TRUE(f.b.context().gotError());
}

// Verilator 5.006: a model's assertion scopes unregister from the thread's current context when
// the model is destroyed. Two benches whose lifetimes overlap, the later one destroyed first, left
// that pointer dangling and the first bench's destruction deadlocked; the bench base makes its own
// context current first. (A hang here shows as the ctest timeout.)
TEST(FifoRtl, OverlappingBenchesDestroyInAnyOrder) {
  for (int order = 0; order < 2; ++order) {
    auto a = std::make_unique<Fifo>(1);
    auto b = std::make_unique<Fifo>(2);
    a->push(1);
    b->push(2);
    if (order == 0) {
      b.reset();
      a->push(3);  // still simulates, with its own context
      a.reset();
    } else {
      a.reset();
      b->push(4);
      b.reset();
    }
  }
  Fifo c(3);  // and a new one after all that
  c.push(5);
  EXPECT_EQ(c.b->count_o, 1);
}

}  // namespace
