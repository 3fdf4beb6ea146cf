// The UART host link's frames (docs/uart.md): CRC, request and response encoding, a response
// parser for the host, and BridgeModel, the byte-exact reference of the board's bridge (what it
// answers, what it writes, how it recovers from bad frames) that the RTL bridge is checked against.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace nasa::uart {

inline constexpr uint8_t kRequestSync = 0xA5, kResponseSync = 0x5A;
inline constexpr size_t kMaxPayload = 256;     // WRITE_MEM / READ_MEM bytes per frame
inline constexpr size_t kRequestHeader = 9;    // sync .. address
inline constexpr size_t kResponseHeader = 5;   // sync .. length
inline constexpr unsigned kDefaultGapBytes = 4;  // quiet byte times that end a frame / an error

enum class Cmd : uint8_t { WriteMem = 1, ReadMem = 2, WriteCsr = 3, ReadCsr = 4 };
enum class Status : uint8_t { Ok = 0, BadCrc = 1, BadCmd = 2, BadLen = 3, BadAddr = 4, Timeout = 5 };
std::string_view status_name(Status s);  // "OK", "BAD_CRC", ...; "status<N>" beyond the table

// CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF), continuing from `crc`.
uint16_t crc16(std::span<const uint8_t> bytes, uint16_t crc = 0xFFFF);

struct Request {
  Cmd cmd = Cmd::ReadCsr;
  uint8_t seq = 0;
  uint16_t len = 4;  // WRITE_MEM: payload bytes; READ_MEM: bytes wanted; CSR: 4
  uint32_t addr = 0;
  std::vector<uint8_t> payload;  // WRITE_MEM: len bytes; WRITE_CSR: the value, 4 bytes LE
};
// The frame bytes (sync .. CRC). Does not validate: tests build bad frames with it.
std::vector<uint8_t> encode(const Request& r);
Request write_mem(uint8_t seq, uint32_t addr, std::span<const uint8_t> data);
Request read_mem(uint8_t seq, uint32_t addr, uint16_t len);
Request write_csr(uint8_t seq, uint32_t addr, uint32_t value);
Request read_csr(uint8_t seq, uint32_t addr);

struct Response {
  Status status = Status::Ok;
  uint8_t seq = 0;
  std::vector<uint8_t> payload;
  bool operator==(const Response&) const = default;
};
std::vector<uint8_t> encode(const Response& r);

// Host side: assembles responses from received bytes. Bytes before a sync are skipped. A frame
// whose CRC does not match, or whose length exceeds kMaxPayload, is reported with crc_ok false.
struct Received {
  Response response;
  bool crc_ok = true;
};
class ResponseParser {
 public:
  std::optional<Received> feed(uint8_t b);
  void reset();
  bool in_frame() const { return !buf_.empty(); }

 private:
  std::vector<uint8_t> buf_;
};

// The board's bridge, byte for byte. Time is in byte times: rx() is one byte arriving, idle(n)
// the line staying quiet for n byte times. Each returns the bytes the bridge sends in reply
// (empty when it has nothing to say yet).
class BridgeModel {
 public:
  using CsrRead = std::function<uint32_t(uint32_t addr)>;
  using CsrWrite = std::function<void(uint32_t addr, uint32_t value)>;
  // Memory behind the bridge supplied by the caller (e.g. a Device's).
  struct Memory {
    size_t size = 0;
    std::function<void(uint32_t addr, std::span<const uint8_t> bytes)> write;
    std::function<void(uint32_t addr, std::span<uint8_t> out)> read;
  };
  BridgeModel(Memory memory, CsrRead csr_read, CsrWrite csr_write,
              unsigned gap_bytes = kDefaultGapBytes);
  // With a memory of its own (memory()).
  BridgeModel(size_t memory_bytes, CsrRead csr_read, CsrWrite csr_write,
              unsigned gap_bytes = kDefaultGapBytes);

  std::vector<uint8_t> rx(uint8_t b);
  std::vector<uint8_t> idle(unsigned byte_times);

  std::vector<uint8_t>& memory() { return mem_; }
  const std::vector<uint8_t>& memory() const { return mem_; }
  uint64_t writes_executed() const { return writes_; }  // memory and CSR writes performed
  uint64_t frames_rejected() const { return rejected_; }

 private:
  enum class State { Hunt, Frame, Drain };
  std::vector<uint8_t> finish_frame();
  std::vector<uint8_t> reject(Status s);

  std::vector<uint8_t> mem_;  // own memory (second constructor)
  Memory memory_;
  CsrRead csr_read_;
  CsrWrite csr_write_;
  unsigned gap_;
  State state_ = State::Hunt;
  std::vector<uint8_t> frame_;  // bytes after the sync
  size_t expect_ = 0;           // total bytes after the sync (header, payload, CRC) once known
  unsigned quiet_ = 0;
  struct LastFrame {  // the last executed write or CSR read (retries are not re-executed)
    bool valid = false;
    uint8_t seq = 0, cmd = 0;
    uint32_t addr = 0;
    uint32_t value = 0;  // READ_CSR: the value it returned
  } last_;
  uint64_t writes_ = 0, rejected_ = 0;
};

}  // namespace nasa::uart
