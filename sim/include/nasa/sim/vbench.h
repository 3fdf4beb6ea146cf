// The base of the Verilated unit benches (tb/rtlunit_*.cpp): one model with its own
// VerilatedContext, the clock and reset, an optional FST waveform, a seeded random source for
// randomized ready/latency, a byte memory, and the environment knobs the benches share.
//
//   nasa::sim::Bench<Vnasa_fifo> b("fifo", seed);
//   b->in_valid_i = 1;            // the model's ports through ->
//   b.reset(2);                   // rst_ni low for 2 clocks, then high
//   b.tick();                     // one clock: rising edge, then falling edge
//
// Clock: tick() evaluates the rising edge (clk_i = 1), then the falling edge (clk_i = 0), so after
// tick() the registered outputs of the new cycle are visible and inputs set before the next tick()
// are sampled at its rising edge; settle() re-evaluates combinational outputs after an input
// changed. A model without clk_i (a combinational unit) only has settle().
//
// Assertions: the models are verilated with --assert (cmake/NasaVerilate.cmake). The context does
// not abort on $error; every evaluation checks gotError() and throws ModelError naming the cycle
// (the assertion's own message is printed by Verilator on stdout just before). A bench that wants
// the process to stop instead sets context().fatalOnError(true).
//
// Waveforms (environment):
//   NASA_FST=path         every bench of the process writes an FST waveform: the first to `path`,
//                         the n-th (n >= 1) to path with ".n" before the extension.
//   NASA_FST_ON_FAIL=1    every bench records to $NASA_FST_DIR (default: the temp directory) and
//                         keeps the file only when the bench failed (a GoogleTest failure in the
//                         running test, or a ModelError); the path is printed.
// Knobs for random tests: NASA_RTLUNIT_SEED overrides a test's seed, NASA_RTLUNIT_ITERS=N runs N
// times its default iterations (test_seed(), iterations()).
#pragma once

#include <fmt/format.h>
#include <unistd.h>
#include <verilated.h>
#include <verilated_fst_c.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "nasa/sim/env.h"
#include "nasa/sim/fst.h"
#include "nasa/sim/port_bytes.h"
#include "nasa/sim/context.h"
#include "nasa/sim/x_seed.h"

#if __has_include(<gtest/gtest.h>)
#include <gtest/gtest.h>
#define NASA_VBENCH_HAVE_GTEST 1
#endif

namespace nasa::sim {

// The model stopped with an error: an assertion fired ($error), or $stop/$fatal.
class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A random test's seed: NASA_RTLUNIT_SEED when set, else `fallback`; printed with `what` so a
// failure can be rerun with the same seed.
inline uint32_t test_seed(const std::string& what, uint32_t fallback) {
  const auto seed = static_cast<uint32_t>(env_number("NASA_RTLUNIT_SEED", fallback));
  std::printf("%s: seed %u (rerun: NASA_RTLUNIT_SEED=%u)\n", what.c_str(), seed, seed);
  std::fflush(stdout);
  return seed;
}

// A random test's iteration count: its default times NASA_RTLUNIT_ITERS (a multiplier for soak
// runs, default 1), so one knob scales every random test alike.
inline uint64_t iterations(uint64_t default_count) {
  const uint64_t k = env_number("NASA_RTLUNIT_ITERS", 1);
  return default_count * (k == 0 ? 1 : k);
}

// A seeded random source with the draws benches need.
class Random {
 public:
  explicit Random(uint64_t seed) : rng_(seed) {}
  std::mt19937_64& engine() { return rng_; }
  uint64_t operator()() { return rng_(); }
  // Uniform in [lo, hi].
  uint64_t uniform(uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_);
  }
  // True with probability percent/100 (randomized ready: chance(70) is high 70% of cycles).
  bool chance(uint32_t percent) { return uniform(0, 99) < percent; }
  void fill(std::span<uint8_t> bytes) {
    for (auto& b : bytes) b = static_cast<uint8_t>(rng_());
  }

