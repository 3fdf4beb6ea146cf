// rtl/nasa_dma.sv alone (MemBytes 32, BurstMax 8, JobDepth 4, Inflight 8, MaxJob 256) behind a
// byte memory with random request backpressure, random read latency and random gaps between
// response beats. Read jobs of 1..256 bytes at any byte address (every alignment) must come out
// realigned: beat i of a job carries job bytes [32i, 32i+32), in job order, with its tag, index
// and last mark; the bursts must read exactly the words the jobs span, each at most BurstMax
// beats. Strobed writes interleaved with the reads must change exactly their strobed bytes. The
// event outputs count the beats and bytes. Abort in the middle of traffic: no output until the
// DMA is idle again, every started burst completed (the port left clean), and the next jobs exact.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "Vnasa_dma.h"
#include "nasa/sim/bus.h"
#include "nasa/sim/vbench.h"

namespace {

using nasa::sim::Bench;
namespace bus = nasa::sim::bus;

constexpr uint32_t kMemBytes = 32;  // port width (the RTL's default)
constexpr uint32_t kBurstMax = 8;
constexpr uint32_t kMaxJob = 256;
constexpr uint32_t kMemSize = 1 << 16;
constexpr uint32_t kReadRegion = kMemSize / 2;  // jobs read [0, 32K), writes go to [32K, 64K)

struct Job {
  uint32_t src = 0, len = 0;
  uint64_t tag = 0;
};

struct Write {
  uint32_t addr = 0;  // word aligned
  std::vector<uint8_t> data = std::vector<uint8_t>(kMemBytes);
  uint32_t strb = 0;
};

// Memory timing of one test.
struct Timing {
  uint32_t ready_pct = 100;   // the port's request ready high this often (percent)
  uint32_t lat_lo = 1, lat_hi = 1;
  uint32_t beat_pct = 100;    // a due beat is presented this often
  uint32_t max_reads = 4;     // bursts in flight before ready goes low
  uint32_t job_pct = 100;     // a job is offered this often when one is waiting
  uint32_t write_pct = 0;     // a write is offered this often
};

class DmaBench {
 public:
  DmaBench(uint64_t seed, const Timing& t) : b_("nasa_dma", seed), t_(t), mem_(0, kMemSize) {
    mem_.fill_random(b_.rng());
    b_->abort_i = 0;
    b_->job_valid_i = 0;
    b_->wr_valid_i = 0;
    bus::put_mem_rsp(b_->mem_rsp_i, false, false, {});
    b_.reset(3, 1);
  }

  nasa::sim::ByteMemory& memory() { return mem_; }
  Bench<Vnasa_dma>& bench() { return b_; }
  void set_timing(const Timing& t) { t_ = t; }

  void add_job(const Job& j) { jobs_.push_back(j); }
  void add_write(const Write& w) { writes_.push_back(w); }
  size_t pending_jobs() const { return jobs_.size() + expect_.size(); }
  size_t pending_writes() const { return writes_.size(); }
  uint64_t out_beats() const { return out_beats_; }
  uint64_t writes_done() const { return writes_done_; }

