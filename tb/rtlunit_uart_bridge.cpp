// rtl/nasa_uart_bridge.sv alone against nasa::uart::BridgeModel: the same byte streams go to both
// (bytes a few cycles apart, a quiet gap after every frame), and every response byte, every
// memory byte and every CSR write must agree. A byte memory with random backpressure and a random
// transmitter backpressure surround the RTL. Covers round trips, each kind of bad frame, retried
// writes and reads (against the last executed frame only, kept in the bridge's EBR), and a fuzz
// of 10,000 corrupted frames: no write from any bad frame, and the good frame after each one
// works.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "Vnasa_uart_bridge.h"
#include "nasa/sim/bus.h"
#include "nasa/sim/vbench.h"
#include "nasa/uart_protocol.h"
#include "uart_fuzz.h"

namespace {

using namespace nasa::uart;
namespace bus = nasa::sim::bus;

constexpr size_t kMemBytes = 1 << 20;   // the RTL's default MemBytes
constexpr uint64_t kGapCycles = 400;    // the RTL's default GapCycles
constexpr uint64_t kByteSpacing = 6;    // cycles between received bytes inside a frame

uint32_t lookup(const std::map<uint32_t, uint32_t>& m, uint32_t a) {
  const auto it = m.find(a);
  return it == m.end() ? 0 : it->second;
}

class Bench {
 public:
  // spacing: cycles from one received byte to the next (the bridge takes them two apart at least)
  explicit Bench(uint32_t seed, uint64_t spacing = kByteSpacing)
      : spacing_(spacing),
        top_("uart_bridge", seed),
        rng_(seed),
        mem_(kMemBytes, 0),
        // the bridge's CSR bus carries the low 12 bits of a frame's CSR address (the CSR map)
        model_(
            kMemBytes, [this](uint32_t a) { return lookup(model_csr_, a & 0xFFFu); },
            [this](uint32_t a, uint32_t v) { model_csr_[a & 0xFFFu] = v; }) {
    top_->rst_ni = 0;
    top_->rx_valid_i = 0;
    top_->tx_ready_i = 0;
    bus::ByteRsp{}.put(top_->mrsp_i);
    bus::CsrRsp{}.put(top_->csr_rsp_i);
    top_.settle();
    tick();
    tick();
    top_->rst_ni = 1;
    tick();
  }

  // Sends a frame to both, then keeps the line quiet for a gap; compares what came back.
  void send(const std::vector<uint8_t>& bytes, const std::string& what) {
    std::vector<uint8_t> want;
    for (uint8_t b : bytes) {
      auto r = model_.rx(b);
      want.insert(want.end(), r.begin(), r.end());
      top_->rx_valid_i = 1;
      top_->rx_data_i = b;
      tick();
      top_->rx_valid_i = 0;
      for (uint64_t i = 1; i < spacing_; ++i) tick();
    }
    for (unsigned i = 0; i < kDefaultGapBytes; ++i) {
      auto r = model_.idle(1);
      want.insert(want.end(), r.begin(), r.end());
    }
    // the quiet gap, then until the RTL is idle again (it finishes its response)
    for (uint64_t i = 0; i < kGapCycles + 8 || top_->busy_o; ++i) {
      tick();
      ASSERT_LT(i, 200000u) << what << ": the bridge never went idle";
    }
    ASSERT_EQ(got_, want) << what;
    ASSERT_EQ(csr_, model_csr_) << what;
    got_.clear();
  }

  bool memory_matches() const { return mem_ == model_.memory(); }
  BridgeModel& model() { return model_; }
  uint64_t rtl_writes() const { return writes_; }

