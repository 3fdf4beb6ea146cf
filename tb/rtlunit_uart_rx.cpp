// rtl/nasa_uart_rx.sv alone: 8N1 frames driven bit by bit at its default 12 clocks per bit, with
// the sender's clock off by up to +-3% and random idle time between bytes: every byte comes out
// once and intact; a start-bit glitch produces nothing; a byte without its stop bit is dropped.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "Vnasa_uart_rx.h"
#include "nasa/sim/vbench.h"

namespace {

constexpr double kClksPerBit = 12;

struct Rx {
  nasa::sim::Bench<Vnasa_uart_rx> top{"uart_rx"};
  std::vector<uint8_t> got;
  Rx() {
    top->rx_i = 1;
    top.reset(2);
  }
  void tick() {
    top.tick();
    if (top->rst_ni && top->valid_o) got.push_back(top->data_o);
  }
  // The line at level `v` for `clocks` (fractional clocks accumulate in `phase`).
  void hold(int v, double clocks, double& phase) {
    phase += clocks;
    top->rx_i = v;
    while (phase >= 1) {
      tick();
      phase -= 1;
    }
  }
  void send(uint8_t b, double bit, double& phase, bool stop = true) {
    hold(0, bit, phase);
    for (int i = 0; i < 8; ++i) hold((b >> i) & 1, bit, phase);
    hold(stop ? 1 : 0, bit, phase);
    top->rx_i = 1;
  }
};

TEST(UartRxRtl, BytesWithClockErrorAndIdleTime) {
  Rx rx;
  std::mt19937 rng(5);
  std::vector<uint8_t> sent;
  double phase = 0;
  for (int i = 0; i < 3000; ++i) {
    const double bit = kClksPerBit * (0.97 + 0.06 * (rng() % 1001) / 1000.0);
    const auto b = static_cast<uint8_t>(rng());
    rx.send(b, bit, phase);
    sent.push_back(b);
    rx.hold(1, rng() % 3 == 0 ? rng() % 40 : 0, phase);
  }
  rx.hold(1, 40, phase);
  EXPECT_EQ(rx.got, sent);
}

TEST(UartRxRtl, GlitchAndMissingStopBit) {
  Rx rx;
  double phase = 0;
  rx.hold(1, 30, phase);
  rx.hold(0, 3, phase);  // shorter than half a bit
  rx.hold(1, 40, phase);
  EXPECT_TRUE(rx.got.empty());
  rx.send(0x00, kClksPerBit, phase, false);  // framing error: dropped
  rx.hold(1, 40, phase);
  EXPECT_TRUE(rx.got.empty());
  rx.send(0xA5, kClksPerBit, phase);
  rx.hold(1, 40, phase);
  EXPECT_EQ(rx.got, std::vector<uint8_t>{0xA5});
}

}  // namespace
