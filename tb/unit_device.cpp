// The reference-model Device: CSR map, memory bounds, errors reported through wait().
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "nasa/device.h"
#include "nasa/memory_image.h"

namespace {

using nasa::hw::Csr;

TEST(RefDevice, IdentifiesItselfThroughCsrs) {
  const auto& cfg = nasa::config_by_name("sim");
  auto d = nasa::device::make_ref_device(cfg, 4096);
  EXPECT_EQ(d->read_csr(static_cast<uint32_t>(Csr::Magic)), nasa::hw::kMagic);
  EXPECT_EQ(d->read_csr(static_cast<uint32_t>(Csr::HwShape)), cfg.rows | (cfg.cols << 16));
  EXPECT_EQ(d->read_csr(static_cast<uint32_t>(Csr::HwInBuf)), cfg.in_buf_bytes);
  d->write_csr(static_cast<uint32_t>(Csr::DescAddr), 0x40);
  EXPECT_EQ(d->read_csr(static_cast<uint32_t>(Csr::DescAddr)), 0x40u);
}

TEST(RefDevice, IdentityCheckNamesTheTargetsConfiguration) {
  auto d = nasa::device::make_ref_device(nasa::config_by_name("fpga"), 4096);
  EXPECT_NO_THROW(nasa::device::check_identity(*d, nasa::config_by_name("fpga")));
  try {
    nasa::device::check_identity(*d, nasa::config_by_name("sim"));
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("configuration `fpga` (4x4 PEs"), std::string::npos) << m;
    EXPECT_NE(m.find("set up for `sim`"), std::string::npos) << m;
    EXPECT_NE(m.find("pass --config fpga"), std::string::npos) << m;
  }
}

TEST(RefDevice, MemoryOutsideItsSizeThrows) {
  auto d = nasa::device::make_ref_device(nasa::config_by_name("sim"), 256);
  std::vector<uint8_t> buf(16);
  EXPECT_THROW(d->write_memory(250, buf), std::out_of_range);
  EXPECT_THROW(d->read_memory(1000, buf), std::out_of_range);
  EXPECT_NO_THROW(d->write_memory(240, buf));
}

TEST(RefDevice, EmptyProgramIsAnErrorCode) {
  auto d = nasa::device::make_ref_device(nasa::config_by_name("sim"), 4096);
  const auto w = d->run(0, 0, 0, 4096, 1000);
  EXPECT_TRUE(w.done);
  EXPECT_EQ(w.err, nasa::hw::Err::EmptyProgram);
  const uint32_t st = d->read_csr(static_cast<uint32_t>(Csr::Status));
  EXPECT_TRUE(st & nasa::hw::kStatusError);
  EXPECT_EQ(d->read_csr(static_cast<uint32_t>(Csr::ErrCode)),
            static_cast<uint32_t>(nasa::hw::Err::EmptyProgram));
}

TEST(RefDevice, BadDescriptorStopsWithItsCode) {
  auto d = nasa::device::make_ref_device(nasa::config_by_name("sim"), 4096);
  nasa::Desc bad;
  bad.op = 99;  // unknown opcode
  std::vector<uint8_t> img(4096);
  nasa::write_desc(img, 0x100, bad);
  d->write_memory(0, img);
  const auto w = d->run(0x100, 1, 0, 4096, 1000);
  EXPECT_EQ(w.err, nasa::hw::Err::BadOpcode);
  EXPECT_EQ(w.err_index, 0u);
  EXPECT_EQ(w.layers_done, 0u);
}

TEST(RefDevice, WindowBeyondMemoryThrows) {
  auto d = nasa::device::make_ref_device(nasa::config_by_name("sim"), 4096);
  EXPECT_THROW(d->run(0, 1, 0, 8192, 1000), std::out_of_range);
}

}  // namespace
