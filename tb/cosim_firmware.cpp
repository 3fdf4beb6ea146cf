// The `up5k` configuration's firmware (fpga/fw/) on the host model of its controller
// (nasa::mcu::System: the ISS with rtl/nasa_mcu.sv's memory map and timing) against the
// reference model: random layers, mini-batch streams, programs and chains must leave every byte
// of memory, the error code, ERR_INDEX, LAYERS_DONE and the MAC count as the reference does,
// also when descriptors are corrupted.
// (The RTL runs the same firmware in the other cosim suites.) Knob: NASA_FW_LAYERS (default 300).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "nasa/mcu_system.h"
#include "nasa/refmodel.h"
#include "nasa/sim/cosim.h"
#include "nasa/sim/engine_sim.h"
#include "nasa/sim/env.h"
#include "nasa/sim/memcheck.h"
#include "nasa/sim/random_layer.h"

namespace nasa {
namespace {

const hw::Config& mcu_config() {
  for (const auto& c : hw::kConfigs) {
    if (c.mcu) return c;
  }
  throw std::logic_error("no configuration with a controller");
}

struct Outcome {
  std::vector<uint8_t> mem;
  uint32_t err = 0, err_index = 0, layers_done = 0;
  uint64_t macs = 0, cycles = 0, rd_bytes = 0, wr_bytes = 0;
  mcu::ArrayCounts array;
  std::vector<uint64_t> layer_ends;
};

// What the runs covered, printed at the end of each test.
struct Tally {
  uint64_t runs = 0, errors = 0, macs = 0, cycles = 0, undefined = 0;
  mcu::ArrayCounts array;
  void print(const char* what) const {
    fmt::print(
        "{}: {} runs, {} ended in an error, {} MACs in {} cycles ({:.1f} cycles/MAC), {} "
        "layers on the MAC array ({} stems, {} stopped at a bad record){}\n",
        what, runs, errors, macs, cycles, macs ? double(cycles) / double(macs) : 0.0, array.runs,
        array.stems, array.bad_records,
        undefined
            ? fmt::format(", {} with a self-overlapping layer (memory not compared)", undefined)
            : "");
  }
};

// The firmware images and the controllers they run on (fpga/fw/CMakeLists.txt).
enum class Image {
  Dot,    // RV32IM and the dot unit (rtl/nasa_mcu.sv's Array = 0)
  Rv32i,  // RV32I, the bit-serial core and the dot unit
  Array,  // RV32I, the bit-serial core and the MAC array (rtl/nasa_mcu.sv's Array = 1)
};

Outcome run_firmware(const sim::Program& p, const hw::Config& cfg, Image image = Image::Dot) {
  Outcome o;
  o.mem = p.image;  // (and the host page at the top of the address space, not compared)
  o.mem.resize(mcu::memory_bytes(cfg, o.mem.size()), 0);
  mcu::System sys(cfg, o.mem, cycles::default_dram(cfg),
                  image == Image::Dot     ? mcu::firmware()
                  : image == Image::Rv32i ? mcu::firmware_rv32i()
                                          : mcu::firmware_array(),
                  image == Image::Dot ? mcu::Core::Multicycle : mcu::Core::Serial,
                  image == Image::Array ? mcu::Unit::Array : mcu::Unit::Dot);
  const mcu::RunInfo r =
      sys.run_program(p.desc_addr, p.desc_count, p.win_base, p.win_limit, uint64_t{1} << 36);
  EXPECT_TRUE(r.done) << p.name << ": the firmware did not finish";
  o.err = sys.read_csr(static_cast<uint32_t>(hw::Csr::ErrCode));
  o.err_index = sys.read_csr(static_cast<uint32_t>(hw::Csr::ErrIndex));
  o.layers_done = sys.read_csr(static_cast<uint32_t>(hw::Csr::LayersDone));
  o.macs = sys.counter(hw::Counter::Macs);
  o.cycles = r.cycles;
  o.rd_bytes = sys.counter(hw::Counter::DramRdBytes);
  o.wr_bytes = sys.counter(hw::Counter::DramWrBytes);
  o.layer_ends = r.layer_ends;
  o.array = sys.array_counts();
  EXPECT_EQ(r.layer_ends.size(), o.layers_done) << p.name;
  // each completed layer's compute start lies between the layer before's end and its own, its
  // unit's busy cycles between the two
  EXPECT_GE(r.compute_starts.size(), r.layer_ends.size()) << p.name;
  EXPECT_EQ(r.unit_cycles.size(), r.layer_ends.size()) << p.name;
  for (size_t i = 0; i < r.layer_ends.size() && i < r.compute_starts.size(); ++i) {
    EXPECT_LE(r.compute_starts[i], r.layer_ends[i]) << p.name << ": layer " << i;
    if (i < r.unit_cycles.size()) {
      EXPECT_LE(r.unit_cycles[i], r.layer_ends[i] - r.compute_starts[i])
          << p.name << ": layer " << i;
    }
    if (i) {
      EXPECT_GE(r.compute_starts[i], r.layer_ends[i - 1]) << p.name << ": layer " << i;
    }
  }
  EXPECT_EQ(sys.counter(hw::Counter::Cycles), r.cycles) << p.name;
  o.mem.resize(p.image.size());
  return o;
}

// Whether a layer of p that runs (before the reference's failing one) writes over its own
// operands: docs/engine.md leaves the result of such a layer undefined (the engine's depends on
// its tiling), so only the error code, ERR_INDEX and LAYERS_DONE are compared then.
bool self_overlapping(const sim::Program& p, uint32_t layers) {
  for (uint32_t i = 0; i < layers && i < p.desc_count; ++i) {
    const Desc d = read_desc(p.image, p.desc_addr + uint64_t{i} * hw::kDescBytes);
    const Shape s = shape_of(d);
    const auto hit = [&](uint64_t a, uint64_t n) {
      return n != 0 && a < uint64_t{d.out_addr} + s.out_bytes && d.out_addr < a + n;
    };
    // the second input of an Add (H*W*C), a folded residual (Ho*Wo*Cout)
    const uint64_t in2 = d.op == static_cast<uint8_t>(hw::Op::Add) ? s.in_bytes
                         : has_residual(d)                         ? s.out_bytes
                                                                   : 0;
    if (hit(d.in_addr, s.in_bytes) || hit(d.in2_addr, in2) || hit(d.wgt_addr, s.wgt_bytes) ||
        hit(d.prm_addr, s.prm_bytes)) {
      return true;
    }
  }
  return false;
}

void compare(const sim::Program& p, const hw::Config& cfg, const std::string& what, Tally& t,
             Image image = Image::Dot) {
  std::vector<uint8_t> ref_mem = p.image;
  const ref::RunResult ref =
      ref::run(ref_mem, cfg, p.desc_addr, p.desc_count, p.win_base, p.win_limit);
  const Outcome fw = run_firmware(p, cfg, image);
  t.runs++;
  t.array += fw.array;
  t.errors += ref.err != hw::Err::None;
  t.macs += fw.macs;
  t.cycles += fw.cycles;
  EXPECT_EQ(fw.err, static_cast<uint32_t>(ref.err)) << what;
  if (ref.err != hw::Err::None) { EXPECT_EQ(fw.err_index, ref.err_index) << what; }
  EXPECT_EQ(fw.layers_done, ref.layers_done) << what;
  if (ref.err == hw::Err::None) {
    EXPECT_EQ(fw.macs, ref.counters[static_cast<size_t>(hw::Counter::Macs)]) << what;
  }
  if (self_overlapping(p, ref.layers_done)) {
    t.undefined++;
    return;
  }
  std::string descs;
  for (uint32_t i = 0; i < p.desc_count; ++i) {
    descs += "\n  " + sim::describe(read_desc(p.image, p.desc_addr + uint64_t{i} * hw::kDescBytes));
  }
  // (the array stops a layer at a bad record's block of channels, the blocks before it written)
  std::vector<std::pair<uint64_t, uint64_t>> written_past_ref;
  if (image == Image::Array) written_past_ref = sim::bad_record_output(p, cfg, ref);
  sim::expect_same_memory(fw.mem, ref_mem,
                          sim::MemoryCheck(what + ": firmware memory (expected: reference)")
                              .except(std::move(written_past_ref)),
                          fmt::format("(error {} at {}, {} layers done); descriptors:{}", fw.err,
                                      fw.err_index, fw.layers_done, descs));
}

uint64_t count(uint64_t fallback) { return sim::env_number("NASA_FW_LAYERS", fallback); }

sim::RandomLayerOptions small() {
  sim::RandomLayerOptions o;
  o.max_work_cycles = 6000;
  return o;
}

TEST(Firmware, RandomLayersMatchTheReference) {
  const auto& cfg = mcu_config();
  Tally t;
  for (uint64_t i = 0, n = count(300); i < n; ++i) {
    const sim::Program p = sim::random_stream(sim::derive_seed(1, i), cfg, 1 + i % 2, small());
    compare(p, cfg, fmt::format("layer {} ({})", i, p.name), t);
    if (HasFailure()) return;
  }
  t.print("layers and streams");
}

TEST(Firmware, RandomProgramsAndChainsMatchTheReference) {
  const auto& cfg = mcu_config();
  Tally t;
  for (uint64_t i = 0, n = count(300) / 5; i < n; ++i) {
    const uint64_t seed = sim::derive_seed(2, i);
    const sim::Program p =
        i % 2 ? sim::random_chain(seed, cfg, small()) : sim::random_program(seed, cfg, small());
    compare(p, cfg, fmt::format("program {} ({})", i, p.name), t);
    if (HasFailure()) return;
  }
  t.print("programs and chains");
}

// Bad descriptors: random programs with 1-3 bits flipped in their descriptors (opcode, shape,
// kernel, stride, activation, quantization and address fields alike) or a per-channel record's
// shift. The firmware must stop with the reference's error code at the reference's descriptor,
// after the same layers, with the same memory (nothing written by the failing layer; on the
// array image, a layer the array stops at a bad record may have written part of its output).
sim::Program corrupted(uint64_t seed, const hw::Config& cfg) {
  sim::Program p = sim::random_program(seed, cfg, small());
  sim::corrupt(p, seed);
  return p;
}

// A random program (of layers the array takes: `opt`) with a record's shift spoiled: drawn again
// while it has no layer with records (rare), up to a bound.
sim::Program spoiled(uint64_t seed, const hw::Config& cfg, const sim::RandomLayerOptions& opt) {
  for (int tries = 0; tries < 100; ++tries, seed = sim::derive_seed(seed, 1)) {
    sim::Program p = sim::random_program(seed, cfg, opt);
    if (sim::spoil_record(p, seed)) return p;
  }
  throw std::logic_error("spoiled(): 100 random programs in a row without a layer with records");
}

TEST(Firmware, CorruptedDescriptorsStopAsTheReferenceDoes) {
  const auto& cfg = mcu_config();
  Tally t;
  for (uint64_t i = 0, n = count(300); i < n; ++i) {
    const sim::Program p = corrupted(sim::derive_seed(4, i), cfg);
    compare(p, cfg, fmt::format("program {} ({})", i, p.name), t);
    if (HasFailure()) return;
  }
  t.print("corrupted programs");
  EXPECT_GT(t.errors, t.runs / 4) << "most corruptions must be caught";
}

// Shapes at the edges of the firmware's 32-bit size arithmetic (fpga/fw/fw.c shape_of: H x W
// or Cin past InBuf is Oversize before any product can wrap; the products after it are bounded;
// inside(): no addr + size): a program's layer with H, W, Cin, Cout and OutRows drawn from the
// fields' extremes and the bounds around InBuf and KredMax, some with an address near 2^32, on
// both images; the error and everything else as the reference.
TEST(Firmware, EdgeShapesStopAsTheReferenceDoes) {
  const auto& cfg = mcu_config();
  const uint32_t in_buf = cfg.in_buf_bytes, kred = cfg.kred_max;
  const std::vector<uint32_t> sizes = {1,
                                       2,
                                       3,
                                       7,
                                       8,
                                       16,
                                       255,
                                       256,
                                       257,
                                       kred / 9,
                                       kred / 9 + 1,
                                       in_buf / 2,
                                       in_buf - 1,
                                       in_buf,
                                       in_buf + 1,
                                       32767,
                                       32768,
                                       65535};
  Tally t;
  sim::Rng rng(0xED6E);
  const auto pick = [&] {
    return static_cast<uint16_t>(
        std::min<uint32_t>(sizes[rng.uniform(0, sizes.size() - 1)], 0xFFFF));
  };
  for (uint64_t i = 0; i < 600; ++i) {
    sim::Program p = sim::random_program(sim::derive_seed(8, i), cfg, small());
    const auto at = static_cast<uint32_t>(rng.uniform(0, p.desc_count - 1));
    Desc d = p.descs[at];
    d.h = pick();
    d.w = pick();
    d.cin = pick();
    d.cout = rng.chance(0.5) ? d.cin : pick();
    if (rng.chance(0.2)) d.out_rows = pick();
    if (rng.chance(0.3)) {  // an address near the top of the 32-bit space: addr + size wraps
      uint32_t* addrs[] = {&d.in_addr, &d.in2_addr, &d.out_addr, &d.wgt_addr, &d.prm_addr};
      *addrs[rng.uniform(0, 4)] = 0xFFFFFFFFu - static_cast<uint32_t>(rng.uniform(0, 300));
    }
    sim::rewrite_desc(p, at, d);
    compare(p, cfg, fmt::format("program {} ({}), layer {} {}", i, p.name, at, sim::describe(d)), t,
            static_cast<Image>(i % 3));
    if (HasFailure()) return;
  }
  t.print("programs with an edge-shaped layer");
  EXPECT_GT(t.errors, t.runs / 2) << "most edge shapes stop the run";
}

// The same firmware built for the bit-serial core (RV32I: libgcc's multiplies; the build fails on
// a mul* in the image, fpga/fw/nodiv.cmake) on that core's timing: the reference's results.
TEST(FirmwareRv32i, RandomLayersAndCorruptedProgramsMatchTheReference) {
  const auto& cfg = mcu_config();
  Tally t;
  for (uint64_t i = 0, n = count(300); i < n; ++i) {
    const sim::Program p =
        i % 3 == 2 ? corrupted(sim::derive_seed(6, i), cfg)
                   : sim::random_stream(sim::derive_seed(7, i), cfg, 1 + i % 2, small());
    compare(p, cfg, fmt::format("rv32i: {} ({})", i, p.name), t, Image::Rv32i);
    if (HasFailure()) return;
  }
  t.print("rv32i image on the bit-serial core");
  EXPECT_GT(t.errors, 0u) << "some corrupted programs stop with an error";
}

// The image for the controller with the MAC array (rtl/nasa_mcu.sv's Array = 1; the model's
// Unit::Array): random layers, streams, programs, chains, corrupted programs and programs of
// array layers with a bad record's shift, the 1x1 Convs, DwConvs, stems and residual adds the
// array takes on it, the rest in software: the reference's results (a layer stopped at a bad
// record: its output's blocks before that record's may be written).
TEST(FirmwareArray, RandomLayersProgramsAndCorruptionsMatchTheReference) {
  const auto& cfg = mcu_config();
  Tally t;
  sim::RandomLayerOptions any = small(), on_array = small();
  on_array.board_array = true;  // (the other half: any layer, run in software where it must)
  for (uint64_t i = 0, n = count(300); i < n; ++i) {
    const auto& opt = i % 2 ? on_array : any;
    sim::Program p;
    // (a program whose image reaches the host page, which the board keeps, is drawn again)
    for (uint64_t seed = sim::derive_seed(9, i); p.image.empty() || p.image.size() > cfg.mcu_page();
         seed = sim::derive_seed(seed, 1)) {
      p = i % 8 == 0   ? corrupted(seed, cfg)
          : i % 8 == 4 ? spoiled(seed, cfg, on_array)
          : i % 4 == 1 ? sim::random_program(seed, cfg, opt)
          : i % 4 == 2 ? sim::random_chain(seed, cfg, opt)
                       : sim::random_stream(seed, cfg, 1 + i % 3, opt);
    }
    compare(p, cfg, fmt::format("array: {} ({})", i, p.name), t, Image::Array);
    if (HasFailure()) return;
  }
  t.print("array image on the bit-serial core and the MAC array");
  EXPECT_GT(t.errors, 0u) << "some corrupted programs stop with an error";
  EXPECT_GT(t.array.runs, t.runs / 2) << "the array ran too few of the layers to be tested";
  EXPECT_GT(t.array.stems, t.runs / 20) << "the array ran too few stems to be tested";
  EXPECT_GT(t.array.bad_records, t.runs / 40) << "the array stopped at too few bad records";
}

// Packed images (docs/engine.md "Packed images") are the engine's: the controller stops at a
// Conv, DwConv or Fc with Images > 1 with BadPack, as the reference does on this configuration,
// after the layers before it.
TEST(Firmware, PackedImagesStopWithBadPack) {
  const auto& cfg = mcu_config();
  Tally t;
  for (uint64_t i = 0; i < 40; ++i) {
    sim::Program p = sim::random_program(sim::derive_seed(5, i), cfg, small());
    const auto at = static_cast<uint32_t>(p.desc_count - 1);
    Desc d = p.descs[at];
    d.images = static_cast<uint8_t>(2 + i % 7);
    sim::rewrite_desc(p, at, d);
    compare(p, cfg, fmt::format("program {} ({}), last layer packed", i, p.name), t);
    if (HasFailure()) return;
  }
  t.print("programs with a packed last layer");
  EXPECT_EQ(t.errors, t.runs) << "every packed layer stops the run";
}

// The configuration's Verilated controller (rtl/nasa_mcu.sv as the board has it, Array = 1, with
// the array image; its DSPs in fabric) against its host model:
// the same bytes, error code, ERR_INDEX and LAYERS_DONE, every counter equal (Cycles from the
// core's GO read to its FINISH write), and the same cycles between layer completions.
TEST(Firmware, RtlRunsCycleForCycleAsTheModel) {
  const auto& cfg = mcu_config();
  const auto dram = cycles::default_dram(cfg);
  std::unique_ptr<sim::EngineSim> rtl;
  Tally t;
  for (uint64_t i = 0, n = std::max<uint64_t>(4, count(300) / 10); i < n; ++i) {
    const uint64_t seed = sim::derive_seed(3, i);
    const sim::Program p = i % 4 == 3   ? corrupted(sim::derive_seed(4, i), cfg)
                           : i % 4 == 2 ? sim::random_program(seed, cfg, small())
                                        : sim::random_stream(seed, cfg, 1 + i % 2, small());
    const std::string what = fmt::format("program {} ({})", i, p.name);
    const Outcome fw = run_firmware(p, cfg, Image::Array);
    if (!rtl || rtl->memory().size() != p.image.size()) {
      rtl = sim::EngineSim::create(cfg, p.image.size(), dram);
    }
    rtl->load_memory(p.image);
    const sim::RunStatus st =
        rtl->run(p.desc_addr, p.desc_count, p.win_base, p.win_limit, 16 * fw.cycles + 100000);
    ASSERT_TRUE(st.done) << what << ": the RTL did not finish";
    t.runs++;
    t.errors += fw.err != 0;
    t.macs += fw.macs;
    t.cycles += fw.cycles;
    EXPECT_EQ(st.err_code, fw.err) << what;
    EXPECT_EQ(st.err_index, fw.err_index) << what;
    EXPECT_EQ(st.layers_done, fw.layers_done) << what;
    EXPECT_EQ(rtl->counter(hw::Counter::Cycles), fw.cycles) << what;
    EXPECT_EQ(rtl->counter(hw::Counter::Macs), fw.macs) << what;
    EXPECT_EQ(rtl->counter(hw::Counter::DramRdBytes), fw.rd_bytes) << what;
    EXPECT_EQ(rtl->counter(hw::Counter::DramWrBytes), fw.wr_bytes) << what;
    EXPECT_EQ(st.dram_bytes_read, fw.rd_bytes) << what << ": bytes the DRAM model served";
    ASSERT_EQ(st.layer_ends.size(), fw.layer_ends.size()) << what;
    for (size_t k = 1; k < st.layer_ends.size(); ++k) {
      EXPECT_EQ(st.layer_ends[k] - st.layer_ends[0], fw.layer_ends[k] - fw.layer_ends[0])
          << what << ": layer " << k << " completes at another cycle";
    }
    sim::expect_same_memory(rtl->memory(), fw.mem,
                            sim::MemoryCheck(what + ": RTL memory (expected: the firmware model's)"));
    if (HasFailure()) return;
  }
  t.print("RTL runs");
}

// The host page (docs/fpga.md "The host page"): the CSRs the core's port does not serve live in
// the last 4 KB of main memory, which the host can write over its memory port. Whatever it
// writes there, a run's window stops below the page: a WIN_LIMIT written past it (not through
// the CSR semantics, which clamp it) lets no layer write the page; the layer that would stops
// the run with Window, as the reference stops it at the window's real end.
TEST(HostPage, AWindowPastThePageStopsBelowIt) {
  const auto& cfg = mcu_config();
  for (uint64_t i = 0; i < 8; ++i) {
    sim::Program p = sim::random_layer(sim::derive_seed(6, i), cfg, small());
    Desc d = p.descs[0];
    // into the page (its Leaf table, which a program run does not write)
    d.out_addr = cfg.mcu_page() + 4 * hw::mcu::kPLeaf + 8 * static_cast<uint32_t>(i);
    sim::rewrite_desc(p, 0, d);
    std::vector<uint8_t> mem = p.image;
    mem.resize(mcu::memory_bytes(cfg, mem.size()), 0);
    mcu::System sys(cfg, mem, cycles::default_dram(cfg));
    sys.write_csr(static_cast<uint32_t>(hw::Csr::DescAddr), p.desc_addr);
    sys.write_csr(static_cast<uint32_t>(hw::Csr::DescCount), p.desc_count);
    sys.write_csr(static_cast<uint32_t>(hw::Csr::WinBase), 0);
    // WIN_LIMIT = 2^AddrBits, as a raw memory write of its page word
    const uint32_t limit = uint32_t{1} << cfg.addr_bits, at = cfg.mcu_page() + 4 * (0x01C / 4);
    for (int b = 0; b < 4; ++b) mem[at + b] = static_cast<uint8_t>(limit >> (8 * b));
    ASSERT_EQ(static_cast<uint32_t>(hw::Csr::WinLimit), 0x01Cu);
    EXPECT_EQ(sys.read_csr(static_cast<uint32_t>(hw::Csr::WinLimit)), limit);
    const std::vector<uint8_t> page(mem.begin() + cfg.mcu_page(), mem.end());
    sys.write_csr(static_cast<uint32_t>(hw::Csr::Ctrl), hw::kCtrlStart);
    ASSERT_TRUE(sys.run(uint64_t{1} << 32).done) << p.name;
    EXPECT_EQ(sys.read_csr(static_cast<uint32_t>(hw::Csr::ErrCode)),
              static_cast<uint32_t>(hw::Err::Window))
        << p.name;
    // (the reference with the window ending at the page)
    std::vector<uint8_t> ref_mem = p.image;
    ref_mem.resize(cfg.mcu_page(), 0);
    const ref::RunResult ref = ref::run(ref_mem, cfg, p.desc_addr, p.desc_count, 0, cfg.mcu_page());
    EXPECT_EQ(ref.err, hw::Err::Window) << p.name;
    // nothing written in the descriptor's output range
    for (uint32_t a = d.out_addr; a < d.out_addr + 8; ++a) {
      EXPECT_EQ(mem[a], page[a - cfg.mcu_page()]) << p.name << ": page byte " << a;
    }
  }
}

// At power-up the SPRAM holds anything: the firmware clears the page before it writes the
// identification CSRs, so the RW CSRs read 0 as after the engine's reset.
TEST(HostPage, PowerUpContentIsCleared) {
  const auto& cfg = mcu_config();
  std::vector<uint8_t> mem(mcu::memory_bytes(cfg, 0), 0xA5);
  mcu::System sys(cfg, mem, cycles::default_dram(cfg));
  EXPECT_EQ(sys.read_csr(static_cast<uint32_t>(hw::Csr::Magic)), hw::kMagic);
  EXPECT_EQ(sys.read_csr(static_cast<uint32_t>(hw::Csr::HwBatch)), cfg.hw_batch());
  for (const hw::Csr c : {hw::Csr::WinBase, hw::Csr::WinLimit, hw::Csr::DescAddr,
                          hw::Csr::NumLayers, hw::Csr::GenMode, hw::Csr::LayersDone}) {
    EXPECT_EQ(sys.read_csr(static_cast<uint32_t>(c)), 0u) << static_cast<uint32_t>(c);
  }
  // the data below the page is the host's: untouched
  EXPECT_TRUE(
      std::all_of(mem.begin(), mem.begin() + cfg.mcu_page(), [](uint8_t b) { return b == 0xA5; }));
}

// The tables' entry counts are page words the host can overwrite: a TBL_DATA read stays within
// its table whatever they hold (0 past the table, as past the count).
TEST(HostPage, TableReadsStayInTheirTables) {
  const auto& cfg = mcu_config();
  std::vector<uint8_t> mem(mcu::memory_bytes(cfg, 0), 0);
  mcu::System sys(cfg, mem, cycles::default_dram(cfg));
  for (const uint32_t w : {static_cast<uint32_t>(hw::Csr::NodeCount) / 4, hw::mcu::kPLeafCount}) {
    for (int b = 0; b < 4; ++b) mem[cfg.mcu_page() + 4 * w + b] = 0xFF;  // count 2^32 - 1
  }
  for (const hw::Table t : {hw::Table::Node, hw::Table::Correct, hw::Table::Leaf}) {
    for (const uint32_t idx : {cfg.node_cap, 5000u, 0xFFFFFFu}) {
      sys.write_csr(static_cast<uint32_t>(hw::Csr::TblAddr),
                    hw::tbl_addr(static_cast<uint32_t>(t), idx));
      EXPECT_EQ(sys.read_csr(static_cast<uint32_t>(hw::Csr::TblData)), 0u)
          << "table " << static_cast<int>(t) << " index " << idx;
    }
  }
}

// The core's CSR port serves the live CSRs only; the host page's go through memory.
TEST(HostPage, ThePortServesOnlyTheLiveCsrs) {
  const auto& cfg = mcu_config();
  std::vector<uint8_t> mem(mcu::memory_bytes(cfg, 0), 0);
  mcu::System sys(cfg, mem, cycles::default_dram(cfg));
  const auto win = static_cast<uint32_t>(hw::Csr::WinBase);
  sys.write_csr(win, 0x40);
  sys.port_write(win, 0x80);  // (not the port's: nothing)
  EXPECT_EQ(sys.port_read(win), 0u);
  EXPECT_EQ(sys.port_read(static_cast<uint32_t>(hw::Csr::Magic)), 0u);
  EXPECT_EQ(sys.read_csr(win), 0x40u);
  EXPECT_EQ(mem[cfg.mcu_page() + win], 0x40);
  EXPECT_EQ(sys.port_read(static_cast<uint32_t>(hw::Csr::Status)), 0u);  // idle, not done
}

}  // namespace
}  // namespace nasa
