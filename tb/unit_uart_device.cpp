// make_uart_device over a pseudo-terminal: the host side is the real serial code (termios, frames,
// timeouts, retries); on the other end of the pty a board emulator runs the reference bridge
// (nasa::uart::BridgeModel) in front of the reference device, runs a start behind the link as a
// board does, and damages traffic on purpose (bit flips in requests and responses, dropped
// responses). A fused batch of 4 candidates x 16 images evaluated through the link gives exactly
// the reference model's results, with retries actually exercised; errors name the port.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "nasa/compiler.h"
#include "nasa/data.h"
#include "nasa/float_eval.h"
#include "nasa/fusion.h"
#include "nasa/runtime.h"
#include "nasa/supernet_weights.h"
#include "nasa/uart_device.h"
#include "nasa/uart_protocol.h"
#include "fused_vs_ref.h"
#include "owning_device.h"
#include "sanitizer_slowdown.h"

namespace {

using namespace nasa;

// The board end of a pty: the reference bridge and device, with injected faults: random ones
// (seeded), or only a flip of bit 0 of incoming byte number `damage_byte` (counted from 0), or
// none (kNoFaults).
class PtyBoard {
 public:
  static constexpr uint64_t kRandomFaults = ~uint64_t{0};
  static constexpr uint64_t kNoFaults = kRandomFaults - 1;  // (a byte never reached)
  PtyBoard(const hw::Config& cfg, uint64_t memory_bytes, uint32_t fault_seed,
           uint64_t damage_byte = kRandomFaults)
      : dev_(device::make_ref_device(cfg, memory_bytes)),
        rng_(fault_seed),
        damage_byte_(damage_byte) {
    master_ = posix_openpt(O_RDWR | O_NOCTTY);
    if (master_ < 0 || grantpt(master_) != 0 || unlockpt(master_) != 0) {
      throw std::runtime_error("cannot open a pseudo-terminal");
    }
    port_ = ptsname(master_);
    uart::BridgeModel::Memory mem{memory_bytes,
                                  [this](uint32_t a, std::span<const uint8_t> b) {
                                    finish_run();
                                    dev_->write_memory(a, b);
                                  },
                                  [this](uint32_t a, std::span<uint8_t> out) {
                                    finish_run();
                                    dev_->read_memory(a, out);
                                  }};
    bridge_ = std::make_unique<uart::BridgeModel>(
        mem, [this](uint32_t a) { return read_csr(a); },
        [this](uint32_t a, uint32_t v) { write_csr(a, v); });
    thread_ = std::thread([this] { serve(); });
  }
  ~PtyBoard() {
    stop_ = true;
    thread_.join();
    finish_run();
    ::close(master_);
  }
  const std::string& port() const { return port_; }
  uint64_t faults() const { return faults_; }
  uint64_t rejected() const { return rejected_; }

 private:
  void serve() {
    uint8_t buf[4096];
    while (!stop_) {
      pollfd p{master_, POLLIN, 0};
      if (::poll(&p, 1, 1) <= 0) {  // a quiet millisecond: a whole gap at 1 Mbaud
        respond(bridge_->idle(uart::kDefaultGapBytes));
        continue;
      }
      const ssize_t k = ::read(master_, buf, sizeof buf);
      if (k <= 0) continue;
      for (ssize_t i = 0; i < k; ++i) {
        uint8_t b = buf[i];
        if (damage_byte_ != kRandomFaults) {
          if (received_++ == damage_byte_) {
            b ^= 1u;
            ++faults_;
          }
        } else if (rng_() % 20000 == 0) {  // a bit flip on the way in
          b ^= static_cast<uint8_t>(1u << (rng_() % 8));
          ++faults_;
        }
        respond(bridge_->rx(b));
      }
    }
  }
  // As on the board, a start answers at once and the run goes on behind the link: STATUS reads
  // busy until it ends (the reference device runs a start to its end inside write_csr, which
  // would hold the response back for the whole run, seconds in a sanitizer build).
  void write_csr(uint32_t a, uint32_t v) {
    finish_run();
    if (a == static_cast<uint32_t>(hw::Csr::Ctrl) && (v & (hw::kCtrlStart | hw::kCtrlBatch))) {
      running_ = true;
      run_ = std::thread([this, a, v] {
        dev_->write_csr(a, v);
        running_ = false;
      });
      return;
    }
    dev_->write_csr(a, v);
  }
  uint32_t read_csr(uint32_t a) {
    if (running_ && a == static_cast<uint32_t>(hw::Csr::Status)) return hw::kStatusBusy;
    finish_run();
    return dev_->read_csr(a);
  }
  void finish_run() {
    if (run_.joinable()) run_.join();
  }

  // (the count of rejected frames before the response leaves: the host may look at it then)
  void respond(std::vector<uint8_t> out) {
    rejected_ = bridge_->frames_rejected();
    put(std::move(out));
  }
  void put(std::vector<uint8_t> out) {
    if (out.empty()) return;
    const uint32_t r = damage_byte_ != kRandomFaults ? 2 : rng_() % 200;
    if (r == 0) {  // the response is lost
      ++faults_;
      return;
    }
    if (r == 1) {  // a bit flip on the way out
      out[rng_() % out.size()] ^= static_cast<uint8_t>(1u << (rng_() % 8));
      ++faults_;
    }
    size_t off = 0;
    while (off < out.size()) {
      const ssize_t k = ::write(master_, out.data() + off, out.size() - off);
      if (k > 0) off += static_cast<size_t>(k);
    }
  }

