// The board over its UART (docs/uart.md) behind the one Device interface: a serial port opened
// raw (termios, 8N1), request/response frames with timeouts, and retries of frames that got lost
// or corrupted on the way in either direction.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "nasa/device.h"

namespace nasa::uart {

struct LinkOptions {
  uint32_t baud = 1000000;
  int response_timeout_ms = 250;  // per frame, on top of its transfer time at `baud`
  int retries = 8;                // after the first attempt
  double clock_hz = 24e6;         // the core's clock: turns wait()'s cycle budget into time
  bool check_identity = true;     // on open: the board must report `cfg` (device::check_identity)
};

struct LinkStats {
  uint64_t frames = 0, retries = 0, bytes_sent = 0, bytes_received = 0;
};

// Opens `port` (a serial device or a pseudo-terminal) and checks that the board is configuration
// `cfg`. Throws std::runtime_error naming the port when it cannot be opened or configured, and
// naming what the board is when it is not `cfg`. Accesses beyond `memory_bytes` throw
// std::out_of_range; a frame that still fails after every retry throws std::runtime_error with
// the last status.
std::unique_ptr<device::Device> make_uart_device(const std::string& port, const hw::Config& cfg,
                                                 uint64_t memory_bytes,
                                                 const LinkOptions& options = {});

// The link statistics of a device made by make_uart_device (null for other devices).
const LinkStats* link_stats(const device::Device& dev);

}  // namespace nasa::uart
