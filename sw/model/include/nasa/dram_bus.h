// Timing of the sim/ DRAM model (sim/src/dram.cpp) without data, clocked cycle by cycle by the
// models that replay a master on the memory port: the engine's cycle model and the
// board's controller model (fpga/model: nasa/mcu_system.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "nasa/cycle_model.h"

namespace nasa::cycles {

// In-order reads, first beat `latency` cycles after acceptance; beats and writes share the bus at
// bytes_per_cycle; at most max_outstanding requests in flight.
class DramBus {
 public:
  DramBus(const DramTiming& t, uint32_t port) : t_(t), port_(port) {}
  bool req_ready() const { return reads_ + writes_.size() < t_.max_outstanding; }
  bool rsp_valid(uint64_t cyc) const { return !beats_.empty() && beats_.front().avail <= cyc; }
  // The end of cycle `cyc`: a response beat taken, a read of `beats` beats or a write accepted.
  void clock(uint64_t cyc, bool take_rsp, bool read, uint32_t beats, bool write) {
    const uint64_t bpc = t_.bytes_per_cycle;
    if (take_rsp) {
      if (beats_.front().last) --reads_;
      beats_.pop_front();
    }
    if (read) {
      uint64_t slot = std::max((cyc + t_.latency) * bpc, bus_free_);
      for (uint32_t j = 0; j < beats; ++j) {
        beats_.push_back({(slot + bpc - 1) / bpc, j + 1 == beats});
        slot += port_;
      }
      bus_free_ = slot;
      ++reads_;
    } else if (write) {
      const uint64_t start = std::max(cyc * bpc, bus_free_);
      bus_free_ = start + port_;
      writes_.push_back((bus_free_ + bpc - 1) / bpc);
    }
    while (!writes_.empty() && writes_.front() <= cyc + 1) writes_.pop_front();
  }
  // Idle until cycle `cyc` (no request, no beat taken): what clock() would have retired.
  void settle(uint64_t cyc) {
    while (!writes_.empty() && writes_.front() <= cyc) writes_.pop_front();
  }
  // Every time `delta` cycles later (a replayed stretch of time).
  void shift(uint64_t delta) {
    bus_free_ += delta * t_.bytes_per_cycle;
    for (Beat& b : beats_) b.avail += delta;
    for (uint64_t& w : writes_) w += delta;
  }
  // The timing state relative to cycle `cyc`, for a memo key (none of it is in flight at rest).
  void key(uint64_t cyc, std::vector<uint64_t>& k) const {
    const uint64_t now = cyc * t_.bytes_per_cycle;
    k.push_back(bus_free_ > now ? bus_free_ - now : 0);
    k.push_back(reads_);
    k.push_back(beats_.size());
    k.push_back(writes_.size());
    for (uint64_t w : writes_) k.push_back(w > cyc ? w - cyc : 0);
  }

 private:
  struct Beat {
    uint64_t avail;
    bool last;
  };
  DramTiming t_;
  uint64_t port_;
  uint64_t bus_free_ = 0;
  uint32_t reads_ = 0;
  std::deque<Beat> beats_;
  std::deque<uint64_t> writes_;
};

}  // namespace nasa::cycles