  // One cycle: drive the inputs, check the outputs, do the handshakes, clock.
  void cycle(bool abort = false) {
    auto& r = b_.rng();
    b_->abort_i = abort;
    // a job: offered (held until taken) or not yet
    if (!job_offer_ && !jobs_.empty() && !abort && !discarding_ && r.chance(t_.job_pct)) {
      job_offer_ = jobs_.front();
      jobs_.pop_front();
    }
    b_->job_valid_i = job_offer_.has_value();
    if (job_offer_) {
      b_->job_src_i = job_offer_->src;
      b_->job_len_i = job_offer_->len;
      b_->job_tag_i = job_offer_->tag;
    }
    if (!wr_offer_ && !writes_.empty() && !abort && r.chance(t_.write_pct)) {
      wr_offer_ = writes_.front();
      writes_.pop_front();
    }
    b_->wr_valid_i = wr_offer_.has_value();
    if (wr_offer_) {
      b_->wr_addr_i = wr_offer_->addr;
      nasa::sim::to_port(wr_offer_->data, b_->wr_data_i);
      b_->wr_strb_i = wr_offer_->strb;
    }
    // memory side: ready, and the head read's next beat once due
    const bool ready = reads_.size() < t_.max_reads && r.chance(t_.ready_pct);
    const bool beat = !reads_.empty() && reads_.front().due <= b_.cycle() && r.chance(t_.beat_pct);
    std::span<const uint8_t> rdata;
    if (beat) {
      const auto& rd = reads_.front();
      rdata = std::span<const uint8_t>(rd.data).subspan(rd.beat * kMemBytes, kMemBytes);
    }
    bus::put_mem_rsp(b_->mem_rsp_i, ready, beat, rdata);
    b_.settle();

    // outputs of this cycle
    const bus::MemReq req = bus::MemReq::get(b_->mem_req_o);
    if (b_->out_valid_o) take_output();
    if (req.valid && ready) accept_request(req);
    if (beat && req.rsp_ready) {
      ++rsp_beats_;
      auto& rd = reads_.front();
      if (++rd.beat == rd.beats) reads_.pop_front();
    }
    if (b_->ev_rd_beat_o) ++ev_rd_beats_;
    if (b_->ev_wr_o) {
      ++ev_writes_;
      ev_wr_bytes_ += b_->ev_wr_bytes_o;
    }
    if (job_offer_ && b_->job_ready_o && !abort) {
      expect_.push_back(Expect{*job_offer_, 0});
      job_offer_.reset();
    }
    if (wr_offer_ && b_->wr_ready_o) {
      // the write the DMA took: what memory must hold afterwards
      for (uint32_t i = 0; i < kMemBytes; ++i) {
        if ((wr_offer_->strb >> i) & 1) shadow_writes_.push_back({wr_offer_->addr + i, wr_offer_->data[i]});
      }
      wr_strb_bytes_ += static_cast<uint64_t>(std::popcount(wr_offer_->strb));
      ++writes_done_;
      wr_offer_.reset();
    }
    if (abort) {
      // the queued and waiting jobs are dropped (no output of them may appear); no new job is
      // offered until the DMA is idle again
      job_offer_.reset();
      jobs_.clear();
      expect_.clear();
      discarding_ = true;
    }
    b_.tick();
    if (discarding_ && b_->idle_o) discarding_ = false;
  }

  bool idle() {
    b_.settle();
    return b_->idle_o && reads_.empty() && !job_offer_ && !wr_offer_;
  }

  // Runs until every job and write is done and the port is quiet; fails on a hang.
  void run_until_done(uint64_t budget) {
    for (uint64_t i = 0; i < budget; ++i) {
      if (jobs_.empty() && expect_.empty() && writes_.empty() && idle()) {
        // quiet for a few more cycles: no stray output or request
        for (int q = 0; q < 8; ++q) {
          cycle();
          ASSERT_FALSE(bus::MemReq::get(b_->mem_req_o).valid) << "request with nothing to do";
        }
        return;
      }
      cycle();
      if (::testing::Test::HasFailure()) return;
    }
    FAIL() << "not done within " << budget << " cycles: " << jobs_.size() << " jobs waiting, "
           << expect_.size() << " in flight, " << writes_.size() << " writes waiting";
  }

  // After the run: the memory equals the initial image with the writes applied; the counters.
  void check_memory_and_events(const std::vector<uint8_t>& initial) {
    std::vector<uint8_t> want = initial;
    for (const auto& [a, v] : shadow_writes_) want[a] = v;
    int bad = 0;
    for (uint32_t a = 0; a < kMemSize && bad < 10; ++a) {
      if (mem_.bytes()[a] != want[a]) {
        ++bad;
        ADD_FAILURE() << fmt::format("memory byte {:#x}: {:#04x}, expected {:#04x}", a,
                                     mem_.bytes()[a], want[a]);
      }
    }
    EXPECT_EQ(ev_rd_beats_, rsp_beats_) << "ev_rd_beat_o pulses vs read beats taken";
    EXPECT_EQ(ev_writes_, writes_done_) << "ev_wr_o pulses vs writes";
    EXPECT_EQ(ev_wr_bytes_, wr_strb_bytes_) << "ev_wr_bytes_o sum vs strobed bytes";
  }

 private:
  struct Read {
    uint64_t due = 0;
    uint32_t beats = 0, beat = 0;
    std::vector<uint8_t> data;
  };
  struct Expect {
    Job job;
    uint32_t idx;  // next output beat
  };

