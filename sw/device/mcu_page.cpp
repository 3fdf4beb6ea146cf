#include "nasa/mcu_page.h"

#include <algorithm>

namespace nasa::device {
namespace {

using hw::Csr;
using namespace hw::mcu;  // the host page's layout (hw_spec.h NASA_MCU_MAP)

constexpr uint32_t a(Csr c) { return static_cast<uint32_t>(c); }

constexpr uint32_t counter_addr(hw::Counter c) {
  return a(Csr::CounterBase) + 8 * static_cast<uint32_t>(c);
}

// The RW CSRs: the host's writes land in their page words.
bool rw_csr(uint32_t addr) {
  if (addr % 4 != 0) return false;
  return addr == a(Csr::DescAddr) || addr == a(Csr::DescCount) || addr == a(Csr::WinBase) ||
         addr == a(Csr::WinLimit) || addr == a(Csr::ScratchStride) ||
         (addr >= a(Csr::NumLayers) && addr <= a(Csr::ParentCount));
}

// The page word of a writable table's entry at TBL_ADDR, or -1 (out of its table).
int64_t table_word(const hw::Config& cfg, uint32_t tbl_addr) {
  const uint32_t idx = hw::tbl_index(tbl_addr);
  const auto at = [idx](uint32_t base, bool ok) { return ok ? int64_t{base} + idx : int64_t{-1}; };
  switch (static_cast<hw::Table>(hw::tbl_table(tbl_addr))) {
    case hw::Table::OpTab:
      return at(kPOpTab, idx < cfg.max_layers * cfg.max_choices);
    case hw::Table::LayerK:
      return at(kPLayerK, idx < cfg.max_layers);
    case hw::Table::ArenaAddr:
      return at(kPArenaAddr, idx <= cfg.max_layers);
    case hw::Table::ArenaStride:
      return at(kPArenaStride, idx <= cfg.max_layers);
    default:
      return -1;
  }
}

}  // namespace

bool McuPage::live(uint32_t addr) {
  return addr == a(Csr::Ctrl) || addr == a(Csr::Status) || addr == a(Csr::ErrCode) ||
         addr == counter_addr(hw::Counter::Cycles) ||
         addr == counter_addr(hw::Counter::Cycles) + 4 ||
         addr == counter_addr(hw::Counter::DramRdBytes) ||
         addr == counter_addr(hw::Counter::DramRdBytes) + 4 ||
         addr == counter_addr(hw::Counter::DramWrBytes) ||
         addr == counter_addr(hw::Counter::DramWrBytes) + 4;
}

void McuPage::write(const Port& p, uint32_t addr, uint32_t value, bool busy) {
  if (live(addr)) {
    p.write_csr(addr, value);
    return;
  }
  if (busy) return;
  if (rw_csr(addr)) {
    const bool win = addr == a(Csr::WinBase) || addr == a(Csr::WinLimit);
    p.write_word(word_addr(addr / 4), win ? cfg_.clamp_window(value) : value);
  } else if (addr == a(Csr::TblAddr)) {
    tbl_addr_ = value;
  } else if (addr == a(Csr::TblData)) {
    if (const int64_t w = table_word(cfg_, tbl_addr_); w >= 0) {
      const bool k = hw::tbl_table(tbl_addr_) == static_cast<uint32_t>(hw::Table::LayerK);
      p.write_word(word_addr(static_cast<uint32_t>(w)), k ? value & 0xFF : value);
    }
    tbl_addr_ = hw::tbl_next(tbl_addr_);
  }
}

uint32_t McuPage::read(const Port& p, uint32_t addr) {
  if (live(addr)) return p.read_csr(addr);
  if (addr == a(Csr::TblAddr)) return tbl_addr_;
  if (addr == a(Csr::TblData)) {
    const uint32_t idx = hw::tbl_index(tbl_addr_);
    // (the entries the firmware wrote, by its count, within the table: the page is memory)
    const auto bounded = [&](uint32_t count_word, uint32_t cap, uint32_t base) {
      const uint32_t n = std::min(p.read_word(word_addr(count_word)), cap);
      return idx < n ? p.read_word(word_addr(base + idx)) : 0u;
    };
    uint32_t v = 0;
    switch (static_cast<hw::Table>(hw::tbl_table(tbl_addr_))) {
      case hw::Table::Node:
        v = bounded(a(Csr::NodeCount) / 4, cfg_.node_cap, kPNode);
        break;
      case hw::Table::Correct:
        v = bounded(a(Csr::NodeCount) / 4, cfg_.node_cap, kPCorrect);
        break;
      case hw::Table::Leaf:
        v = bounded(kPLeafCount, cfg_.max_cands, kPLeaf) & 0xFFFF;
        break;
      default:
        if (const int64_t w = table_word(cfg_, tbl_addr_); w >= 0) {
          v = p.read_word(word_addr(static_cast<uint32_t>(w)));
        }
        break;
    }
    tbl_addr_ = hw::tbl_next(tbl_addr_);
    return v;
  }
  if (addr == counter_addr(hw::Counter::Macs) || addr == counter_addr(hw::Counter::Macs) + 4) {
    return p.read_word(word_addr(kPMacs + (addr - counter_addr(hw::Counter::Macs)) / 4));
  }
  // below the counters: the page word (what the host and the firmware wrote); above: nothing
  if (addr < a(Csr::CounterBase)) return p.read_word(word_addr(addr / 4));
  return 0;
}

}  // namespace nasa::device
