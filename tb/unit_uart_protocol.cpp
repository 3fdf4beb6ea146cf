// The UART link's frames and the reference bridge (docs/uart.md): CRC check value, round trips,
// each kind of bad frame (bit flip anywhere, truncation, wrong length, unknown command, address
// beyond memory) answered with its error and writing nothing, resynchronization, retried writes
// executed once, and a fuzz of 10,000 corrupted frames: no write from any of them, and a good
// frame right after each one still works.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "nasa/uart_protocol.h"
#include "uart_fuzz.h"

namespace {

using namespace nasa::uart;

struct Link {
  std::map<uint32_t, uint32_t> csrs;
  std::vector<std::pair<uint32_t, uint32_t>> csr_writes;
  BridgeModel bridge{4096, [this](uint32_t a) { return csrs[a]; },
                     [this](uint32_t a, uint32_t v) {
                       csrs[a] = v;
                       csr_writes.emplace_back(a, v);
                     }};
  // Sends bytes, then a quiet gap; returns every response the bridge sent.
  std::vector<Received> send(const std::vector<uint8_t>& bytes, unsigned quiet = kDefaultGapBytes) {
    std::vector<uint8_t> out;
    for (uint8_t b : bytes) {
      auto r = bridge.rx(b);
      out.insert(out.end(), r.begin(), r.end());
    }
    for (unsigned i = 0; i < quiet; ++i) {
      auto r = bridge.idle(1);
      out.insert(out.end(), r.begin(), r.end());
    }
    ResponseParser p;
    std::vector<Received> got;
    for (uint8_t b : out) {
      if (auto r = p.feed(b)) got.push_back(*r);
    }
    EXPECT_FALSE(p.in_frame()) << "a response was cut short";
    return got;
  }
};

TEST(UartProtocol, Crc16CheckValue) {
  const std::string s = "123456789";
  EXPECT_EQ(crc16(std::span(reinterpret_cast<const uint8_t*>(s.data()), s.size())), 0x29B1);
}

TEST(UartProtocol, RoundTrips) {
  Link l;
  std::vector<uint8_t> data(200);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 1);
  auto r = l.send(encode(write_mem(1, 1000, data)));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].crc_ok);
  EXPECT_EQ(r[0].response, (Response{Status::Ok, 1, {}}));
  r = l.send(encode(read_mem(2, 1000, 200)));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].response, (Response{Status::Ok, 2, data}));
  r = l.send(encode(write_csr(3, 0x10, 0xDEADBEEF)));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].response.status, Status::Ok);
  EXPECT_EQ(l.csrs[0x10], 0xDEADBEEFu);
  r = l.send(encode(read_csr(4, 0x10)));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].response, (Response{Status::Ok, 4, {0xEF, 0xBE, 0xAD, 0xDE}}));
  EXPECT_EQ(l.bridge.writes_executed(), 2u);
}