 private:
  void tick() {
    // inputs for this cycle (random backpressure), then the rising edge
    // (the read responses of last cycle's requests are already on mrsp_i / csr_rsp_i)
    top_->tx_ready_i = (rng_() % 4) != 0;
    mrsp_.ready = (rng_() % 3) != 0;
    crsp_.ready = (rng_() % 2) != 0;
    mrsp_.put(top_->mrsp_i);
    crsp_.put(top_->csr_rsp_i);
    top_.settle();
    const bool tx = top_->tx_valid_o && top_->tx_ready_i;
    const uint8_t tx_byte = top_->tx_data_o;
    const bus::ByteReq m = bus::ByteReq::get(top_->mreq_o);
    const bool req = m.valid && mrsp_.ready;
    const bus::CsrReq c = bus::CsrReq::get(top_->csr_req_o);
    const bool csr = c.valid && crsp_.ready;
    top_.tick();
    // the memory answers a read, and the CSR bus a read, on the next cycle
    bus::ByteRsp mrsp;
    bus::CsrRsp crsp;
    if (tx) got_.push_back(tx_byte);
    if (req) {
      ASSERT_LT(m.addr, kMemBytes) << "memory access beyond the memory";
      if (m.we) {
        mem_[m.addr] = m.wdata;
        ++writes_;
      } else {
        mrsp.valid = true;
        mrsp.rdata = mem_[m.addr];
      }
    }
    if (csr && c.we) csr_[c.addr] = c.wdata;
    if (csr && !c.we) {
      crsp.valid = true;
      crsp.rdata = lookup(csr_, c.addr);
    }
    mrsp_ = mrsp;
    crsp_ = crsp;
    mrsp_.put(top_->mrsp_i);
    crsp_.put(top_->csr_rsp_i);
    top_.settle();
  }

  uint64_t spacing_;
  nasa::sim::Bench<Vnasa_uart_bridge> top_;
  std::mt19937 rng_;
  std::vector<uint8_t> mem_;
  std::map<uint32_t, uint32_t> csr_, model_csr_;
  bus::ByteRsp mrsp_;  // what the memory and the CSR bus present this cycle
  bus::CsrRsp crsp_;
  BridgeModel model_;
  std::vector<uint8_t> got_;
  uint64_t writes_ = 0;
};

TEST(UartBridgeRtl, RoundTripsAndEachBadFrame) {
  Bench b(1);
  std::vector<uint8_t> data(256);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 13 + 5);
  b.send(encode(write_mem(1, 5000, data)), "write 256");
  b.send(encode(read_mem(2, 5000, 256)), "read 256");
  b.send(encode(read_mem(3, 4990, 20)), "read 20");
  b.send(encode(write_csr(4, 0x40, 0x12345678)), "csr write");
  b.send(encode(write_csr(4, 0x40, 0x12345678)), "csr write retried (not executed again)");
  b.send(encode(read_csr(5, 0x40)), "csr read");
  b.send(encode(read_csr(5, 0x40)), "csr read retried (the same value, not read again)");
  b.send(encode(write_mem(6, kMemBytes - 4, data)), "write beyond memory");
  b.send(encode(read_mem(7, kMemBytes - 1, 2)), "read beyond memory");
  // the address check at its edges: the RTL checks addr + len <= MemBytes in the memory's
  // address width plus the address's high bits being zero; the model in 64 bits
  b.send(encode(read_mem(7, kMemBytes - 3, 3)), "read ending at the memory's last byte");
  b.send(encode(read_mem(7, kMemBytes, 1)), "read at the memory's size");
  b.send(encode(read_mem(7, kMemBytes | 5u, 1)), "read with an address bit above the memory");
  b.send(encode(read_mem(7, 0x80000000u, 4)), "read with the top address bit");
  b.send(encode(read_mem(7, 0xFFFFFFF0u, 32)), "read whose end wraps past 2^32");
  auto r = write_mem(8, 0, data);
  r.len = 257;
  b.send(encode(r), "length 257");
  r = read_csr(9, 0);
  r.len = 3;
  b.send(encode(r), "csr length 3");
  r.cmd = static_cast<Cmd>(0);
  r.len = 4;
  b.send(encode(r), "command 0");
  const auto good = encode(write_mem(10, 100, std::vector<uint8_t>(12, 0xEE)));
  b.send(std::vector<uint8_t>(good.begin(), good.begin() + 15), "truncated");
  b.send({kRequestSync}, "sync only");
  for (size_t byte = 1; byte < good.size(); ++byte) {
    auto bad = good;
    bad[byte] ^= static_cast<uint8_t>(1u << (byte % 8));
    b.send(bad, fmt::format("bit flip in byte {}", byte));
  }
  b.send(good, "good after all that");
  EXPECT_TRUE(b.memory_matches());
  EXPECT_EQ(b.model().writes_executed(), 3u);  // 256-byte write, one CSR write, the good write
  EXPECT_EQ(b.rtl_writes(), 256u + 12u);
}

