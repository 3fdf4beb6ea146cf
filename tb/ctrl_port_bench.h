// What the benches of a unit mastering a byte control port (nasa_cand_gen, nasa_fusion_unit)
// share: the model, a byte memory of random contents behind the port, the reset, and the port's
// side of each cycle (random ready, delayed read responses, the valid/ready rules).
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "nasa/hw_spec.h"
#include "nasa/sim/bus.h"
#include "nasa/sim/vbench.h"

namespace nasa::testing {

template <class Model>
class CtrlPortBench {
 public:
  CtrlPortBench(const CtrlPortBench&) = delete;
  CtrlPortBench& operator=(const CtrlPortBench&) = delete;

  std::vector<uint8_t>& memory() { return mem_; }
  uint64_t cycles() const { return cycle_; }
  // ready is high with this probability (percent) each cycle; 100 means no backpressure.
  void set_ready_percent(uint32_t p) { ready_pct_ = p; }

  uint8_t& at(uint32_t addr) {
    if (addr < mem_base_ || addr - mem_base_ >= mem_.size()) {
      throw std::out_of_range(fmt::format("address {:#x} outside the test memory", addr));
    }
    return mem_[addr - mem_base_];
  }

 protected:
  // The memory takes the first draws of `seed`, so a bench's stimulus is a function of the seed.
  CtrlPortBench(const std::string& name, uint32_t seed, uint32_t mem_base, uint32_t mem_bytes)
      : top_(name, seed), rng_(seed), mem_base_(mem_base), mem_(mem_bytes) {
    for (auto& b : mem_) b = static_cast<uint8_t>(rng_());
    top_->rst_ni = 0;
    top_->start_i = 0;
    top_->abort_i = 0;
    rsp_.put(top_->mrsp_i);
  }

  // Three cycles in reset and one after; the derived bench drives its own inputs first.
  void reset() {
    top_.settle();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    tick();
  }

  // The layer count and the K of each layer (one byte a layer, four to a word of layer_k_i).
  void set_layers(const std::vector<int>& k) {
    top_->num_layers_i = static_cast<uint8_t>(k.size());
    for (size_t w = 0; w < (hw::kMaxLayers * 8 + 31) / 32; ++w) top_->layer_k_i[w] = 0;
    for (size_t i = 0; i < k.size(); ++i) {
      top_->layer_k_i[i / 4] |= static_cast<uint32_t>(k[i]) << (8 * (i % 4));
    }
  }

  // A read response due at cycle `due`; `stale` when the read was abandoned by an abort.
  struct Rsp {
    uint64_t due;
    uint8_t data;
    bool stale = false;
  };

  // Drives the response port for this cycle: the oldest response once it is due, else nothing.
  void drive_response() {
    rsp_.valid = false;
    if (!pending_.empty() && pending_.front().due <= cycle_) {
      rsp_.valid = true;
      rsp_.rdata = pending_.front().data;
      pending_.pop_front();
    }
    rsp_.put(top_->mrsp_i);
  }

  // The unit's request this cycle (after begin_cycle).
  nasa::sim::bus::ByteReq request() const { return nasa::sim::bus::ByteReq::get(top_->mreq_o); }

  // A request on the port (`data` only for a byte write).
  struct Req {
    bool we;
    uint32_t addr;
    uint8_t data = 0;
  };

  // The first half of a cycle: start/abort levels, a random ready (always drawn, so the random
  // sequence does not depend on `allow_ready`; low when not allowed), the due read response, and
  // the model settled on them.
  void begin_cycle(bool start, bool abort, bool allow_ready = true) {
    top_->start_i = start;
    top_->abort_i = abort;
    const bool ready = std::uniform_int_distribution<uint32_t>(0, 99)(rng_) < ready_pct_;
    rsp_.ready = ready && allow_ready;
    drive_response();
    top_.settle();
  }

  // The second half: a request refused last cycle must be offered again unchanged (valid/ready)
  // unless an abort came between; this cycle's request goes to `accept` at the handshake or is
  // held; then the clock edge.
  template <class Accept>
  void end_cycle(bool valid, const Req& req, bool abort, Accept accept) {
    if (valid && held_) {
      EXPECT_EQ(req.we, held_->we) << "request changed while valid && !ready, cycle " << cycle_;
      EXPECT_EQ(req.addr, held_->addr) << "request changed while valid && !ready, cycle " << cycle_;
      if (req.we) {
        EXPECT_EQ(req.data, held_->data) << "write data changed while held, cycle " << cycle_;
      }
    } else if (held_ && !prev_abort_) {
      ADD_FAILURE() << "valid dropped before ready, cycle " << cycle_;
    }
    held_.reset();
    if (valid) {
      if (rsp_.ready) {
        accept(req);
      } else {
        held_ = req;
      }
    }
    prev_abort_ = abort;
    tick();
  }

  // (a firing assertion throws nasa::sim::ModelError: the test fails with the cycle)
  void tick() {
    top_.tick();
    ++cycle_;
  }

  nasa::sim::Bench<Model> top_;
  std::mt19937 rng_;
  uint64_t cycle_ = 0;
  std::deque<Rsp> pending_;  // in order of delivery
  nasa::sim::bus::ByteRsp rsp_;  // what the port presents this cycle

 private:
  uint32_t mem_base_;
  std::vector<uint8_t> mem_;
  uint32_t ready_pct_ = 70;
  std::optional<Req> held_;
  bool prev_abort_ = false;
};

}  // namespace nasa::testing
