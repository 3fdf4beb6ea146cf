#include "nasa/uart_device.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <bitset>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "nasa/mcu_page.h"
#include "nasa/uart_protocol.h"

namespace nasa::uart {
namespace {

using Clock = std::chrono::steady_clock;

speed_t baud_constant(uint32_t baud) {
  switch (baud) {
    case 9600: return B9600;
    case 115200: return B115200;
    case 230400: return B230400;
    case 460800: return B460800;
    case 921600: return B921600;
    case 1000000: return B1000000;
    case 2000000: return B2000000;
    case 3000000: return B3000000;
    default:
      throw std::invalid_argument(fmt::format(
          "uart: baud {} is not supported (9600, 115200, 230400, 460800, 921600, 1000000, "
          "2000000, 3000000)",
          baud));
  }
}

class UartDevice final : public device::Device {
 public:
  UartDevice(const std::string& port, const hw::Config& cfg, uint64_t memory_bytes,
             const LinkOptions& o)
      : port_(port), cfg_(cfg), mem_size_(memory_bytes), o_(o) {
    fd_ = ::open(port.c_str(), O_RDWR | O_NOCTTY | O_NONBLOCK);
    if (fd_ < 0) {
      throw std::runtime_error(
          fmt::format("uart: cannot open '{}': {} (is the iCEBreaker plugged in and flashed with "
                      "`make prog`? its UART is the second of its two serial ports)",
                      port, std::strerror(errno)));
    }
    termios t{};
    if (tcgetattr(fd_, &t) != 0) {
      const std::string why = std::strerror(errno);
      ::close(fd_);
      throw std::runtime_error(fmt::format("uart: '{}' is not a serial port: {}", port, why));
    }
    cfmakeraw(&t);
    t.c_cflag |= CLOCAL | CREAD;
    t.c_cflag &= ~static_cast<tcflag_t>(CSTOPB | PARENB | CRTSCTS);
    const speed_t sp = baud_constant(o.baud);
    cfsetispeed(&t, sp);
    cfsetospeed(&t, sp);
    t.c_cc[VMIN] = 0;
    t.c_cc[VTIME] = 0;
    if (tcsetattr(fd_, TCSANOW, &t) != 0) {
      const std::string why = std::strerror(errno);
      ::close(fd_);
      throw std::runtime_error(fmt::format("uart: cannot configure '{}': {}", port, why));
    }
    tcflush(fd_, TCIOFLUSH);
  }
  ~UartDevice() override {
    if (fd_ >= 0) ::close(fd_);
  }

  std::string name() const override { return "uart"; }
  const hw::Config& config() const override { return cfg_; }
  uint64_t memory_size() const override { return mem_size_; }

  void write_memory(uint64_t addr, std::span<const uint8_t> bytes) override {
    check_range(addr, bytes.size(), "write");
    for (size_t off = 0; off < bytes.size(); off += kMaxPayload) {
      const size_t n = std::min(kMaxPayload, bytes.size() - off);
      transact(uart::write_mem(next_seq(Cmd::WriteMem), static_cast<uint32_t>(addr + off),
                               bytes.subspan(off, n)));
    }
  }
  void read_memory(uint64_t addr, std::span<uint8_t> out) override {
    check_range(addr, out.size(), "read");
    for (size_t off = 0; off < out.size(); off += kMaxPayload) {
      const size_t n = std::min(kMaxPayload, out.size() - off);
      const Response r = transact(uart::read_mem(
          next_seq(Cmd::ReadMem), static_cast<uint32_t>(addr + off), static_cast<uint16_t>(n)));
      if (r.payload.size() != n) {
        throw std::runtime_error(fmt::format("uart '{}': READ_MEM of {} bytes returned {}", port_,
                                             n, r.payload.size()));
      }
      std::copy(r.payload.begin(), r.payload.end(), out.begin() + static_cast<std::ptrdiff_t>(off));
    }
  }
  // The board's controller (Mcu) serves its live CSRs itself; the others are words of its host
  // page, reached with memory frames (nasa/mcu_page.h).
  void write_csr(uint32_t addr, uint32_t value) override {
    if (!cfg_.mcu || device::McuPage::live(addr)) {
      port_write(addr, value);
      if (addr == static_cast<uint32_t>(hw::Csr::Ctrl) &&
          (value & (hw::kCtrlStart | hw::kCtrlBatch))) {
        running_ = true;
      }
      return;
    }
    // (a run starts only from the host's CTRL write: none since the last STATUS without busy,
    // none running)
    if (running_) {
      running_ = (port_read(static_cast<uint32_t>(hw::Csr::Status)) & hw::kStatusBusy) != 0;
    }
    page_.write(page_port_, addr, value, running_);
  }
  uint32_t read_csr(uint32_t addr) override {
    if (!cfg_.mcu || device::McuPage::live(addr)) return port_read(addr);
    return page_.read(page_port_, addr);
  }
  void port_write(uint32_t addr, uint32_t value) {
    transact(uart::write_csr(next_seq(Cmd::WriteCsr), addr, value));
  }
  uint32_t port_read(uint32_t addr) {
    return word(transact(uart::read_csr(next_seq(Cmd::ReadCsr), addr)), "READ_CSR");
  }
  void start() override {
    write_csr(static_cast<uint32_t>(hw::Csr::Ctrl), hw::kCtrlStart);
  }
  device::WaitResult wait(uint64_t timeout_cycles) override {
    // The board counts cycles; the host polls STATUS until done or the cycle budget (at the
    // core's clock, plus a second of slack for the link) has passed.
    const auto limit = Clock::now() +
                       std::chrono::duration<double>(static_cast<double>(timeout_cycles) /
                                                         o_.clock_hz +
                                                     1.0);
    device::WaitResult w;
    const auto t0 = Clock::now();
    for (;;) {
      const uint32_t st = read_csr(static_cast<uint32_t>(hw::Csr::Status));
      if (st & hw::kStatusDone) {
        w.done = true;
        break;
      }
      const auto now = Clock::now();
      if (now > limit) {
        w.timeout = true;
        return w;
      }
      // the next poll after an eighth of the time waited so far (1 to 100 ms): a short run ends
      // with little delay, a long one costs few frames on the link
      std::this_thread::sleep_for(std::clamp(
          std::chrono::duration_cast<std::chrono::milliseconds>((now - t0) / 8),
          std::chrono::milliseconds(1), std::chrono::milliseconds(100)));
    }
    w.err = static_cast<hw::Err>(read_csr(static_cast<uint32_t>(hw::Csr::ErrCode)));
    w.err_index = read_csr(static_cast<uint32_t>(hw::Csr::ErrIndex));
    w.layers_done = read_csr(static_cast<uint32_t>(hw::Csr::LayersDone));
    return w;
  }

