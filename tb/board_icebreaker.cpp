// The iCEBreaker board top (fpga/nasa_icebreaker.sv: UART, bridge, SPRAM memory, the core in its
// `up5k` configuration: the controller running the firmware) simulated by Verilator behind a
// pseudo-terminal: the host side is the real UartDevice (termios, frames, retries), the board
// side turns the bytes into the 8N1 waveform on uart_rx_i and decodes uart_tx_o at 24 core clocks
// per bit (1 Mbaud at the 24 MHz core clock; the PLL is a pass-through in simulation), as the
// FTDI chip would. A fused batch evaluated over the link gives exactly the reference model's
// logits and counts; the firmware's own memory is out of the host's reach.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>
#include <verilated.h>

#include <atomic>
#include <deque>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "Vnasa_icebreaker.h"
#include "fused_vs_ref.h"
#include "nasa/compiler.h"
#include "nasa/fusion.h"
#include "nasa/runtime.h"
#include "nasa/sim/context.h"
#include "nasa/sim/x_seed.h"
#include "nasa/spec.h"
#include "nasa/supernet_weights.h"
#include "nasa/uart_device.h"
#include "owning_device.h"
#include "sanitizer_slowdown.h"
#include "tiny_net.h"

namespace {

using namespace nasa;

constexpr int kClksPerBit = 24;  // nasa_icebreaker's ClksPerBit

class BoardSim {
 public:
  static constexpr int kBootCycles = 400'000;
  BoardSim() {
    master_ = posix_openpt(O_RDWR | O_NOCTTY);
    if (master_ < 0 || grantpt(master_) != 0 || unlockpt(master_) != 0) {
      throw std::runtime_error("cannot open a pseudo-terminal");
    }
    port_ = ptsname(master_);
    fcntl(master_, F_SETFL, O_NONBLOCK);
    ctx_ = nasa::sim::make_context();
    nasa::sim::apply_x_seed(*ctx_);
    top_ = std::make_unique<Vnasa_icebreaker>(ctx_.get());
    top_->uart_rx_i = 1;
    top_->clk_i = 0;
    top_->eval();
    // The board boots before a host talks to it, as a configured FPGA does long before its USB
    // port opens: the firmware clears its variables and, at power-up, the host page, Magic last
    // (about 60,000 cycles on the bit-serial core); a host reading Magic before that reads 0.
    for (int i = 0; i < kBootCycles; ++i) tick();
    thread_ = std::thread([this] { run(); });
  }
  ~BoardSim() {
    stop_ = true;
    thread_.join();
    top_->final();
    ::close(master_);
  }
  const std::string& port() const { return port_; }
  uint64_t cycles() const { return cycle_; }

 private:
  void tick() {
    // host -> board: the line level for this cycle
    if (tx_bits_.empty() && !to_board_.empty()) {
      const uint8_t b = to_board_.front();
      to_board_.pop_front();
      tx_bits_.push_back(0);
      for (int i = 0; i < 8; ++i) tx_bits_.push_back((b >> i) & 1);
      tx_bits_.push_back(1);
      tx_left_ = kClksPerBit;
    }
    top_->uart_rx_i = tx_bits_.empty() ? 1 : tx_bits_.front();
    if (!tx_bits_.empty() && --tx_left_ == 0) {
      tx_bits_.pop_front();
      tx_left_ = kClksPerBit;
    }
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    top_->eval();
    ++cycle_;
    // board -> host: decode uart_tx_o, sampling each bit in its middle
    const int line = top_->uart_tx_o;
    if (rx_phase_ < 0) {
      if (line == 0) rx_phase_ = 0;  // start bit
    } else {
      ++rx_phase_;
      if (rx_phase_ % kClksPerBit == kClksPerBit / 2) {
        const int bit = rx_phase_ / kClksPerBit;  // 0 start, 1..8 data, 9 stop
        if (bit >= 1 && bit <= 8) rx_byte_ |= static_cast<uint8_t>(line << (bit - 1));
        if (bit == 9) {
          if (line == 1) from_board_.push_back(rx_byte_);
          rx_byte_ = 0;
          rx_phase_ = -1;
        }
      }
    }
  }

  void run() {
    uint8_t buf[1024];
    while (!stop_) {
      const ssize_t k = ::read(master_, buf, sizeof buf);
      if (k > 0) to_board_.insert(to_board_.end(), buf, buf + k);
      for (int i = 0; i < 2000; ++i) tick();
      if (!from_board_.empty()) {
        std::vector<uint8_t> out(from_board_.begin(), from_board_.end());
        from_board_.clear();
        size_t off = 0;
        while (off < out.size()) {
          const ssize_t w = ::write(master_, out.data() + off, out.size() - off);
          if (w > 0) off += static_cast<size_t>(w);
        }
      }
    }
  }