 private:
  std::mt19937_64 rng_;
};

// A byte-addressed memory covering [base, base + size): checked accesses (an address outside is
// an exception naming it, never undefined behaviour), random fill, and the first differences
// against an expected image.
class ByteMemory {
 public:
  ByteMemory(uint64_t base, size_t size) : base_(base), bytes_(size, 0) {}
  uint64_t base() const { return base_; }
  size_t size() const { return bytes_.size(); }
  bool contains(uint64_t addr, size_t n = 1) const {
    return addr >= base_ && addr - base_ <= bytes_.size() && n <= bytes_.size() - (addr - base_);
  }
  uint8_t& at(uint64_t addr) {
    check(addr, 1);
    return bytes_[addr - base_];
  }
  uint8_t at(uint64_t addr) const {
    check(addr, 1);
    return bytes_[addr - base_];
  }
  std::span<uint8_t> span(uint64_t addr, size_t n) {
    check(addr, n);
    return {bytes_.data() + (addr - base_), n};
  }
  // Writes data to [addr, addr + size) where enabled(i) is true for byte i (all by default).
  template <class Enabled>
  void write_if(uint64_t addr, std::span<const uint8_t> data, Enabled enabled) {
    check(addr, data.size());
    for (size_t i = 0; i < data.size(); ++i) {
      if (enabled(i)) bytes_[addr - base_ + i] = data[i];
    }
  }
  void write(uint64_t addr, std::span<const uint8_t> data) {
    write_if(addr, data, [](size_t) { return true; });
  }
  void fill_random(Random& r) { r.fill(bytes_); }
  std::vector<uint8_t>& bytes() { return bytes_; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  void check(uint64_t addr, size_t n) const {
    if (!contains(addr, n)) {
      throw std::out_of_range(fmt::format(
          "access of {} byte(s) at {:#x} outside the bench memory [{:#x}, {:#x})", n, addr, base_,
          base_ + bytes_.size()));
    }
  }
  uint64_t base_;
  std::vector<uint8_t> bytes_;
};

namespace detail {
inline std::atomic<unsigned>& bench_counter() {
  static std::atomic<unsigned> n{0};
  return n;
}
// `path` with ".n" before its extension (n > 0).
inline std::string numbered(const std::string& path, unsigned n) {
  if (n == 0) return path;
  std::filesystem::path p(path);
  const std::string ext = p.extension().string();
  p.replace_extension();
  return p.string() + "." + std::to_string(n) + ext;
}
inline bool current_test_failed() {
#ifdef NASA_VBENCH_HAVE_GTEST
  return ::testing::Test::HasFailure();
#else
  return false;
#endif
}
}  // namespace detail

template <class Model>
class Bench {
 public:
  // `name`: the model's instance name (and the waveform's); `seed`: the bench's random source.
  explicit Bench(const std::string& name = "top", uint64_t seed = 1)
      : name_(name), rng_(seed), ctx_(make_context()) {
    ctx_->fatalOnError(false);
    ctx_->traceEverOn(true);
    apply_x_seed(*ctx_);
    top_ = std::make_unique<Model>(ctx_.get(), name.c_str());
    const unsigned n = detail::bench_counter()++;
    if (const char* p = std::getenv("NASA_FST"); p != nullptr && *p != '\0') {
      trace(detail::numbered(p, n));
    } else if (env_number("NASA_FST_ON_FAIL", 0) != 0) {
      const char* dir = std::getenv("NASA_FST_DIR");
      const std::filesystem::path d = dir != nullptr && *dir != '\0'
                                          ? std::filesystem::path(dir)
                                          : std::filesystem::temp_directory_path();
      trace((d / fmt::format("{}-{}-{}.fst", name, ::getpid(), n)).string());
      keep_only_on_failure_ = true;
    }
    if constexpr (kHasClock) top_->clk_i = 0;
    settle();
  }