  void accept_request(const bus::MemReq& req) {
    const uint32_t addr = req.addr;
    if (req.we) {
      ASSERT_EQ(addr % kMemBytes, 0u) << "unaligned write";
      ASSERT_TRUE(addr >= kReadRegion && addr + kMemBytes <= kMemSize)
          << fmt::format("write at {:#x} outside the write region", addr);
      std::vector<uint8_t> data(kMemBytes);
      bus::MemReq::wdata(b_->mem_req_o, data);
      const uint64_t strb = bus::MemReq::wstrb(b_->mem_req_o, kMemBytes);
      mem_.write_if(addr, data, [strb](size_t i) { return ((strb >> i) & 1) != 0; });
      return;
    }
    const uint32_t beats = req.len + 1;
    ASSERT_EQ(addr % kMemBytes, 0u) << "unaligned read burst";
    ASSERT_LE(beats, kBurstMax) << "burst longer than BurstMax";
    ASSERT_TRUE(mem_.contains(addr, beats * kMemBytes))
        << fmt::format("read burst at {:#x} outside the memory", addr);
    ASSERT_LT(addr, kReadRegion) << "read outside the read region";
    Read rd;
    rd.due = b_.cycle() + b_.rng().uniform(t_.lat_lo, t_.lat_hi);
    if (!reads_.empty()) rd.due = std::max(rd.due, reads_.back().due);
    rd.beats = beats;
    const auto s = mem_.span(addr, beats * kMemBytes);  // data as of acceptance
    rd.data.assign(s.begin(), s.end());
    reads_.push_back(std::move(rd));
    words_read_ += beats;
  }

  void take_output() {
    ASSERT_FALSE(discarding_) << "output after abort before the DMA was idle, cycle " << b_.cycle();
    ASSERT_FALSE(expect_.empty()) << "output beat with no job outstanding, cycle " << b_.cycle();
    Expect& e = expect_.front();
    const Job& j = e.job;
    const uint32_t nb = (j.len + kMemBytes - 1) / kMemBytes;
    SCOPED_TRACE(fmt::format("job src {:#x} len {} tag {}, beat {} of {}", j.src, j.len, j.tag,
                             e.idx, nb));
    ASSERT_EQ(b_->out_tag_o, j.tag) << "tag (jobs out of order?)";
    ASSERT_EQ(b_->out_idx_o, e.idx) << "beat index";
    ASSERT_EQ(b_->out_last_o != 0, e.idx + 1 == nb) << "last mark";
    const auto data = nasa::sim::port_bytes(b_->out_data_o, kMemBytes);
    for (uint32_t i = 0; i < kMemBytes && e.idx * kMemBytes + i < j.len; ++i) {
      const uint32_t a = j.src + e.idx * kMemBytes + i;
      ASSERT_EQ(data[i], mem_.at(a)) << fmt::format("byte {} of the beat (address {:#x})", i, a);
    }
    ++out_beats_;
    if (++e.idx == nb) expect_.pop_front();
  }

