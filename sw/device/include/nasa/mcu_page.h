// The board controller's CSRs as the host sees them (configurations with Mcu = 1; docs/fpga.md
// "The host page"). The board's CSR port serves only the live CSRs: CTRL, STATUS, ERR_CODE and
// the counters Cycles, DramRdBytes and DramWrBytes. Every other CSR is a word of the host page,
// the last hw::mcu::kPageBytes of its main memory (Config::mcu_page()), which the firmware
// reads and writes as memory: the RW CSRs at word addr / 4 as the host wrote them, the
// read-only ones the firmware writes (identification, ERR_INDEX, LAYERS_DONE, NODE_COUNT, Macs),
// the batch tables. McuPage gives every target of that configuration (the board over its UART,
// its Verilated RTL, its cycle-exact model) the CSR semantics of the engine over that page, so
// the host drives all targets through the same CSR map (hw_spec.h NASA_CSRS): WIN_BASE and
// WIN_LIMIT clamped to the address space, TBL_ADDR/TBL_DATA streaming with its bounds, writes
// other than CTRL ignored while a run is busy, unknown addresses reading 0.
#pragma once

#include <cstdint>
#include <functional>

#include "nasa/hw_spec.h"

namespace nasa::device {

class McuPage {
 public:
  // A target's access to main memory words (4-byte aligned byte addresses) and its CSR port.
  struct Port {
    std::function<uint32_t(uint32_t addr)> read_word;
    std::function<void(uint32_t addr, uint32_t value)> write_word;
    std::function<uint32_t(uint32_t addr)> read_csr;
    std::function<void(uint32_t addr, uint32_t value)> write_csr;
  };

  explicit McuPage(const hw::Config& cfg) : cfg_(cfg) {}

  // Whether the board's CSR port serves `addr` itself.
  static bool live(uint32_t addr);
  // The CSR access as on the engine (through `p`). `busy`: whether a run is busy (writes other
  // than CTRL are ignored then).
  void write(const Port& p, uint32_t addr, uint32_t value, bool busy);
  uint32_t read(const Port& p, uint32_t addr);

  // Main memory's byte address of word `k` of the host page.
  uint32_t word_addr(uint32_t k) const { return cfg_.mcu_page() + 4 * k; }

 private:
  const hw::Config& cfg_;
  uint32_t tbl_addr_ = 0;  // TBL_ADDR (the engine's register; here the host keeps it)
};

}  // namespace nasa::device
