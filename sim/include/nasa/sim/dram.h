// Cycle-level model of the DRAM behind the engine's memory port: in-order requests through a
// bounded queue, a fixed read latency and one shared data bus of configurable bandwidth.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "nasa/cycle_model.h"

namespace nasa::sim {

// One request as presented on the port in the cycle it is accepted.
struct MemRequest {
  bool write = false;
  uint32_t addr = 0;               // aligned to the port width
  uint32_t beats = 1;              // read burst length (mem_req_len_o + 1); writes are one beat
  std::span<const uint8_t> wdata;  // port-width bytes (writes)
  uint64_t wstrb = 0;              // byte enables of wdata (writes)
};

// Timing, in cycles of the engine clock (cycle c is the interval that ends with clock edge c+1):
// - A request is accepted at the edge ending cycle c when it is valid and req_ready() was true in
//   cycle c; req_ready() is true while fewer than `timing.max_outstanding` requests are in
//   flight.
// - The data bus moves `bytes_per_cycle` bytes per cycle; a beat of `port_bytes` occupies it for
//   port_bytes / bytes_per_cycle cycles (fractions accumulate). Requests use it in order.
// - A read accepted in cycle c reserves the bus from max(c + latency, end of the previous
//   reservation); beat j is presented (rsp_valid) from the cycle its bus slot starts, i.e. beat 0
//   in cycle c + latency when the bus is free. Beats wait, in order, while rsp_ready is low.
// - A write accepted in cycle c reserves one beat of bus time from max(c, end of the previous
//   reservation) and is in flight until that slot ends.
// - A read is in flight until its last beat has been taken.
// Functionally every request takes effect when accepted (reads copy their data then, writes apply
// their enabled bytes then), so requests are ordered exactly as the port issued them.
// A request outside memory, misaligned, or longer than `burst_max` throws std::runtime_error.
class Dram {
 public:
  Dram(uint32_t port_bytes, uint32_t burst_max, const cycles::DramTiming& timing);

  std::vector<uint8_t>& memory() { return mem_; }
  const std::vector<uint8_t>& memory() const { return mem_; }
  const cycles::DramTiming& timing() const { return timing_; }
  uint32_t port_bytes() const { return port_bytes_; }

  // Drops everything in flight and zeroes the statistics; memory contents are kept.
  void reset();

  // The window the engine was given: reads of beats wholly outside the port-aligned window and
  // written bytes outside [base, limit) are counted as stray (they change nothing else).
  void set_window(uint32_t base, uint32_t limit);
  // Memory the core owns besides the window (the board controller's host page, hw_spec.h
  // NASA_MCU_MAP PageBytes): its accesses there are not stray. Empty (the default): none.
  void set_private(uint64_t base, uint64_t limit) {
    priv_base_ = base;
    priv_limit_ = limit;
  }

  // Outputs in the current cycle; functions of the state only.
  bool req_ready() const { return outstanding() < max_outstanding_; }
  bool rsp_valid() const { return beats_ > 0 && beat_avail_[head_] <= cycle_; }
  std::span<const uint8_t> rsp_data() const;  // the head beat; meaningful while rsp_valid()

  // Clock edge at the end of the current cycle. `req` is the request valid on the port in this
  // cycle (nullptr when none); it is accepted when req_ready(). `rsp_ready` takes the head beat
  // when rsp_valid(). Returns whether `req` was accepted.
  bool clock(const MemRequest* req, bool rsp_ready);

  uint32_t outstanding() const { return reads_in_flight_ + static_cast<uint32_t>(writes_.size()); }
  bool idle() const { return outstanding() == 0; }
  uint64_t cycle() const { return cycle_; }
  uint64_t bytes_read() const { return bytes_read_; }        // whole beats
  uint64_t bytes_written() const { return bytes_written_; }  // enabled bytes
  uint64_t read_requests() const { return read_requests_; }
  uint64_t write_requests() const { return write_requests_; }
  uint64_t stray_read_beats() const { return stray_read_beats_; }
  uint64_t stray_write_bytes() const { return stray_write_bytes_; }
  uint64_t first_stray_addr() const { return first_stray_addr_; }  // valid when any stray

 private:
  void accept(const MemRequest& req);
  void check_range(const MemRequest& req, uint64_t bytes) const;

  uint32_t port_bytes_, burst_max_, max_outstanding_;
  cycles::DramTiming timing_;
  std::vector<uint8_t> mem_;

  uint64_t cycle_ = 0;
  uint64_t bus_free_ = 0;  // end of the last bus reservation, in units of 1/bytes_per_cycle cycle

  // Read beats in order: a ring of capacity max_outstanding * burst_max.
  std::vector<uint8_t> beat_data_;
  std::vector<uint64_t> beat_avail_;  // first cycle the beat may be presented
  std::vector<uint8_t> beat_last_;    // last beat of its request
  uint32_t head_ = 0, beats_ = 0;
  uint32_t reads_in_flight_ = 0;
  std::deque<uint64_t> writes_;  // completion cycles of writes in flight, ascending

  uint64_t win_base_ = 0, win_limit_ = UINT64_MAX;
  uint64_t priv_base_ = 0, priv_limit_ = 0;
  bool stray(uint64_t lo, uint64_t hi) const {  // bytes [lo, hi) touch nothing of the window
    return (hi <= win_base_ || lo >= win_limit_) && !(lo >= priv_base_ && hi <= priv_limit_);
  }
  uint64_t bytes_read_ = 0, bytes_written_ = 0, read_requests_ = 0, write_requests_ = 0;
  uint64_t stray_read_beats_ = 0, stray_write_bytes_ = 0, first_stray_addr_ = 0;
};

}  // namespace nasa::sim