  ~Bench() {
    // Verilator 5.006: a model's scopes (its assertions') unregister from the thread's *current*
    // context when the model is destroyed; if that context is gone (another bench's, destroyed
    // before this one), the process deadlocks. Make ours current first.
    make_current(ctx_.get());
    top_->final();
    if (fst_) {
      fst_->close();
      const bool failed = failed_ || detail::current_test_failed();
      if (keep_only_on_failure_ && !failed) {
        std::error_code ec;
        std::filesystem::remove(fst_path_, ec);
      } else if (failed) {
        std::printf("FST waveform of the failing bench '%s': %s\n", name_.c_str(),
                    fst_path_.c_str());
      }
    }
    fst_.reset();
    top_.reset();
    // Leave no dangling current context behind (the default one lives for the whole process).
    make_current(nullptr);
  }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  Model* operator->() { return top_.get(); }
  const Model* operator->() const { return top_.get(); }
  Model& top() { return *top_; }
  const Model& top() const { return *top_; }
  VerilatedContext& context() { return *ctx_; }
  Random& rng() { return rng_; }
  uint64_t cycle() const { return cycle_; }
  const std::string& name() const { return name_; }

  // Re-evaluates the model after inputs changed (no clock edge, no waveform sample).
  void settle() {
    make_current(ctx_.get());
    top_->eval();
    check_error();
  }

  // One clock cycle: the rising edge, then the falling edge; a waveform sample after each.
  void tick() {
    static_assert(kHasClock, "tick() needs a model with clk_i");
    make_current(ctx_.get());
    if constexpr (kHasClock) {
      top_->clk_i = 1;
      top_->eval();
      sample();
      top_->clk_i = 0;
      top_->eval();
      sample();
    }
    ++cycle_;
    check_error();
  }
  void ticks(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) tick();
  }

  // rst_ni low for `low` clocks, then high, then `high` more clocks.
  void reset(int low = 2, int high = 0) {
    static_assert(kHasReset, "reset() needs a model with rst_ni");
    if constexpr (kHasReset) {
      top_->rst_ni = 0;
      settle();
      for (int i = 0; i < low; ++i) tick();
      top_->rst_ni = 1;
      settle();
      for (int i = 0; i < high; ++i) tick();
    }
  }

  // Starts an FST waveform at `path` (replacing one already open); "" stops tracing.
  void trace(const std::string& path) {
    if (fst_) {
      fst_->close();
      fst_.reset();
    }
    fst_path_ = path;
    if (path.empty()) return;
    fst_ = open_fst(*top_, path);
  }
  const std::string& trace_path() const { return fst_path_; }
  // Keeps the waveform (NASA_FST_ON_FAIL) even when no GoogleTest failure is recorded.
  void mark_failed() { failed_ = true; }

 private:
  static constexpr bool kHasClock = requires(Model& m) { m.clk_i; };
  static constexpr bool kHasReset = requires(Model& m) { m.rst_ni; };

  void sample() {
    if (fst_) fst_->dump(ctx_->time());
    ctx_->timeInc(1);
  }
  void check_error() {
    if (ctx_->gotError()) {
      failed_ = true;
      std::fflush(stdout);
      throw ModelError(fmt::format(
          "the Verilated model '{}' stopped with an error (an assertion fired: see the %Error line "
          "above) at cycle {}{}",
          name_, cycle_, fst_ ? fmt::format("; waveform {}", fst_path_) : std::string()));
    }
  }

  std::string name_;
  Random rng_;
  std::unique_ptr<VerilatedContext> ctx_;  // declared before top_: outlives it
  std::unique_ptr<Model> top_;
  std::unique_ptr<VerilatedFstC> fst_;
  std::string fst_path_;
  bool keep_only_on_failure_ = false;
  bool failed_ = false;
  uint64_t cycle_ = 0;
};

}  // namespace nasa::sim
