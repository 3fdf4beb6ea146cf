#include "nasa/sim/cosim.h"

#include <fmt/format.h>
#include <verilated.h>

#define NASA_MEMCHECK_NO_GTEST 1  // the library part only
#include "nasa/sim/memcheck.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string_view>

#include "nasa/memory_image.h"
#include "nasa/refmodel.h"
#include "nasa/sim/env.h"
#include "nasa/sim/random_layer.h"

namespace nasa::sim {
namespace {

Desc desc_at(const Program& p, uint32_t i) {
  return read_desc(p.image, p.desc_addr + uint64_t{i} * hw::kDescBytes);
}

// One case per name of an X-macro list (NASA_ERRORS): value -> its name.
#define NASA_CASE_NAME(n, v, d) \
  case v:                       \
    return #n;

std::string_view err_name(uint32_t e) {
  switch (e) {
    NASA_ERRORS(NASA_CASE_NAME)
    default:
      return "?";
  }
}

#undef NASA_CASE_NAME

// Bound of one valid layer: far above any sane schedule, so only a hang reaches it.
uint64_t layer_bound(const Desc& d, const hw::Config& cfg, const cycles::DramTiming& dram) {
  cycles::Counters c{};
  cycles::add_layer(d, cfg, dram, c);  // where the descriptor sits hardly matters for a bound
  return 20000 + 64 * work_cycles(d, cfg) + 64 * c[static_cast<int>(hw::Counter::Cycles)];
}

// A validation failure must stop the engine within this many cycles of reaching the descriptor.
uint64_t error_bound(const cycles::DramTiming& dram) { return 2000 + 16 * uint64_t{dram.latency}; }

}  // namespace

bool conv_qualifies(const Desc& d, const hw::Config& cfg) {
  if (d.op != static_cast<uint8_t>(hw::Op::Conv)) return false;
  const Shape s = shape_of(d);
  return (uint64_t{s.ho} * s.wo) % cfg.rows == 0 && d.cout % cfg.cols == 0 && s.kred >= 64;
}

uint64_t model_cycles(const Program& p, const hw::Config& cfg, const cycles::DramTiming& dram) {
  std::vector<Desc> descs;
  for (uint32_t i = 0; i < p.desc_count; ++i) descs.push_back(desc_at(p, i));
  return cycles::program(descs, p.desc_addr, cfg, dram)[static_cast<int>(hw::Counter::Cycles)];
}

std::vector<std::pair<uint64_t, uint64_t>> bad_record_output(const Program& p,
                                                             const hw::Config& cfg,
                                                             const ref::RunResult& ref) {
  if (ref.err != hw::Err::BadQuant || ref.err_index >= p.desc_count) return {};
  const Desc d = desc_at(p, ref.err_index);
  if (validate(d, cfg, p.win_base, p.win_limit, p.scratch_base) != hw::Err::None) return {};
  return {{d.out_addr, d.out_addr + shape_of(d).out_span}};  // (packed: every image's tiles)
}

uint64_t timeout_cycles(const Program& p, const hw::Config& cfg, const cycles::DramTiming& dram) {
  uint64_t bound = error_bound(dram);
  for (uint32_t i = 0; i < p.desc_count; ++i) {
    const uint64_t at = p.desc_addr + uint64_t{i} * hw::kDescBytes;
    if (at + hw::kDescBytes > p.image.size()) break;
    const Desc d = desc_at(p, i);
    if (validate(d, cfg, p.win_base, p.win_limit, p.scratch_base) != hw::Err::None) break;
    bound += layer_bound(d, cfg, dram);
  }
  return bound;
}

std::string MemoryDiff::describe(const std::string& what) const {
  if (same()) return "";
  if (size_differs) {
    return fmt::format("{}: {} bytes, expected {}", what, got_size, want_size);
  }
  std::string s = fmt::format("{}: {} byte{} differ{}, first at", what, count, count == 1 ? "" : "s",
                              count == 1 ? "s" : "");
  for (size_t i = 0; i < bytes.size(); ++i) {
    s += fmt::format("{} {:#x} (got {:#04x}, expected {:#04x})", i == 0 ? "" : ",", bytes[i].addr,
                     bytes[i].got, bytes[i].want);
  }
  if (count > bytes.size()) s += ", ...";
  return s;
}

MemoryDiff compare_memory(std::span<const uint8_t> got, std::span<const uint8_t> want,
                          std::span<const std::pair<uint64_t, uint64_t>> exempt, size_t samples) {
  MemoryDiff d;
  d.got_size = got.size();
  d.want_size = want.size();
  if (got.size() != want.size()) {
    d.size_differs = true;
    return d;
  }
  for (uint64_t a = 0; a < got.size(); ++a) {
    if (got[a] == want[a]) continue;
    bool skip = false;
    for (const auto& [lo, hi] : exempt) skip |= a >= lo && a < hi;
    if (skip) continue;
    if (d.count++ == 0) d.first = a;
    if (d.bytes.size() < samples) d.bytes.push_back({a, got[a], want[a]});
  }
  return d;
}

std::string dump_failure_fst(const std::string& tag,
                             const std::function<void(const std::string&)>& rerun) {
  if (!fst_on_fail() || !rerun) return "";
  const std::string path = fst_dump_path(tag);
  try {
    rerun(path);
    return "\n  waveform: " + path;
  } catch (const std::exception& e) {
    return fmt::format("\n  waveform {} incomplete: {}", path, e.what());
  }
}

bool fst_on_fail() {
  const char* v = std::getenv("NASA_FST_ON_FAIL");
  return v != nullptr && std::string_view(v) == "1";
}

std::string fst_dump_path(const std::string& tag) {
  const char* dir = std::getenv("NASA_FST_DIR");
  std::filesystem::path base = dir != nullptr && *dir != '\0'
                                   ? std::filesystem::path(dir)
                                   : std::filesystem::temp_directory_path();
  std::string name = tag;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '_';
  }
  return (base / (name + ".fst")).string();
}


