// rtl/nasa_uart_tx.sv alone: bytes offered with random gaps come out as 8N1 frames of exactly 12
// clocks per bit (start low, LSB first, stop high), the line idles high, and ready is low exactly
// while a frame is on the line.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "Vnasa_uart_tx.h"
#include "nasa/sim/vbench.h"

namespace {

constexpr int kClksPerBit = 12;

TEST(UartTxRtl, FramesAreExact) {
  nasa::sim::Bench<Vnasa_uart_tx> top("uart_tx");
  std::vector<int> line;  // the line level after every clock
  auto tick = [&] {
    top.tick();
    line.push_back(top->tx_o);
  };
  top->valid_i = 0;
  top.reset(1);
  std::mt19937 rng(11);
  std::vector<uint8_t> sent;
  for (int i = 0; i < 500; ++i) {
    for (int g = rng() % 3 == 0 ? static_cast<int>(rng() % 30) : 0; g > 0; --g) tick();
    const auto b = static_cast<uint8_t>(rng());
    top->valid_i = 1;
    top->data_i = b;
    top.settle();
    while (!top->ready_o) tick();
    tick();  // taken on this edge
    top->valid_i = 0;
    sent.push_back(b);
    top.settle();
    EXPECT_FALSE(top->ready_o);
  }
  for (int i = 0; i < 12 * kClksPerBit; ++i) tick();
  // decode: find each start bit, then sample every bit at its middle
  std::vector<uint8_t> got;
  for (size_t t = 0; t + 10 * kClksPerBit <= line.size();) {
    if (line[t] == 1) {
      ++t;
      continue;
    }
    for (int k = 0; k < kClksPerBit; ++k) ASSERT_EQ(line[t + k], 0) << "start bit at " << t;
    uint8_t b = 0;
    for (int i = 0; i < 8; ++i) {
      const size_t s = t + (1 + i) * kClksPerBit;
      for (int k = 0; k < kClksPerBit; ++k) ASSERT_EQ(line[s + k], line[s]) << "bit " << i;
      b |= static_cast<uint8_t>(line[s] << i);
    }
    for (int k = 0; k < kClksPerBit; ++k) ASSERT_EQ(line[t + 9 * kClksPerBit + k], 1) << "stop";
    got.push_back(b);
    t += 10 * kClksPerBit;
  }
  EXPECT_EQ(got, sent);
}

}  // namespace
