#include "nasa/uart_protocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace nasa::uart {
namespace {

void put16(std::vector<uint8_t>& v, uint16_t x) {
  v.push_back(static_cast<uint8_t>(x));
  v.push_back(static_cast<uint8_t>(x >> 8));
}
void put32(std::vector<uint8_t>& v, uint32_t x) {
  for (int i = 0; i < 4; ++i) v.push_back(static_cast<uint8_t>(x >> (8 * i)));
}
uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t get32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

// Appends the CRC of everything after the sync byte.
void seal(std::vector<uint8_t>& v) {
  put16(v, crc16(std::span<const uint8_t>(v).subspan(1)));
}

}  // namespace

std::string_view status_name(Status s) {
  switch (s) {
    case Status::Ok: return "OK";
    case Status::BadCrc: return "BAD_CRC";
    case Status::BadCmd: return "BAD_CMD";
    case Status::BadLen: return "BAD_LEN";
    case Status::BadAddr: return "BAD_ADDR";
    case Status::Timeout: return "TIMEOUT";
  }
  return "status?";
}

uint16_t crc16(std::span<const uint8_t> bytes, uint16_t crc) {
  for (uint8_t b : bytes) {
    crc = static_cast<uint16_t>(crc ^ (uint16_t{b} << 8));
    for (int i = 0; i < 8; ++i) {
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<uint16_t>(crc << 1);
    }
  }
  return crc;
}

std::vector<uint8_t> encode(const Request& r) {
  std::vector<uint8_t> v = {kRequestSync, static_cast<uint8_t>(r.cmd), r.seq};
  put16(v, r.len);
  put32(v, r.addr);
  v.insert(v.end(), r.payload.begin(), r.payload.end());
  seal(v);
  return v;
}

Request write_mem(uint8_t seq, uint32_t addr, std::span<const uint8_t> data) {
  if (data.empty() || data.size() > kMaxPayload) {
    throw std::invalid_argument(
        fmt::format("uart write_mem: {} bytes (expected 1..{} per frame)", data.size(), kMaxPayload));
  }
  return {Cmd::WriteMem, seq, static_cast<uint16_t>(data.size()), addr, {data.begin(), data.end()}};
}
Request read_mem(uint8_t seq, uint32_t addr, uint16_t len) {
  if (len == 0 || len > kMaxPayload) {
    throw std::invalid_argument(
        fmt::format("uart read_mem: {} bytes (expected 1..{} per frame)", len, kMaxPayload));
  }
  return {Cmd::ReadMem, seq, len, addr, {}};
}
Request write_csr(uint8_t seq, uint32_t addr, uint32_t value) {
  Request r{Cmd::WriteCsr, seq, 4, addr, {}};
  put32(r.payload, value);
  return r;
}
Request read_csr(uint8_t seq, uint32_t addr) { return {Cmd::ReadCsr, seq, 4, addr, {}}; }

std::vector<uint8_t> encode(const Response& r) {
  std::vector<uint8_t> v = {kResponseSync, static_cast<uint8_t>(r.status), r.seq};
  put16(v, static_cast<uint16_t>(r.payload.size()));
  v.insert(v.end(), r.payload.begin(), r.payload.end());
  seal(v);
  return v;
}

std::optional<Received> ResponseParser::feed(uint8_t b) {
  if (buf_.empty() && b != kResponseSync) return std::nullopt;
  buf_.push_back(b);
  if (buf_.size() < kResponseHeader) return std::nullopt;
  const size_t len = get16(&buf_[3]);
  if (len > kMaxPayload) {  // not a frame this link sends: report it and start over
    Received bad{{static_cast<Status>(buf_[1]), buf_[2], {}}, false};
    buf_.clear();
    return bad;
  }
  if (buf_.size() < kResponseHeader + len + 2) return std::nullopt;
  Received out;
  out.response.status = static_cast<Status>(buf_[1]);
  out.response.seq = buf_[2];
  out.response.payload.assign(buf_.begin() + kResponseHeader, buf_.begin() + kResponseHeader + len);
  const uint16_t crc = get16(&buf_[kResponseHeader + len]);
  out.crc_ok =
      crc == crc16(std::span<const uint8_t>(buf_).subspan(1, kResponseHeader - 1 + len));
  buf_.clear();
  return out;
}

void ResponseParser::reset() { buf_.clear(); }

BridgeModel::BridgeModel(Memory memory, CsrRead csr_read, CsrWrite csr_write, unsigned gap_bytes)
    : memory_(std::move(memory)),
      csr_read_(std::move(csr_read)),
      csr_write_(std::move(csr_write)),
      gap_(gap_bytes) {
  if (gap_ == 0) throw std::invalid_argument("uart bridge: the gap must be at least 1 byte time");
}