  std::unique_ptr<device::Device> dev_;
  std::unique_ptr<uart::BridgeModel> bridge_;
  std::mt19937 rng_;
  uint64_t damage_byte_, received_ = 0;
  int master_ = -1;
  std::string port_;
  std::thread thread_, run_;
  std::atomic<bool> stop_{false}, running_{false};
  std::atomic<uint64_t> faults_{0}, rejected_{0};
};

// The UART device connected to its own board emulator.
class LinkedDevice final : public nasa::testing::OwningDevice<PtyBoard> {
 public:
  LinkedDevice(const hw::Config& cfg, uint64_t bytes, uint32_t seed)
      : OwningDevice(cfg, bytes, seed) {
    uart::LinkOptions o;
    o.response_timeout_ms = 20 * nasa::testing::kSanitizerSlowdown;
    dev_ = uart::make_uart_device(board_.port(), cfg, bytes, o);
  }
  static inline std::atomic<uint64_t> retries{0}, faults{0};
  ~LinkedDevice() override {
    retries += uart::link_stats(*dev_)->retries;
    faults += board_.faults();
  }
};

TEST(UartDevice, FusedBatchOverAFaultyLinkEqualsTheReference) {
  const auto net = spec::builtin_space(std::string(spec::kDefaultSpace));
  const auto w = weights::random_weights(net, 4);
  const auto train = data::load_fashion_mnist("train", 8);
  const auto test = data::load_fashion_mnist("test", 16);
  const auto q = compile::quantize(net, w, floatnet::dataset_images(train, 0, train.size()));
  const auto cands = fusion::random_candidates(net, 4, 9);
  const auto imgs = test.byte_images(0, 16);
  const auto labels = test.label_range(0, 16);
  const auto& cfg = config_by_name("sim");
  const auto [a, b] = nasa::testing::expect_fused_like_ref(
      q, cfg,
      [](const hw::Config& c, uint64_t m) { return std::make_unique<LinkedDevice>(c, m, 77); },
      "uart", cands, imgs, labels, /*mini_batch=*/8);
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.counters, b.counters);
  // the faults happened and were recovered from
  EXPECT_GT(LinkedDevice::faults.load(), 0u);
  EXPECT_GT(LinkedDevice::retries.load(), 0u);
}

TEST(UartDevice, ErrorsNameThePort) {
  const auto& cfg = config_by_name("sim");
  try {
    uart::make_uart_device("/nonexistent/ttyUSB9", cfg, 1024);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/ttyUSB9"), std::string::npos) << e.what();
  }
  LinkedDevice d(cfg, 1024, 1);
  std::vector<uint8_t> buf(8);
  EXPECT_THROW(d.read_memory(1020, buf), std::out_of_range);
  d.write_memory(0, std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8});
  d.read_memory(0, buf);
  EXPECT_EQ(buf, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(d.read_csr(static_cast<uint32_t>(hw::Csr::Magic)), 0x4E415341u);
}

// A damaged header is answered before its CRC arrives (here the length of the first request, a
// READ_CSR, gets BAD_LEN): the host sends the request again instead of taking it for a refusal.
TEST(UartDevice, RetriesARequestWhoseHeaderGotDamaged) {
  const auto& cfg = config_by_name("sim");
  // request bytes: sync, command, sequence number, length (low byte at 3), address, CRC
  PtyBoard board(cfg, 1024, 0, /*damage_byte=*/3);
  const auto dev = uart::make_uart_device(board.port(), cfg, 1024);
  EXPECT_EQ(board.faults(), 1u);
  EXPECT_GE(board.rejected(), 1u);  // (BAD_LEN; a retry sent into the bridge's quiet time
  EXPECT_GE(uart::link_stats(*dev)->retries, 1u);  // is lost and sent again after a timeout)
  EXPECT_EQ(dev->read_csr(static_cast<uint32_t>(hw::Csr::Magic)), 0x4E415341u);
}

// The bridge takes a frame with the sequence number, command and address of the last one it
// executed for a retry. Sequence numbers wrap after 256 frames, and READ_MEM frames do not count
// as executed: a CSR write after 255 of them must still get a number of its own.
TEST(UartDevice, AWriteAfter255MemoryReadsIsNotTakenForARetry) {
  const auto& cfg = config_by_name("sim");
  PtyBoard board(cfg, 1024, 0, PtyBoard::kNoFaults);
  uart::LinkOptions o;
  o.check_identity = false;  // (the first frame is the write)
  const auto dev = uart::make_uart_device(board.port(), cfg, 1024, o);
  const auto win = static_cast<uint32_t>(hw::Csr::WinBase);
  dev->write_csr(win, 5);
  std::vector<uint8_t> byte(1);
  for (int i = 0; i < 255; ++i) dev->read_memory(0, byte);
  dev->write_csr(win, 7);
  EXPECT_EQ(dev->read_csr(win), 7u);
  EXPECT_EQ(board.faults(), 0u);
}

// The host set up for one configuration refuses a board of another, saying which it is.
TEST(UartDevice, RefusesABoardOfAnotherConfiguration) {
  PtyBoard board(config_by_name("sim"), 1024, 3);
  try {
    uart::make_uart_device(board.port(), config_by_name("fpga"), 1024);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("configuration `sim`"), std::string::npos) << m;
    EXPECT_NE(m.find("pass --config sim"), std::string::npos) << m;
  }
  EXPECT_NO_THROW(uart::make_uart_device(board.port(), config_by_name("sim"), 1024));
}

}  // namespace
