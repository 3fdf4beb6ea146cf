// rtl/nasa_out_writer.sv alone (Cols 16, MemBytes 32, Depth 4) behind a byte memory with random
// write backpressure: rows of 1..16 bytes at any byte address (a row may straddle a word) must
// land byte-exact with nothing else written, as one or two aligned strobed word writes in row
// order; last_o pulses exactly when the final write of a row marked last is accepted (the port
// gives ready only with a write offered: see the RTL's assertion); a row offered
// while the queue is full is held by the sender (valid/ready), and the queue takes rows at the
// offered rate when the port never stalls.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "Vnasa_out_writer.h"
#include "nasa/sim/vbench.h"

namespace {

using nasa::sim::Bench;

constexpr uint32_t kCols = 16, kMemBytes = 32, kMemSize = 1 << 14;

struct Row {
  uint32_t addr = 0, n = 0;
  std::vector<uint8_t> data = std::vector<uint8_t>(kCols);
  bool last = false;
};

class WriterBench {
 public:
  WriterBench(uint64_t seed, uint32_t ready_pct)
      : b_("nasa_out_writer", seed), ready_pct_(ready_pct), mem_(0, kMemSize) {
    mem_.fill_random(b_.rng());
    expect_ = mem_.bytes();
    b_->flush_i = 0;
    b_->row_valid_i = 0;
    b_->wr_ready_i = 0;
    b_.reset(2, 1);
  }
  void add(const Row& r) { rows_.push_back(r); }

  // Runs until every row is written; checks each write and the last_o pulses.
  void run(uint32_t offer_pct) {
    for (uint64_t cyc = 0; cyc < 2'000'000; ++cyc) {
      if (rows_.empty() && !offer_ && inflight_.empty()) break;
      auto& r = b_.rng();
      if (!offer_ && !rows_.empty() && r.chance(offer_pct)) {
        offer_ = rows_.front();
        rows_.pop_front();
      }
      b_->row_valid_i = offer_.has_value();
      if (offer_) {
        b_->row_addr_i = offer_->addr;
        b_->row_n_i = static_cast<uint8_t>(offer_->n);
        nasa::sim::to_port(offer_->data, b_->row_data_i);
        b_->row_last_i = offer_->last;
      }
      // ready only with a write offered: the unit's last_o is not gated by its queue's valid, so a
      // ready without a write would pulse last_o for a stale row (the DMA never does that; an RTL
      // assertion checks it)
      b_.settle();
      b_->wr_ready_i = b_->wr_valid_o && r.chance(ready_pct_);
      b_.settle();
      const bool row_taken = offer_ && b_->row_ready_o;
      if (b_->wr_valid_o && b_->wr_ready_i) accept_write();
      if (b_->last_o) {
        ++lasts_;
        ASSERT_TRUE(last_pending_) << "last_o without a completed last row, cycle " << cyc;
        last_pending_ = false;
      }
      if (row_taken) {
        inflight_.push_back(*offer_);
        offer_.reset();
      }
      b_.tick();
      if (::testing::Test::HasFailure()) return;
    }
    ASSERT_TRUE(rows_.empty() && !offer_ && inflight_.empty()) << "rows left (a hang?)";
    int bad = 0;
    for (uint32_t a = 0; a < kMemSize && bad < 10; ++a) {
      if (mem_.bytes()[a] != expect_[a]) {
        ++bad;
        ADD_FAILURE() << fmt::format("byte {:#x}: {:#04x}, expected {:#04x}", a, mem_.bytes()[a],
                                     expect_[a]);
      }
    }
  }
  uint64_t lasts() const { return lasts_; }
  uint64_t writes() const { return writes_; }
  uint64_t cycles() const { return b_.cycle(); }