  Bench<Vnasa_dma> b_;
  Timing t_;
  nasa::sim::ByteMemory mem_;
  std::deque<Job> jobs_;
  std::deque<Write> writes_;
  std::optional<Job> job_offer_;
  std::optional<Write> wr_offer_;
  std::deque<Expect> expect_;
  std::deque<Read> reads_;
  std::vector<std::pair<uint32_t, uint8_t>> shadow_writes_;
  bool discarding_ = false;
  uint64_t out_beats_ = 0, rsp_beats_ = 0, words_read_ = 0, writes_done_ = 0;
  uint64_t ev_rd_beats_ = 0, ev_writes_ = 0, ev_wr_bytes_ = 0, wr_strb_bytes_ = 0;
};

Job random_job(nasa::sim::Random& r, uint64_t tag) {
  static const uint32_t lens[] = {1, 2, 31, 32, 33, 63, 64, 65, 224, 255, 256};
  Job j;
  j.len = r.chance(30) ? lens[r.uniform(0, 10)] : static_cast<uint32_t>(r.uniform(1, kMaxJob));
  // every offset within the word, now and then the last bytes of the read region
  j.src = r.chance(5) ? kReadRegion - j.len
                      : static_cast<uint32_t>(r.uniform(0, kReadRegion - kMaxJob - 1));
  j.tag = tag | (r() & 0xFF00000000ull);
  return j;
}

Write random_write(nasa::sim::Random& r) {
  Write w;
  w.addr = kReadRegion + static_cast<uint32_t>(r.uniform(0, kReadRegion / kMemBytes - 1)) * kMemBytes;
  r.fill(w.data);
  switch (r.uniform(0, 3)) {
    case 0: w.strb = 0xFFFFFFFFu; break;
    case 1: {  // a contiguous run, as the output writer makes
      const uint32_t off = static_cast<uint32_t>(r.uniform(0, kMemBytes - 1));
      const uint32_t n = static_cast<uint32_t>(r.uniform(1, kMemBytes - off));
      w.strb = static_cast<uint32_t>(((uint64_t{1} << n) - 1) << off);
      break;
    }
    default: w.strb = static_cast<uint32_t>(r()) | 1u << r.uniform(0, 31); break;
  }
  return w;
}

Timing random_timing(nasa::sim::Random& r) {
  Timing t;
  t.ready_pct = r.chance(25) ? 100 : static_cast<uint32_t>(r.uniform(20, 95));
  t.lat_lo = static_cast<uint32_t>(r.uniform(1, 10));
  t.lat_hi = t.lat_lo + static_cast<uint32_t>(r.uniform(0, 50));
  t.beat_pct = r.chance(25) ? 100 : static_cast<uint32_t>(r.uniform(30, 95));
  t.max_reads = static_cast<uint32_t>(r.uniform(1, 16));
  t.job_pct = static_cast<uint32_t>(r.uniform(30, 100));
  t.write_pct = static_cast<uint32_t>(r.uniform(0, 60));
  return t;
}

TEST(DmaRtl, EveryLengthAndAlignmentOnAnIdealMemory) {
  DmaBench d(1, Timing{});
  const auto initial = d.memory().bytes();
  uint64_t tag = 0;
  for (uint32_t len : {1u, 2u, 3u, 31u, 32u, 33u, 64u, 100u, 255u, 256u}) {
    for (uint32_t off = 0; off < kMemBytes; ++off) d.add_job(Job{1024 + off + 7 * len, len, ++tag});
  }
  d.run_until_done(200000);
  d.check_memory_and_events(initial);
  EXPECT_EQ(d.pending_jobs(), 0u);
}

TEST(DmaRtl, RandomJobsAndWritesUnderBackpressure) {
  const uint32_t seed = nasa::sim::test_seed("rtlunit_dma random traffic", 2024);
  nasa::sim::Random r(seed);
  for (uint64_t run = 0, runs = nasa::sim::iterations(12); run < runs; ++run) {
    const Timing t = random_timing(r);
    SCOPED_TRACE(fmt::format("run {}: ready {}% latency {}..{} beats {}% reads in flight {} jobs "
                             "{}% writes {}%",
                             run, t.ready_pct, t.lat_lo, t.lat_hi, t.beat_pct, t.max_reads,
                             t.job_pct, t.write_pct));
    DmaBench d(r(), t);
    const auto initial = d.memory().bytes();
    for (int i = 0; i < 300; ++i) d.add_job(random_job(r, static_cast<uint64_t>(i)));
    for (int i = 0; i < 200; ++i) d.add_write(random_write(r));
    if (t.write_pct == 0) d.set_timing([&] { Timing u = t; u.write_pct = 30; return u; }());
    d.run_until_done(2'000'000);
    if (HasFailure()) return;
    d.check_memory_and_events(initial);
    EXPECT_EQ(d.writes_done(), 200u);
    if (HasFailure()) return;
  }
}

TEST(DmaRtl, AbortLeavesThePortCleanAndTheNextJobsExact) {
  const uint32_t seed = nasa::sim::test_seed("rtlunit_dma abort", 77);
  nasa::sim::Random r(seed);
  for (uint64_t run = 0, runs = nasa::sim::iterations(30); run < runs; ++run) {
    Timing t = random_timing(r);
    t.write_pct = 0;
    SCOPED_TRACE(fmt::format("run {}", run));
    DmaBench d(r(), t);
    for (int i = 0; i < 20; ++i) d.add_job(random_job(r, static_cast<uint64_t>(i)));
    const uint64_t abort_at = r.uniform(1, 400);
    for (uint64_t c = 0; c < abort_at; ++c) d.cycle();
    d.cycle(/*abort=*/true);
    uint64_t waited = 0;
    while (!d.idle()) {
      d.cycle();
      ASSERT_LT(++waited, 20000u) << "not idle after abort (a burst never completed?)";
    }
    if (HasFailure()) return;
    // the next jobs after the abort are exact
    for (int i = 0; i < 10; ++i) d.add_job(random_job(r, 1000 + static_cast<uint64_t>(i)));
    const uint64_t before = d.out_beats();
    d.run_until_done(400000);
    if (HasFailure()) return;
    EXPECT_GT(d.out_beats(), before);
  }
}

}  // namespace