BridgeModel::BridgeModel(size_t memory_bytes, CsrRead csr_read, CsrWrite csr_write,
                         unsigned gap_bytes)
    : BridgeModel(Memory{}, std::move(csr_read), std::move(csr_write), gap_bytes) {
  mem_.assign(memory_bytes, 0);
  memory_.size = memory_bytes;
  memory_.write = [this](uint32_t a, std::span<const uint8_t> b) {
    std::copy(b.begin(), b.end(), mem_.begin() + a);
  };
  memory_.read = [this](uint32_t a, std::span<uint8_t> out) {
    std::copy(mem_.begin() + a, mem_.begin() + a + static_cast<std::ptrdiff_t>(out.size()),
              out.begin());
  };
}

std::vector<uint8_t> BridgeModel::reject(Status s) {
  ++rejected_;
  const uint8_t seq = frame_.size() >= 2 ? frame_[1] : 0;
  frame_.clear();
  expect_ = 0;
  state_ = State::Drain;
  quiet_ = 0;
  return encode(Response{s, seq, {}});
}

std::vector<uint8_t> BridgeModel::rx(uint8_t b) {
  quiet_ = 0;
  switch (state_) {
    case State::Hunt:
      if (b == kRequestSync) {
        state_ = State::Frame;
        frame_.clear();
        expect_ = 0;
      }
      return {};
    case State::Drain:
      return {};
    case State::Frame:
      break;
  }
  frame_.push_back(b);
  if (frame_.size() == kRequestHeader - 1) {  // cmd, seq, len, addr: the header is complete
    const uint8_t cmd = frame_[0];
    const uint16_t len = get16(&frame_[2]);
    if (cmd < 1 || cmd > 4) return reject(Status::BadCmd);
    const bool csr = cmd == static_cast<uint8_t>(Cmd::WriteCsr) ||
                     cmd == static_cast<uint8_t>(Cmd::ReadCsr);
    if (csr ? len != 4 : (len == 0 || len > kMaxPayload)) return reject(Status::BadLen);
    const size_t payload = cmd == static_cast<uint8_t>(Cmd::WriteMem)   ? len
                           : cmd == static_cast<uint8_t>(Cmd::WriteCsr) ? 4
                                                                         : 0;
    expect_ = kRequestHeader - 1 + payload + 2;
  }
  if (expect_ != 0 && frame_.size() == expect_) return finish_frame();
  return {};
}

std::vector<uint8_t> BridgeModel::finish_frame() {
  const size_t body = expect_ - 2;
  const uint16_t crc = get16(&frame_[body]);
  if (crc != crc16(std::span<const uint8_t>(frame_).subspan(0, body))) {
    return reject(Status::BadCrc);
  }
  const uint8_t cmd = frame_[0], seq = frame_[1];
  const uint16_t len = get16(&frame_[2]);
  const uint32_t addr = get32(&frame_[4]);
  const uint8_t* payload = frame_.data() + (kRequestHeader - 1);
  Response r{Status::Ok, seq, {}};
  const bool repeat =
      last_.valid && last_.seq == seq && last_.cmd == cmd && last_.addr == addr;
  switch (static_cast<Cmd>(cmd)) {
    case Cmd::WriteMem:
    case Cmd::ReadMem:
      if (uint64_t{addr} + len > memory_.size) return reject(Status::BadAddr);
      if (static_cast<Cmd>(cmd) == Cmd::ReadMem) {
        r.payload.resize(len);
        memory_.read(addr, r.payload);
      } else if (!repeat) {
        memory_.write(addr, std::span<const uint8_t>(payload, len));
        ++writes_;
      }
      break;
    case Cmd::WriteCsr:
      if (!repeat) {
        csr_write_(addr, get32(payload));
        ++writes_;
      }
      break;
    case Cmd::ReadCsr: {
      // a CSR read can have side effects (TBL_DATA steps its index): a retry gets the value
      // the lost response carried
      const uint32_t v = repeat ? last_.value : csr_read_(addr);
      for (int i = 0; i < 4; ++i) r.payload.push_back(static_cast<uint8_t>(v >> (8 * i)));
      last_.value = v;
      break;
    }
  }
  if (static_cast<Cmd>(cmd) != Cmd::ReadMem) {
    last_ = {true, seq, cmd, addr, last_.value};
  }
  frame_.clear();
  expect_ = 0;
  state_ = State::Hunt;
  return encode(r);
}

std::vector<uint8_t> BridgeModel::idle(unsigned byte_times) {
  quiet_ += byte_times;
  if (quiet_ < gap_) return {};
  if (state_ == State::Frame) {
    auto out = reject(Status::Timeout);
    state_ = State::Hunt;  // the line has just been quiet for a whole gap
    return out;
  }
  if (state_ == State::Drain) state_ = State::Hunt;
  return {};
}

}  // namespace nasa::uart