// A write or CSR read whose command, sequence number and address are the last executed one's is
// answered without being executed (a READ_CSR with the value it returned); any other is executed.
// Frames drawn from few commands, sequence numbers and addresses, so that many repeat some
// earlier frame's fields in part or in whole, some corrupted, bytes two cycles apart (the
// bridge's minimum: it compares each header byte with the last frame's, read a cycle ahead).
TEST(UartBridgeRtl, RetriesMatchOnlyTheLastExecutedFrame) {
  Bench b(3, 2);
  std::mt19937 rng(99);
  // (the last address is above the memory: BAD_ADDR for memory frames, an alias for CSR frames)
  const uint32_t addrs[] = {0x40, 0x44, 0x10040, 0x01000040};
  struct Fields {
    uint8_t cmd = 0, seq = 0;
    uint32_t addr = 0;
    bool operator==(const Fields&) const = default;
  };
  std::optional<Fields> last;
  int repeats = 0, executed = 0;
  Request r;
  for (int i = 0; i < 800; ++i) {
    // a third of the frames the previous one again (a retry), the others drawn anew
    const auto seq = static_cast<uint8_t>(rng() % 2);
    const uint32_t addr = addrs[rng() % 4];
    const std::vector<uint8_t> data = {static_cast<uint8_t>(rng()), static_cast<uint8_t>(rng())};
    const uint32_t pick = i == 0 ? 1 : rng() % 6;
    if (pick == 0) r = write_mem(seq, addr, data);
    if (pick == 1) r = read_mem(seq, addr, 2);
    if (pick == 2) r = write_csr(seq, addr, static_cast<uint32_t>(rng()));
    if (pick == 3) r = read_csr(seq, addr);
    auto frame = encode(r);
    const bool corrupt = rng() % 8 == 0;
    if (corrupt) frame.back() ^= 0x40;  // the CRC's high byte
    b.send(frame, fmt::format("frame {}", i));
    if (testing::Test::HasFatalFailure()) return;
    // (how many repeated: the coverage this test needs, not its verdict, which is the model's)
    const Fields f{static_cast<uint8_t>(r.cmd), r.seq, r.addr};
    const bool mem = r.cmd == Cmd::WriteMem || r.cmd == Cmd::ReadMem;
    if (corrupt || r.cmd == Cmd::ReadMem || (mem && r.addr >= kMemBytes)) continue;
    if (last == f) {
      ++repeats;
    } else {
      ++executed;
      last = f;
    }
  }
  EXPECT_TRUE(b.memory_matches());
  EXPECT_GE(repeats, 50);
  EXPECT_GE(executed, 200);
}

TEST(UartBridgeRtl, FuzzTenThousandCorruptedFrames) {
  Bench b(7);
  std::mt19937 rng(424242);
  uint8_t seq = 0;
  uint64_t good_bytes = 0;
  for (int i = 0; i < 10000; ++i) {
    std::vector<uint8_t> data(1 + rng() % 48);
    for (auto& x : data) x = static_cast<uint8_t>(rng());
    auto frame = encode(write_mem(++seq, rng() % (kMemBytes - 64), data));
    nasa::testing::corrupt_frame(frame, rng, data.size(), 300);
    const uint64_t writes = b.rtl_writes();
    b.send(frame, fmt::format("corrupted frame {}", i));
    if (testing::Test::HasFatalFailure()) return;
    ASSERT_EQ(b.rtl_writes(), writes) << "corrupted frame " << i << " wrote memory";
    std::vector<uint8_t> d2(1 + rng() % 16);
    for (auto& x : d2) x = static_cast<uint8_t>(rng());
    b.send(encode(write_mem(++seq, rng() % (kMemBytes - 16), d2)), fmt::format("good {}", i));
    if (testing::Test::HasFatalFailure()) return;
    good_bytes += d2.size();
  }
  EXPECT_TRUE(b.memory_matches());
  EXPECT_EQ(b.rtl_writes(), good_bytes);
}

}  // namespace
