// The host's decoder of the board's UART response frames (docs/uart.md, uart::ResponseParser, as
// the UART device feeds it every byte read from the serial port): any byte stream, one byte at a
// time. No exception may escape; every frame it reports has at most kMaxPayload bytes, and a
// frame reported with a good CRC re-encodes to exactly the bytes it was decoded from.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "nasa/uart_protocol.h"

namespace uart = nasa::uart;
using nasa::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uart::ResponseParser parser;
  size_t start = 0;  // where the frame being assembled began
  for (size_t i = 0; i < size; ++i) {
    if (!parser.in_frame()) start = i;
    const auto got = parser.feed(data[i]);
    if (!got) continue;
    check(!parser.in_frame(), "a reported frame left bytes behind in the parser");
    check(data[start] == uart::kResponseSync, "a frame that does not start with the sync byte");
    check(got->response.payload.size() <= uart::kMaxPayload, "payload above kMaxPayload");
    (void)uart::status_name(got->response.status);  // any status byte has a name
    if (got->crc_ok) {
      const std::span<const uint8_t> frame(data + start, i + 1 - start);
      const std::vector<uint8_t> again = uart::encode(got->response);
      check(std::equal(again.begin(), again.end(), frame.begin(), frame.end()),
            "a frame with a good CRC does not re-encode to its bytes");
    }
  }
  parser.reset();
  check(!parser.in_frame(), "reset() kept a frame");
  return 0;
}
