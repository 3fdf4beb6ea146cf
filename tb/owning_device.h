// A Device that owns what sits at the far end of a link (a board emulator, a simulated board)
// and forwards every call to the device talking to it (set dev_ in the derived constructor).
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "nasa/device.h"

namespace nasa::testing {

template <class Board>
class OwningDevice : public device::Device {
 public:
  template <class... Args>
  explicit OwningDevice(Args&&... args) : board_(std::forward<Args>(args)...) {}
  std::string name() const override { return dev_->name(); }
  const hw::Config& config() const override { return dev_->config(); }
  uint64_t memory_size() const override { return dev_->memory_size(); }
  void write_memory(uint64_t a, std::span<const uint8_t> b) override { dev_->write_memory(a, b); }
  void read_memory(uint64_t a, std::span<uint8_t> o) override { dev_->read_memory(a, o); }
  void write_csr(uint32_t a, uint32_t v) override { dev_->write_csr(a, v); }
  uint32_t read_csr(uint32_t a) override { return dev_->read_csr(a); }
  void start() override { dev_->start(); }
  device::WaitResult wait(uint64_t t) override { return dev_->wait(t); }

 protected:
  Board board_;  // declared first: outlives the device that talks to it
  std::unique_ptr<device::Device> dev_;
};

}  // namespace nasa::testing