  int master_ = -1;
  std::string port_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vnasa_icebreaker> top_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::deque<uint8_t> to_board_, from_board_;
  std::deque<int> tx_bits_;
  int tx_left_ = 0;
  int rx_phase_ = -1;
  uint8_t rx_byte_ = 0;
  std::atomic<uint64_t> cycle_{0};
};

// The UART device connected to its own simulated board.
class BoardDevice final : public nasa::testing::OwningDevice<BoardSim> {
 public:
  BoardDevice(const hw::Config& cfg, uint64_t bytes) {
    uart::LinkOptions o;
    // simulated time runs far slower than the real clock
    o.response_timeout_ms = 3000 * nasa::testing::kSanitizerSlowdown;
    o.clock_hz = 2e5;
    dev_ = uart::make_uart_device(board_.port(), cfg, bytes, o);
  }
};

// The firmware's variables and stack, the last kRamBytes of main memory, are out of the host's
// reach: a memory frame that reaches into them is refused (BAD_ADDR) before it writes anything,
// and the firmware runs on. The host page below them is the host's.
TEST(BoardIcebreaker, TheFirmwaresRamIsOutOfTheHostsReach) {
  const auto& cfg = config_by_name("up5k");
  ASSERT_EQ(cfg.host_space() + hw::mcu::kRamBytes, uint64_t{1} << cfg.addr_bits);
  BoardDevice dev(cfg, uint64_t{1} << cfg.addr_bits);
  const std::vector<uint8_t> junk(hw::mcu::kRamBytes, 0xFF);
  for (const uint64_t at : {cfg.host_space(), cfg.host_space() - 4}) {
    try {
      dev.write_memory(at, std::span(junk).first(64));
      ADD_FAILURE() << "a write at " << at << " into the firmware's RAM was taken";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("BAD_ADDR"), std::string::npos) << e.what();
    }
  }
  std::vector<uint8_t> back(4, 0);
  dev.write_memory(cfg.host_space() - 4, std::span(junk).first(4));  // the page's last word
  dev.read_memory(cfg.host_space() - 4, back);
  EXPECT_EQ(back, std::vector<uint8_t>(4, 0xFF));
  // the firmware answers a run: an empty program ends with EmptyProgram
  dev.write_csr(static_cast<uint32_t>(hw::Csr::DescCount), 0);
  dev.start();
  const auto w = dev.wait(1'000'000);
  EXPECT_TRUE(w.done);
  EXPECT_EQ(w.err, hw::Err::EmptyProgram);
}

// (a tiny net of 8 channels: its MBConvs, 1x1 Convs, stem and FC run on the board's MAC array,
// the rest in software on its bit-serial core, which takes hundreds of cycles a MAC)
TEST(BoardIcebreaker, FusedBatchOverTheUartEqualsTheReference) {
  const std::vector<spec::OpSpec> ops = {spec::parse_op("mb_k3_e3"), spec::parse_op("conv_k1"),
                                         spec::parse_op("skip")};
  const auto net = nasa::testing::tiny_net(3, ops, 8);
  const auto w = weights::random_weights(net, 6);
  std::mt19937 rng(3);
  std::vector<floatnet::Tensor> calib;
  std::vector<std::vector<uint8_t>> imgs(16, std::vector<uint8_t>(36));
  std::vector<uint8_t> labels(16);
  for (size_t i = 0; i < imgs.size(); ++i) {
    for (auto& p : imgs[i]) p = static_cast<uint8_t>(rng());
    labels[i] = static_cast<uint8_t>(rng() % 4);
    if (i < 4) calib.push_back(floatnet::image_from_u8(imgs[i].data(), 6, 6, 1));
  }
  const auto q = compile::quantize(net, w, calib);
  const auto cands = fusion::random_candidates(net, 5, 2);
  const auto& cfg = config_by_name("up5k");
  const auto [a, b] = nasa::testing::expect_fused_like_ref(
      q, cfg, [](const hw::Config& c, uint64_t m) { return std::make_unique<BoardDevice>(c, m); },
      "uart", cands, imgs, labels, /*mini_batch=*/4);
  EXPECT_EQ(a.macs, b.macs);
  // the ref device of up5k is the board's cycle-exact model: the board's own counter agrees
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_GT(b.cycles, 0u);
}

// The default supernet, fmnist-mb14 (28x28 inputs, 14x14x16 to 7x7x240 activations, 225,186
// weights: more than the board's 128 KB), on the board: the host splits the batch into as many
// batch runs as the board's memory needs (compile::plan_batch), and every run's logits, counts
// and nodes over the link equal the board's cycle-exact model's, whose logits equal the engine's
// reference model's (config sim) for the same batch.
TEST(BoardIcebreaker, DefaultSupernetFusedOverTheUartEqualsTheReference) {
  const auto net = spec::builtin_space("fmnist-mb14");
  const auto w = weights::random_weights(net, 7);
  std::mt19937 rng(5);
  std::vector<floatnet::Tensor> calib;
  std::vector<std::vector<uint8_t>> imgs(2, std::vector<uint8_t>(28 * 28));
  std::vector<uint8_t> labels(imgs.size());
  for (size_t i = 0; i < imgs.size(); ++i) {
    for (auto& p : imgs[i]) p = static_cast<uint8_t>(rng());
    labels[i] = static_cast<uint8_t>(rng() % 10);
    calib.push_back(floatnet::image_from_u8(imgs[i].data(), 28, 28, 1));
  }
  const auto q = compile::quantize(net, w, calib);
  // three candidates sharing the stem and their first layers (a fused batch), small ops
  const std::vector<spec::Candidate> cands = {
      {0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 5}, {0, 0, 0, 5, 0, 0}};
  const auto& cfg = config_by_name("up5k");
  const auto [a, b] = nasa::testing::expect_fused_like_ref(
      q, cfg, [](const hw::Config& c, uint64_t m) { return std::make_unique<BoardDevice>(c, m); },
      "uart", cands, imgs, labels, /*mini_batch=*/2);
  EXPECT_EQ(a.runs, b.runs);
  EXPECT_EQ(a.macs, b.macs);
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.counters, b.counters);
  // the engine's reference model (config sim, one batch run) classifies and scores alike
  runtime::Runtime sim(
      q, config_by_name("sim"),
      [](const hw::Config& c, uint64_t m) { return device::make_ref_device(c, m); }, "ref");
  compile::BatchOptions bo;
  bo.dump_logits = true;
  bo.mini_batch = 2;
  const auto s = sim.evaluate_fused(cands, 0, imgs, labels, bo);
  EXPECT_EQ(s.logits, b.logits);
  EXPECT_EQ(s.correct, b.correct);
}

}  // namespace