  const LinkStats& stats() const { return stats_; }

 private:
  // Every request but READ_MEM executes: the bridge records it as its last executed frame.
  static bool executes(Cmd c) { return c != Cmd::ReadMem; }
  // A new request's sequence number. One that executes never gets a number the bridge may hold
  // as its last executed frame's, which it would take for a retry and not execute: the number of
  // the last executing request answered OK, and of every executing request after it that failed
  // (it may or may not have run).
  uint8_t next_seq(Cmd c) {
    if (maybe_last_.all()) maybe_last_.reset();  // (256 failures in a row: a dead link anyway)
    do {
      ++seq_;
    } while (executes(c) && maybe_last_[seq_]);
    return seq_;
  }
  // The outcome of an executing request: answered OK (the bridge's last is now this one) or not.
  void executed(uint8_t seq, bool ok) {
    if (ok) maybe_last_.reset();
    maybe_last_[seq] = true;
  }

  // A response's 4-byte payload as a little-endian word.
  uint32_t word(const Response& r, const char* what) const {
    if (r.payload.size() != 4) {
      throw std::runtime_error(
          fmt::format("uart '{}': {} returned {} bytes, not 4", port_, what, r.payload.size()));
    }
    return uint32_t{r.payload[0]} | (uint32_t{r.payload[1]} << 8) | (uint32_t{r.payload[2]} << 16) |
           (uint32_t{r.payload[3]} << 24);
  }

  void check_range(uint64_t addr, size_t n, const char* what) const {
    if (addr > mem_size_ || n > mem_size_ - addr) {
      throw std::out_of_range(fmt::format("uart device: {} of {} bytes at {:#x} beyond the {:#x}-byte memory",
                                          what, n, addr, mem_size_));
    }
  }

  void send(const std::vector<uint8_t>& bytes) {
    size_t off = 0;
    while (off < bytes.size()) {
      const ssize_t k = ::write(fd_, bytes.data() + off, bytes.size() - off);
      if (k > 0) {
        off += static_cast<size_t>(k);
      } else if (k < 0 && errno != EAGAIN && errno != EINTR) {
        throw std::runtime_error(fmt::format("uart: write to '{}' failed: {}", port_,
                                             std::strerror(errno)));
      } else {
        pollfd p{fd_, POLLOUT, 0};
        ::poll(&p, 1, 100);
      }
    }
    stats_.bytes_sent += bytes.size();
  }