 private:
  // A write accepted: it must be the next part of the oldest row not yet fully written.
  void accept_write() {
    ASSERT_FALSE(inflight_.empty()) << "a write with no row queued";
    const Row& row = inflight_.front();
    const uint32_t addr = b_->wr_addr_o;
    const uint32_t strb = b_->wr_strb_o;
    const auto data = nasa::sim::port_bytes(b_->wr_data_o, kMemBytes);
    const uint32_t word0 = row.addr & ~(kMemBytes - 1);
    const uint32_t want_addr = word0 + part_ * kMemBytes;
    ASSERT_EQ(addr, want_addr) << fmt::format("row at {:#x} ({} bytes), part {}", row.addr, row.n,
                                              part_);
    for (uint32_t i = 0; i < kMemBytes; ++i) {
      const uint32_t a = addr + i;
      const bool in_row = a >= row.addr && a < row.addr + row.n;
      ASSERT_EQ(((strb >> i) & 1) != 0, in_row)
          << fmt::format("strobe of byte {:#x} (row at {:#x}, {} bytes)", a, row.addr, row.n);
      if (in_row) {
        ASSERT_EQ(data[i], row.data[a - row.addr]) << fmt::format("byte {:#x}", a);
        mem_.at(a) = data[i];
      }
    }
    ++writes_;
    const bool straddles = (row.addr % kMemBytes) + row.n > kMemBytes;
    if (straddles && part_ == 0) {
      part_ = 1;
      return;
    }
    part_ = 0;
    for (uint32_t i = 0; i < row.n; ++i) expect_[row.addr + i] = row.data[i];
    if (row.last) last_pending_ = true;
    inflight_.pop_front();
  }

  Bench<Vnasa_out_writer> b_;
  uint32_t ready_pct_;
  nasa::sim::ByteMemory mem_;
  std::vector<uint8_t> expect_;
  std::deque<Row> rows_;
  std::optional<Row> offer_;
  std::deque<Row> inflight_;
  uint32_t part_ = 0;
  bool last_pending_ = false;
  uint64_t lasts_ = 0, writes_ = 0;
};

Row random_row(nasa::sim::Random& r) {
  Row row;
  row.n = static_cast<uint32_t>(r.chance(30) ? kCols : r.uniform(1, kCols));
  row.addr = static_cast<uint32_t>(r.uniform(0, kMemSize - 2 * kMemBytes));
  if (r.chance(20)) {  // near the end of a word: straddles unless short
    row.addr = (row.addr & ~(kMemBytes - 1)) + kMemBytes - static_cast<uint32_t>(r.uniform(1, kCols));
  }
  r.fill(row.data);
  row.last = r.chance(10);
  return row;
}

TEST(OutWriterRtl, RandomRowsUnderBackpressure) {
  const uint32_t seed = nasa::sim::test_seed("rtlunit_out_writer random rows", 888);
  nasa::sim::Random r(seed);
  for (uint64_t run = 0, runs = nasa::sim::iterations(8); run < runs; ++run) {
    const auto ready = static_cast<uint32_t>(run == 0 ? 100 : r.uniform(10, 95));
    const auto offer = static_cast<uint32_t>(r.uniform(30, 100));
    SCOPED_TRACE(fmt::format("run {}: ready {}% offer {}%", run, ready, offer));
    WriterBench w(r(), ready);
    uint64_t lasts = 0;
    for (int i = 0; i < 2000; ++i) {
      Row row = random_row(r);
      lasts += row.last;
      w.add(row);
    }
    w.run(offer);
    if (HasFailure()) return;
    EXPECT_EQ(w.lasts(), lasts) << "last_o pulses";
  }
}

// With the port always ready a row that fits one word is written in the cycle after it is
// queued, so rows offered every cycle flow at one per cycle (two cycles for a straddling row).
TEST(OutWriterRtl, FullRateWhenThePortNeverStalls) {
  WriterBench w(3, 100);
  nasa::sim::Random r(4);
  for (int i = 0; i < 1000; ++i) {
    Row row;
    row.n = kCols;
    row.addr = static_cast<uint32_t>(i % 2) * kCols + static_cast<uint32_t>(i / 2) * kMemBytes;
    r.fill(row.data);
    w.add(row);
  }
  w.run(100);
  EXPECT_EQ(w.writes(), 1000u);
  EXPECT_LE(w.cycles(), 1000u + 16) << "rows did not flow at one per cycle";
}

}  // namespace
