#include "nasa/sim/dram.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace nasa::sim {

Dram::Dram(uint32_t port_bytes, uint32_t burst_max, const cycles::DramTiming& timing)
    : port_bytes_(port_bytes),
      burst_max_(burst_max),
      max_outstanding_(timing.max_outstanding),
      timing_(timing) {
  if (port_bytes == 0 || port_bytes > 64 || (port_bytes & (port_bytes - 1)) != 0) {
    throw std::invalid_argument(fmt::format(
        "DRAM model: port width {} bytes is not a power of two in [1, 64]", port_bytes));
  }
  if (timing.bytes_per_cycle == 0 || timing.bytes_per_cycle > port_bytes) {
    throw std::invalid_argument(
        fmt::format("DRAM model: bandwidth {} bytes/cycle must be in [1, {}] (the port width)",
                    timing.bytes_per_cycle, port_bytes));
  }
  if (timing.latency == 0) {
    throw std::invalid_argument("DRAM model: read latency must be at least 1 cycle");
  }
  if (burst_max == 0 || burst_max > 256 || max_outstanding_ == 0) {
    throw std::invalid_argument(
        fmt::format("DRAM model: burst_max {} must be in [1, 256] and max_outstanding {} positive",
                    burst_max, max_outstanding_));
  }
  const size_t cap = size_t{max_outstanding_} * burst_max;
  beat_data_.resize(cap * port_bytes);
  beat_avail_.resize(cap);
  beat_last_.resize(cap);
}

void Dram::reset() {
  cycle_ = 0;
  bus_free_ = 0;
  head_ = 0;
  beats_ = 0;
  reads_in_flight_ = 0;
  writes_.clear();
  bytes_read_ = bytes_written_ = read_requests_ = write_requests_ = 0;
  stray_read_beats_ = stray_write_bytes_ = first_stray_addr_ = 0;
}

void Dram::set_window(uint32_t base, uint32_t limit) {
  win_base_ = base;
  win_limit_ = limit;
}

std::span<const uint8_t> Dram::rsp_data() const {
  return {beat_data_.data() + size_t{head_} * port_bytes_, port_bytes_};
}

void Dram::check_range(const MemRequest& req, uint64_t bytes) const {
  if (req.addr % port_bytes_ != 0) {
    throw std::runtime_error(fmt::format(
        "memory port: {} request at address {:#x} is not aligned to the {}-byte port width",
        req.write ? "write" : "read", req.addr, port_bytes_));
  }
  if (uint64_t{req.addr} + bytes > mem_.size()) {
    throw std::runtime_error(fmt::format(
        "memory port: {} of {} bytes at address {:#x} lies outside the simulated memory "
        "[0, {:#x})",
        req.write ? "write" : "read", bytes, req.addr, mem_.size()));
  }
}

void Dram::accept(const MemRequest& req) {
  const uint64_t bpc = timing_.bytes_per_cycle;
  if (req.write) {
    check_range(req, port_bytes_);
    if (req.wdata.size() != port_bytes_) {
      throw std::logic_error("DRAM model: write data is not one port-width beat");
    }
    uint8_t* dst = mem_.data() + req.addr;
    for (uint32_t i = 0; i < port_bytes_; ++i) {
      if ((req.wstrb >> i) & 1u) {
        dst[i] = req.wdata[i];
        ++bytes_written_;
        const uint64_t a = uint64_t{req.addr} + i;
        if (stray(a, a + 1)) {
          if (stray_read_beats_ + stray_write_bytes_ == 0) first_stray_addr_ = a;
          ++stray_write_bytes_;
        }
      }
    }
    ++write_requests_;
    const uint64_t start = std::max(cycle_ * bpc, bus_free_);
    bus_free_ = start + port_bytes_;
    writes_.push_back((bus_free_ + bpc - 1) / bpc);
    return;
  }
  if (req.beats == 0 || req.beats > burst_max_) {
    throw std::runtime_error(fmt::format(
        "memory port: read burst of {} beats at address {:#x}; bursts are 1..{} beats (BurstMax)",
        req.beats, req.addr, burst_max_));
  }
  check_range(req, uint64_t{req.beats} * port_bytes_);
  const size_t cap = beat_avail_.size();
  uint64_t slot = std::max((cycle_ + timing_.latency) * bpc, bus_free_);
  for (uint32_t j = 0; j < req.beats; ++j) {
    const uint64_t a = uint64_t{req.addr} + uint64_t{j} * port_bytes_;
    if (stray(a, a + port_bytes_)) {
      if (stray_read_beats_ + stray_write_bytes_ == 0) first_stray_addr_ = a;
      ++stray_read_beats_;
    }
    const size_t idx = (head_ + beats_) % cap;
    std::memcpy(beat_data_.data() + idx * port_bytes_,
                mem_.data() + req.addr + size_t{j} * port_bytes_, port_bytes_);
    beat_avail_[idx] = (slot + bpc - 1) / bpc;
    beat_last_[idx] = j + 1 == req.beats;
    slot += port_bytes_;
    ++beats_;
  }
  bus_free_ = slot;
  ++reads_in_flight_;
  ++read_requests_;
  bytes_read_ += uint64_t{req.beats} * port_bytes_;
}

bool Dram::clock(const MemRequest* req, bool rsp_ready) {
  // Both decisions use the outputs of this cycle, i.e. the state before the edge.
  const bool take_req = req != nullptr && req_ready();
  const bool take_rsp = rsp_ready && rsp_valid();
  if (take_rsp) {
    if (beat_last_[head_]) --reads_in_flight_;
    head_ = static_cast<uint32_t>((head_ + 1) % beat_avail_.size());
    --beats_;
  }
  if (take_req) accept(*req);
  ++cycle_;
  while (!writes_.empty() && writes_.front() <= cycle_) writes_.pop_front();
  return take_req;
}

}  // namespace nasa::sim
