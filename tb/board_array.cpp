// The board's controller with the MAC array (rtl/nasa_mcu.sv with Array = 1: the bit-serial core
// and rtl/nasa_mcu_array_page.sv, the firmware image nasa_fw_array; the DSPs simulated by Yosys's
// model of SB_MAC16) Verilated, against the board's model with the same image (nasa::mcu::System,
// Unit::Array), and the controller with the dot unit (Array = 0, nasa_fw) against its: random
// layers, streams, programs and chains, three in four of the layers the array takes, corrupted
// programs and programs with a bad record's shift must end with the same error, ERR_INDEX and
// LAYERS_DONE,
// the same memory, MAC count and memory byte counters, in the same cycles, every layer ending in
// the same cycle, with the reference model's error (the model's memory is held to the
// reference's by cosim_firmware's FirmwareArray.*). Knob: NASA_FW_LAYERS (default 300;
// this suite runs a tenth of it, at least 8).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "Vnasa_mcu_array.h"
#include "Vnasa_mcu_dot.h"
#include "nasa/mcu_system.h"
#include "nasa/refmodel.h"
#include "nasa/sim/env.h"
#include "nasa/sim/memcheck.h"
#include "nasa/sim/random_layer.h"
#include "verilated_engine.h"

namespace nasa {
namespace {

// A program drawn from `seed` that leaves the host page alone (drawn again while its image
// reaches it): random layers of any kind, or of the kind the array takes (`on_array`), or a
// corrupted program (1-3 flipped descriptor bits), or one with a record's shift spoiled.
sim::Program draw(uint64_t i, const hw::Config& cfg, bool on_array) {
  sim::RandomLayerOptions opt;
  opt.max_work_cycles = 6000;
  opt.board_array = on_array && i % 4 != 0;
  sim::Program p;
  for (uint64_t seed = sim::derive_seed(11, i); p.image.empty() || p.image.size() > cfg.mcu_page();
       seed = sim::derive_seed(seed, 1)) {
    p = i % 4 == 1   ? sim::random_program(seed, cfg, opt)
        : i % 4 == 2 ? sim::random_chain(seed, cfg, opt)
                     : sim::random_stream(seed, cfg, 1 + i % 3, opt);
    if (i % 8 == 7) sim::corrupt(p, seed);
    if (i % 8 == 3) sim::spoil_record(p, seed);
  }
  return p;
}

// What lockstep() ran: programs, the layers the array ran, the stems among them and those it
// stopped at a bad record.
struct Ran {
  uint64_t programs = 0;
  mcu::ArrayCounts array;
};
// Runs n programs of draw() on the Verilated controller `Model` and on its model (`rom`, `core`,
// `unit`), writing what it ran into `ran` (void: gtest's ASSERTs return).
template <class Model>
void lockstep(std::span<const uint32_t> rom, mcu::Core core, mcu::Unit unit, bool on_array,
              Ran& ran) {
  const auto& cfg = config_by_name("up5k");  // (the board's configuration)
  const auto dram = cycles::default_dram(cfg);
  const uint64_t n = std::max<uint64_t>(8, sim::env_number("NASA_FW_LAYERS", 300) / 10);
  mcu::ArrayCounts array;
  uint64_t errors = 0, cycles = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const sim::Program p = draw(i, cfg, on_array);
    const std::string what = fmt::format("program {} ({})", i, p.name);
    // the model
    std::vector<uint8_t> mem = p.image;
    mem.resize(mcu::memory_bytes(cfg, mem.size()), 0);
    mcu::System sys(cfg, mem, dram, rom, core, unit);
    const mcu::RunInfo r =
        sys.run_program(p.desc_addr, p.desc_count, p.win_base, p.win_limit, uint64_t{1} << 36);
    ASSERT_TRUE(r.done) << what << ": the model did not finish";
    const auto read = [&](hw::Csr c) { return sys.read_csr(static_cast<uint32_t>(c)); };
    const uint32_t err = read(hw::Csr::ErrCode), err_index = read(hw::Csr::ErrIndex),
                   layers_done = read(hw::Csr::LayersDone);
    mem.resize(p.image.size());
    array += sys.array_counts();
    errors += err != 0;
    cycles += r.cycles;
    // the RTL
    sim::detail::VerilatedEngine<Model> rtl(cfg, p.image.size(), dram);
    rtl.load_memory(p.image);
    const sim::RunStatus st =
        rtl.run(p.desc_addr, p.desc_count, p.win_base, p.win_limit, 2 * r.cycles + 100000, 0);
    ASSERT_TRUE(st.done) << what << ": the RTL did not finish";
    EXPECT_EQ(st.err_code, err) << what;
    EXPECT_EQ(st.err_index, err_index) << what;
    EXPECT_EQ(st.layers_done, layers_done) << what;
    EXPECT_EQ(rtl.counter(hw::Counter::Cycles), r.cycles) << what;
    EXPECT_EQ(rtl.counter(hw::Counter::Macs), sys.counter(hw::Counter::Macs)) << what;
    EXPECT_EQ(rtl.counter(hw::Counter::DramRdBytes), sys.counter(hw::Counter::DramRdBytes)) << what;
    EXPECT_EQ(rtl.counter(hw::Counter::DramWrBytes), sys.counter(hw::Counter::DramWrBytes)) << what;
    ASSERT_EQ(st.layer_ends.size(), r.layer_ends.size()) << what;
    for (size_t k = 1; k < st.layer_ends.size(); ++k) {
      EXPECT_EQ(st.layer_ends[k] - st.layer_ends[0], r.layer_ends[k] - r.layer_ends[0])
          << what << ": layer " << k << " completes at another cycle";
    }
    sim::expect_same_memory(rtl.memory(), mem,
                            sim::MemoryCheck(what + ": RTL memory (expected: the model's)"));
    // the reference (where its result is defined: no layer writes over its own operands)
    std::vector<uint8_t> ref_mem = p.image;
    const ref::RunResult ref =
        ref::run(ref_mem, cfg, p.desc_addr, p.desc_count, p.win_base, p.win_limit);
    EXPECT_EQ(err, static_cast<uint32_t>(ref.err)) << what;
    ran = {i + 1, array};
    if (::testing::Test::HasFailure()) return;
  }
  fmt::print(
      "{} programs, {} ended in an error, {} cycles, {} layers on the MAC array ({} stems, {} "
      "stopped at a bad record)\n",
      n, errors, cycles, array.runs, array.stems, array.bad_records);
}

TEST(BoardArray, RtlRunsCycleForCycleAsTheModelAndAsTheReference) {
  Ran r;
  lockstep<Vnasa_mcu_array>(mcu::firmware_array(), mcu::Core::Serial, mcu::Unit::Array, true, r);
  if (HasFailure()) return;
  EXPECT_GT(r.array.runs, r.programs / 2) << "the array ran too few layers to be tested";
  EXPECT_GT(r.array.stems, 0u) << "the array ran no stem";
  EXPECT_GT(r.array.bad_records, 0u) << "the array stopped at no bad record";
}

// The controller with the dot unit (Array = 0, the RV32IM core, nasa_fw) and its model.
TEST(BoardDot, RtlRunsCycleForCycleAsTheModelAndAsTheReference) {
  Ran r;
  lockstep<Vnasa_mcu_dot>(mcu::firmware(), mcu::Core::Multicycle, mcu::Unit::Dot, false, r);
  if (HasFailure()) return;
  EXPECT_EQ(r.array.runs, 0u);
}

}  // namespace
}  // namespace nasa