std::string format_failure(const Program& p, const CosimResult& r) {
  std::string s = fmt::format("{} (seed {:#x}, {} descriptor(s) at {:#x}, window [{:#x}, {:#x}){})",
                              p.name, p.seed, p.desc_count, p.desc_addr, p.win_base, p.win_limit,
                              p.scratch_base ? fmt::format(", scratch at {:#x}", p.scratch_base)
                                             : std::string());
  for (uint32_t i = 0;
       i < p.desc_count && p.desc_addr + uint64_t{i + 1} * hw::kDescBytes <= p.image.size(); ++i) {
    s += fmt::format("\n  [{}] {}", i, describe(desc_at(p, i)));
  }
  s += fmt::format("\n  reference: error {} ({}) at {}; RTL: error {} ({}) at {}, {} cycles",
                   r.ref_err, err_name(r.ref_err), r.ref_err_index, r.rtl.err_code,
                   err_name(r.rtl.err_code), r.rtl.err_index, r.rtl.cycles);
  if (r.ref_err == 0 && r.rtl_cycles) {
    s += fmt::format("; cycles RTL {} model {} ({:.2f}%)", r.rtl_cycles, r.model_cycles,
                     r.cycle_error_pct);
  }
  if (!r.failure.empty()) s += "\n  " + r.failure;
  return s;
}

Cosim::Cosim(const hw::Config& cfg, const cycles::DramTiming& dram)
    : cfg_(cfg), dram_(dram), sim_(EngineSim::create(cfg, 0, dram)) {}

// (the Verilated engine makes its own context current while it is destroyed: nasa/sim/vbench.h)
Cosim::~Cosim() = default;

