// The board's UART bridge as modelled byte for byte on the host (uart::BridgeModel, the reference
// the RTL bridge is checked against): any request byte stream with quiet gaps. Input: a byte
// setting the gap (1..8 byte times), then chunks of a header byte h (h & 0x7f bytes follow, to be
// received; h & 0x80: then the line stays quiet for a gap). No exception may escape, memory
// accesses stay inside the bridge's memory (ASan), and everything the bridge sends is exactly one
// well-formed response (good CRC, payload <= kMaxPayload) that the host parser decodes.
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "fuzz_common.h"
#include "nasa/uart_protocol.h"

namespace uart = nasa::uart;
using nasa::fuzz::check;

namespace {

void check_reply(const std::vector<uint8_t>& out) {
  if (out.empty()) return;
  uart::ResponseParser p;
  size_t frames = 0;
  for (uint8_t b : out) {
    if (const auto got = p.feed(b)) {
      ++frames;
      check(got->crc_ok, "the bridge sent a frame with a bad CRC");
      check(got->response.payload.size() <= uart::kMaxPayload, "payload above kMaxPayload");
    }
  }
  check(frames == 1 && !p.in_frame(), "a reply is not exactly one response frame");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const unsigned gap = 1 + data[0] % 8;
  std::map<uint32_t, uint32_t> csrs;
  uart::BridgeModel bridge(
      4096, [&](uint32_t a) { return csrs.count(a) ? csrs[a] : a ^ 0x5A5A5A5Au; },
      [&](uint32_t a, uint32_t v) {
        if (csrs.size() < 64 || csrs.count(a)) csrs[a] = v;
      },
      gap);
  uint64_t writes = 0;
  for (size_t i = 1; i < size;) {
    const uint8_t h = data[i++];
    for (size_t n = h & 0x7f; n > 0 && i < size; --n) check_reply(bridge.rx(data[i++]));
    if (h & 0x80) check_reply(bridge.idle(gap));
    check(bridge.writes_executed() >= writes, "writes_executed went down");
    writes = bridge.writes_executed();
  }
  check(bridge.memory().size() == 4096, "the bridge's memory changed size");
  return 0;
}
