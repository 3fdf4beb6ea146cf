// The same programs through the Device interface on the reference model and on the RTL:
// identical memory, outcome and counters (the cycle model is exact).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "nasa/device.h"
#include "nasa/sim/memcheck.h"
#include "nasa/sim/program.h"
#include "nasa/sim/random_layer.h"
#include "nasa/sim/rtl_device.h"

namespace {

using nasa::hw::Counter;

class DeviceParity : public ::testing::TestWithParam<const char*> {};

TEST_P(DeviceParity, RandomLayersMatch) {
  const auto& cfg = nasa::config_by_name(GetParam());
  for (uint64_t i = 0; i < 12; ++i) {
    const uint64_t seed = nasa::sim::derive_seed(77, i);
    SCOPED_TRACE(::testing::Message() << "config " << cfg.name << " seed " << seed);
    // (the board's controller: layers of a few thousand MACs, as tb/board_array.cpp's; its
    // software paths on the bit-serial core take hundreds of cycles a MAC)
    nasa::sim::RandomLayerOptions opt;
    if (cfg.mcu) opt.max_work_cycles = 6000;
    const nasa::sim::Program p = nasa::sim::random_layer(seed, cfg, opt);
    auto ref = nasa::device::make_ref_device(cfg, p.image.size());
    auto rtl = nasa::sim::make_rtl_device(cfg, p.image.size());
    std::vector<nasa::device::WaitResult> res;
    for (auto* d : {ref.get(), rtl.get()}) {
      d->write_memory(0, p.image);
      res.push_back(
          d->run(p.desc_addr, p.desc_count, p.win_base, p.win_limit, 50'000'000, p.scratch_base));
      EXPECT_TRUE(res.back().done) << d->name();
      EXPECT_FALSE(res.back().timeout) << d->name();
    }
    EXPECT_EQ(res[0].err, res[1].err);
    EXPECT_EQ(res[0].layers_done, res[1].layers_done);
    std::vector<uint8_t> a(p.image.size()), b(p.image.size());
    ref->read_memory(0, a);
    rtl->read_memory(0, b);
    nasa::sim::expect_same_memory(
        b, a, nasa::sim::MemoryCheck("RTL device memory (expected: the reference device's)"));
    for (int i = 0; i < nasa::hw::kNumCounters; ++i) {
      const auto c = static_cast<Counter>(i);
      EXPECT_EQ(ref->counter(c), rtl->counter(c)) << "counter " << i;
    }
  }
}

// The identification CSRs are the configuration's row of hw_spec.h on both targets (the host
// sizes batches by HwBatch: the fpga configuration's tables are smaller).
TEST_P(DeviceParity, IdentificationCsrsAreTheConfigsRow) {
  const auto& cfg = nasa::config_by_name(GetParam());
  auto ref = nasa::device::make_ref_device(cfg, 4096);
  auto rtl = nasa::sim::make_rtl_device(cfg, 4096);
  const auto csr = [](nasa::hw::Csr c) { return static_cast<uint32_t>(c); };
  for (auto* d : {ref.get(), rtl.get()}) {
    SCOPED_TRACE(d->name());
    EXPECT_EQ(d->read_csr(csr(nasa::hw::Csr::Magic)), nasa::hw::kMagic);
    EXPECT_EQ(d->read_csr(csr(nasa::hw::Csr::HwShape)), cfg.rows | (cfg.cols << 16));
    EXPECT_EQ(d->read_csr(csr(nasa::hw::Csr::HwInBuf)), cfg.in_buf_bytes);
    EXPECT_EQ(d->read_csr(csr(nasa::hw::Csr::HwBatch)), cfg.hw_batch());
    EXPECT_EQ(d->read_csr(csr(nasa::hw::Csr::HwMem)),
              cfg.mem_bytes | cfg.burst_max << 16 | cfg.addr_bits << 24);
    // window bounds read back clamped to the address space [0, 2^AddrBits) (on the board's
    // controller: less its host page)
    for (const uint32_t v : {0u, 0x1234u, 0x1FFFFu, 0x20000u, 0x20001u, 0x30000u, 0x3FFFFu,
                             0x40000u, 0x80000000u, 0xFFFFFFFFu}) {
      d->write_csr(csr(nasa::hw::Csr::WinBase), v);
      d->write_csr(csr(nasa::hw::Csr::WinLimit), v ^ 1);
      const uint64_t top = cfg.addr_space();
      EXPECT_EQ(d->read_csr(csr(nasa::hw::Csr::WinBase)), std::min<uint64_t>(v, top)) << v;
      EXPECT_EQ(d->read_csr(csr(nasa::hw::Csr::WinLimit)), std::min<uint64_t>(v ^ 1, top)) << v;
    }
    // table writes past the configuration's capacity are dropped and read back as 0
    d->write_csr(csr(nasa::hw::Csr::TblAddr),
                 static_cast<uint32_t>(nasa::hw::Table::LayerK) << 24 | (cfg.max_layers - 1));
    d->write_csr(csr(nasa::hw::Csr::TblData), 5);
    d->write_csr(csr(nasa::hw::Csr::TblData), 6);
    d->write_csr(csr(nasa::hw::Csr::TblAddr),
                 static_cast<uint32_t>(nasa::hw::Table::LayerK) << 24 | (cfg.max_layers - 1));
    EXPECT_EQ(d->read_csr(csr(nasa::hw::Csr::TblData)), 5u);
    EXPECT_EQ(d->read_csr(csr(nasa::hw::Csr::TblData)), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, DeviceParity, ::testing::Values("fpga", "sim", "up5k"));

}  // namespace