TEST(UartProtocol, EachBadFrameIsAnsweredAndWritesNothing) {
  const std::vector<uint8_t> data(16, 0x5C);
  const auto good = encode(write_mem(9, 64, data));
  for (size_t byte = 0; byte < good.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      Link l;
      auto bad = good;
      bad[byte] ^= static_cast<uint8_t>(1u << bit);
      const auto r = l.send(bad);
      EXPECT_EQ(l.bridge.writes_executed(), 0u) << "flip in byte " << byte << " bit " << bit;
      EXPECT_EQ(l.bridge.memory()[64], 0) << byte << ":" << bit;
      if (byte > 0) {  // a frame that started: exactly one error response
        ASSERT_EQ(r.size(), 1u) << byte << ":" << bit;
        EXPECT_NE(r[0].response.status, Status::Ok) << byte << ":" << bit;
      }
      // the link works right after
      const auto ok = l.send(encode(write_mem(10, 64, data)));
      ASSERT_EQ(ok.size(), 1u);
      EXPECT_EQ(ok[0].response.status, Status::Ok) << byte << ":" << bit;
      EXPECT_EQ(l.bridge.memory()[64], 0x5C);
    }
  }
  Link l;
  // truncated: the frame stops arriving
  auto r = l.send(std::vector<uint8_t>(good.begin(), good.begin() + 20));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].response, (Response{Status::Timeout, 9, {}}));
  // a length the bridge cannot take: answered right after the header
  auto req = write_mem(11, 64, data);
  req.len = 300;
  r = l.send(encode(req));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].response, (Response{Status::BadLen, 11, {}}));
  req = read_csr(12, 0);
  req.len = 2;
  EXPECT_EQ(l.send(encode(req)).at(0).response.status, Status::BadLen);
  req.cmd = static_cast<Cmd>(9);
  req.len = 4;
  EXPECT_EQ(l.send(encode(req)).at(0).response.status, Status::BadCmd);
  EXPECT_EQ(l.send(encode(write_mem(13, 4090, data))).at(0).response.status, Status::BadAddr);
  EXPECT_EQ(l.send(encode(read_mem(14, 4095, 2))).at(0).response.status, Status::BadAddr);
  EXPECT_EQ(l.bridge.writes_executed(), 0u);
  EXPECT_EQ(l.bridge.frames_rejected(), 6u);
}

TEST(UartProtocol, RetriedWritesExecuteOnce) {
  Link l;
  const auto start = encode(write_csr(5, 0x0, 1));
  EXPECT_EQ(l.send(start).at(0).response.status, Status::Ok);
  EXPECT_EQ(l.send(start).at(0).response.status, Status::Ok);  // the response got lost: retry
  EXPECT_EQ(l.csr_writes.size(), 1u);
  EXPECT_EQ(l.send(encode(write_csr(6, 0x0, 1))).at(0).response.status, Status::Ok);
  EXPECT_EQ(l.csr_writes.size(), 2u);  // a new sequence number executes
}

// Corruptions a CRC-16 always detects, or that stop the frame early: 1-3 flipped bits (the
// CCITT polynomial has Hamming distance 4 up to 32,751 bits), truncation, a length field that
// asks for more bytes than follow. (A shorter length field reads the CRC from the data: caught
// with probability 1 - 2^-16 per frame; the fixed seed below has none slip through.)
TEST(UartProtocol, FuzzTenThousandCorruptedFrames) {
  Link l;
  std::mt19937 rng(20261129);
  std::vector<uint8_t> shadow(4096, 0);
  uint8_t seq = 0;
  size_t rejected = 0;
  for (int i = 0; i < 10000; ++i) {
    std::vector<uint8_t> data(1 + rng() % 64);
    for (auto& b : data) b = static_cast<uint8_t>(rng());
    const uint32_t addr = rng() % (4096 - 64);
    auto frame = encode(write_mem(++seq, addr, data));
    nasa::testing::corrupt_frame(frame, rng, data.size(), 32);
    const uint64_t writes = l.bridge.writes_executed();
    const auto r = l.send(frame);
    ASSERT_EQ(l.bridge.writes_executed(), writes) << "frame " << i << " was written";
    for (const auto& x : r) {
      EXPECT_TRUE(x.crc_ok);
      EXPECT_NE(x.response.status, Status::Ok) << "frame " << i;
    }
    rejected += r.size();
    // a good frame right after: executed, memory as the shadow says
    std::vector<uint8_t> d2(1 + rng() % 32);
    for (auto& b : d2) b = static_cast<uint8_t>(rng());
    const uint32_t a2 = rng() % (4096 - 32);
    const auto ok = l.send(encode(write_mem(++seq, a2, d2)));
    ASSERT_EQ(ok.size(), 1u) << "frame " << i;
    ASSERT_EQ(ok[0].response.status, Status::Ok) << "frame " << i;
    std::copy(d2.begin(), d2.end(), shadow.begin() + a2);
  }
  EXPECT_EQ(l.bridge.memory(), shadow);
  EXPECT_EQ(l.bridge.writes_executed(), 10000u);
  EXPECT_GT(rejected, 9000u);  // nearly every bad frame gets its error response
}

}  // namespace