CosimResult Cosim::run(const Program& p, const std::string& fst_path) {
  CosimResult r;
  auto fail = [&](const std::string& why) {
    r.ok = false;
    if (!r.failure.empty()) r.failure += '\n';
    r.failure += why;
  };

  // Reference.
  ref_mem_ = p.image;
  const ref::RunResult ref =
      ref::run(ref_mem_, cfg_, p.desc_addr, p.desc_count, p.win_base, p.win_limit, p.scratch_base);
  r.ref_err = static_cast<uint32_t>(ref.err);
  r.ref_err_index = ref.err_index;
  r.ref_layers_done = ref.layers_done;

  // Bound: every layer before the failing one in full, then a short time to stop.
  r.max_cycles = error_bound(dram_);
  for (uint32_t i = 0; i < p.desc_count; ++i) {
    if (ref.err != hw::Err::None && i >= ref.err_index) {
      const Desc d = desc_at(p, i);
      const bool mid_layer = ref.err == hw::Err::BadQuant &&
                             validate(d, cfg_, p.win_base, p.win_limit, p.scratch_base) ==
                                 hw::Err::None;
      if (mid_layer) r.max_cycles += layer_bound(d, cfg_, dram_);
      break;
    }
    r.max_cycles += layer_bound(desc_at(p, i), cfg_, dram_);
  }

  // RTL.
  // (the on-chip scratch's window starts with the image's bytes, as the reference's memory does,
  // and its bytes are compared with the reference's after the run)
  sim_->load_memory(p.image);
  sim_->load_scratch(p.scratch_base);
  sim_->reset();
  if (!fst_path.empty()) sim_->trace(fst_path);
  r.rtl = sim_->run(p.desc_addr, p.desc_count, p.win_base, p.win_limit, r.max_cycles,
                    p.scratch_base);
  sim_->store_scratch(p.scratch_base);
  r.rtl_counters.resize(hw::kNumCounters);
  for (int c = 0; c < hw::kNumCounters; ++c) {
    r.rtl_counters[c] = sim_->counter(static_cast<hw::Counter>(c));
  }
  if (!fst_path.empty()) sim_->trace("");

  if (r.rtl.timeout) {
    fail(fmt::format("timeout: no done/error within {} cycles (the hardware must never hang)",
                     r.max_cycles));
  }
  if (!r.rtl.drained) {
    fail("memory port still busy after done: read data or requests left in flight");
  }
  const bool rtl_error = (r.rtl.status & hw::kStatusError) != 0;
  const bool rtl_done = (r.rtl.status & hw::kStatusDone) != 0;
  if (!r.rtl.timeout) {
    if (r.rtl.err_code != r.ref_err) {
      fail(fmt::format("error code: RTL {} ({}), reference {} ({})", r.rtl.err_code,
                       err_name(r.rtl.err_code), r.ref_err, err_name(r.ref_err)));
    } else if (ref.err != hw::Err::None && r.rtl.err_index != r.ref_err_index) {
      fail(fmt::format("ERR_INDEX: RTL {}, reference {}", r.rtl.err_index, r.ref_err_index));
    }
    if (ref.err != hw::Err::None ? !rtl_error : (rtl_error || !rtl_done)) {
      fail(fmt::format("STATUS {:#x}: expected {}", r.rtl.status,
                       ref.err != hw::Err::None ? "the error bit" : "done without error"));
    }
    if (r.rtl.layers_done != r.ref_layers_done) {
      fail(fmt::format("LAYERS_DONE: RTL {}, reference {}", r.rtl.layers_done, r.ref_layers_done));
    }
  }

  // Memory, byte for byte. A per-channel BadQuant found mid-layer may leave earlier tiles of that
  // layer's output written: only that range is exempt.
  const MemoryDiff diff = compare_memory(sim_->memory(), ref_mem_, bad_record_output(p, cfg_, ref));
  if (!diff.same()) {
    r.mismatched_bytes = diff.size_differs ? 1 : diff.count;
    r.first_mismatch = diff.first;
    fail(fmt::format("{}; window [{:#x}, {:#x})",
                     diff.describe("memory (got: RTL, expected: reference)"), p.win_base,
                     p.win_limit));
  }
  if (r.rtl.stray_write_bytes || r.rtl.stray_read_beats) {
    fail(
        fmt::format("memory port: {} bytes written and {} beats read outside the window "
                    "[{:#x}, {:#x}), first at {:#x}",
                    r.rtl.stray_write_bytes, r.rtl.stray_read_beats, p.win_base, p.win_limit,
                    r.rtl.first_stray_addr));
  }

  if (r.rtl.protocol_errors) {
    fail(fmt::format("memory port protocol: {} violation(s); first at {}", r.rtl.protocol_errors,
                     r.rtl.first_protocol_error));
  }

  // Counters and performance of runs without error.
  r.rtl_cycles = r.rtl_counters[static_cast<int>(hw::Counter::Cycles)];
  if (ref.err == hw::Err::None && !r.rtl.timeout) {
    auto expect = [&](hw::Counter c, uint64_t want, std::string_view what) {
      const uint64_t got = r.rtl_counters[static_cast<int>(c)];
      if (got != want) {
        fail(fmt::format("counter {}: RTL {}, expected {} ({})", counter_name(c),
                         got, want, what));
      }
    };
    r.macs = ref.counters[static_cast<int>(hw::Counter::Macs)];
    expect(hw::Counter::Macs, r.macs, "reference");
    expect(hw::Counter::DramRdBytes, r.rtl.dram_bytes_read, "DRAM model");
    expect(hw::Counter::DramWrBytes, r.rtl.dram_bytes_written, "DRAM model");
    std::vector<Desc> descs;
    for (uint32_t i = 0; i < p.desc_count; ++i) descs.push_back(desc_at(p, i));
    cycles::DramTiming dram = dram_;
    dram.scratch_base = cfg_.scratch_window(p.scratch_base);
    const cycles::Counters model =
        cycles::program(descs, p.desc_addr, cfg_, dram, &r.model_layer_ends);
    r.model_cycles = model[static_cast<int>(hw::Counter::Cycles)];
    // every other counter (busy, stalls, buffer writes: the energy model's events) as the cycle
    // model counts it (Cycles: the cycle-model error below)
    for (int c = 0; c < hw::kNumCounters; ++c) {
      if (c != static_cast<int>(hw::Counter::Cycles)) {
        expect(static_cast<hw::Counter>(c), model[static_cast<size_t>(c)], "cycle model");
      }
    }
    // every layer completes in the cycle the model says
    if (r.rtl.layer_ends != r.model_layer_ends) {
      std::string got, want;
      for (uint64_t e : r.rtl.layer_ends) got += fmt::format(" {}", e);
      for (uint64_t e : r.model_layer_ends) want += fmt::format(" {}", e);
      fail(fmt::format("layer completion cycles: RTL{}, cycle model{}", got, want));
    }
    const double pes = double{1} * cfg_.rows * cfg_.cols;
    if (r.rtl_cycles == 0) {
      fail("counter Cycles is 0 after a successful run");
    } else {
      const double diff =
          std::abs(static_cast<double>(r.rtl_cycles) - static_cast<double>(r.model_cycles));
      r.cycle_error_pct = 100.0 * diff / static_cast<double>(r.rtl_cycles);
      if (p.desc_count == 1 || p.stream == p.desc_count) {
        const Desc d0 = desc_at(p, 0);
        r.conv_qualifies = conv_qualifies(d0, cfg_);
        const double ideal = static_cast<double>(r.macs / p.desc_count) / pes;
        // a layer alone: the cycle model's replay of it (exact, checked on every single layer)
        r.standalone_efficiency =
            ideal / static_cast<double>(
                        cycles::program(std::span<const Desc>(&d0, 1), p.desc_addr, cfg_,
                                        dram)[static_cast<int>(hw::Counter::Cycles)]);
        r.efficiency = r.standalone_efficiency;
        if (p.desc_count == 1) {
          r.efficiency = ideal / static_cast<double>(r.rtl_cycles);
        } else if (r.rtl.layer_ends.size() == p.desc_count) {
          // the steady state: the mean interval between the completions of images 1 .. n-2,
          // each of which loads while the one before computes and computes while the next loads
          // (the last image's drain has the port to itself; with 2 images, image 1 it is)
          const size_t last = std::max<size_t>(1, p.desc_count - 2);
          r.stream_interval = static_cast<double>(r.rtl.layer_ends[last] - r.rtl.layer_ends[0]) /
                              static_cast<double>(last);
          r.efficiency = ideal / r.stream_interval;
        }
      }
    }
  }
  return r;
}

}  // namespace nasa::sim