  // The next response, or nothing when none arrives before `deadline`.
  std::optional<Received> receive(Clock::time_point deadline) {
    ResponseParser parser;
    uint8_t buf[512];
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                              Clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      const int r = ::poll(&p, 1, static_cast<int>(left.count()));
      if (r <= 0) continue;
      const ssize_t k = ::read(fd_, buf, sizeof buf);
      if (k <= 0) continue;
      stats_.bytes_received += static_cast<uint64_t>(k);
      for (ssize_t i = 0; i < k; ++i) {
        if (auto got = parser.feed(buf[i])) {
          // anything after the response belongs to nothing we asked for: dropped
          return got;
        }
      }
    }
  }

  // Discards whatever is still arriving until the line has been quiet for a gap.
  void settle(std::chrono::milliseconds quiet) {
    uint8_t buf[512];
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(quiet.count())) <= 0) return;
      if (::read(fd_, buf, sizeof buf) <= 0) return;
    }
  }

  Response transact(const Request& req) {
    if (!executes(req.cmd)) return attempt_all(req);
    try {
      Response r = attempt_all(req);
      executed(req.seq, true);
      return r;
    } catch (...) {
      executed(req.seq, false);
      throw;
    }
  }

  Response attempt_all(const Request& req) {
    const auto frame = encode(req);
    // transfer time of the request and the largest response at the baud rate (10 bits a byte)
    const double byte_s = 10.0 / o_.baud;
    const auto budget = std::chrono::milliseconds(o_.response_timeout_ms) +
                        std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::duration<double>((frame.size() + kMaxPayload + 16) *
                                                          byte_s));
    const auto gap = std::chrono::milliseconds(
        1 + static_cast<int>(2 * kDefaultGapBytes * byte_s * 1000));
    std::string last = "no response";
    ++stats_.frames;
    for (int attempt = 0; attempt <= o_.retries; ++attempt) {
      if (attempt > 0) {
        ++stats_.retries;
        // (an early answer, BAD_CMD / BAD_LEN, can come while the frame is still going out: the
        // bridge wants a quiet gap after its last byte)
        tcdrain(fd_);
        settle(gap);
      }
      send(frame);
      const auto got = receive(Clock::now() + budget);
      if (!got) {
        last = "no response";
        continue;
      }
      if (!got->crc_ok) {
        last = "a response with a bad CRC";
        continue;
      }
      const Response& r = got->response;
      if (r.seq != req.seq) {
        last = fmt::format("a response to sequence number {} (expected {})", r.seq, req.seq);
        continue;
      }
      if (r.status == Status::Ok) return r;
      if (r.status != Status::BadAddr) {
        // any other status (BAD_CRC, TIMEOUT, and BAD_CMD / BAD_LEN: the bridge checks a header
        // before its CRC has arrived, and this host sends only well-formed headers): the request
        // got damaged on the way, send it again
        last = fmt::format("status {}", status_name(r.status));
        continue;
      }
      throw std::runtime_error(fmt::format(
          "uart '{}': the board rejected a request (command {}, address {:#x}, length {}): {}",
          port_, static_cast<int>(req.cmd), req.addr, req.len, status_name(r.status)));
    }
    throw std::runtime_error(fmt::format("uart '{}': request (command {}, address {:#x}, length "
                                         "{}) failed after {} attempts: {}",
                                         port_, static_cast<int>(req.cmd), req.addr, req.len,
                                         o_.retries + 1, last));
  }

  std::string port_;
  hw::Config cfg_;
  uint64_t mem_size_;
  LinkOptions o_;
  int fd_ = -1;
  uint8_t seq_ = 0;
  std::bitset<256> maybe_last_;
  LinkStats stats_;
  // the host page (Mcu): its words through memory frames (inside the board's memory, past the
  // data the host asked for), whether a run may be busy
  device::McuPage page_{cfg_};
  device::McuPage::Port page_port_{
      .read_word =
          [this](uint32_t a) {
            return word(transact(uart::read_mem(next_seq(Cmd::ReadMem), a, 4)), "READ_MEM");
          },
      .write_word =
          [this](uint32_t a, uint32_t v) {
            const uint8_t b[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                                  static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
            transact(uart::write_mem(next_seq(Cmd::WriteMem), a, b));
          },
      .read_csr = [this](uint32_t a) { return port_read(a); },
      .write_csr = [this](uint32_t a, uint32_t v) { port_write(a, v); },
  };
  bool running_ = true;  // (unknown at first: STATUS tells)
};

}  // namespace

std::unique_ptr<device::Device> make_uart_device(const std::string& port, const hw::Config& cfg,
                                                 uint64_t memory_bytes, const LinkOptions& options) {
  auto dev = std::make_unique<UartDevice>(port, cfg, memory_bytes, options);
  if (options.check_identity) device::check_identity(*dev, cfg);
  return dev;
}

const LinkStats* link_stats(const device::Device& dev) {
  const auto* u = dynamic_cast<const UartDevice*>(&dev);
  return u ? &u->stats() : nullptr;
}

}  // namespace nasa::uart
