// Corruptions of UART request frames for the fuzz tests of the link (the C++ bridge model and the
// RTL bridge): ones a CRC-16 always detects or that stop the frame early.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace nasa::testing {

// Damages `frame` (a WRITE_MEM request carrying `data_bytes` bytes) in one of three ways: 1-3
// distinct flipped bits after the sync byte (half the time), truncation, or a length field
// asking for 1..max_extra more bytes than follow.
inline void corrupt_frame(std::vector<uint8_t>& frame, std::mt19937& rng, size_t data_bytes,
                          uint32_t max_extra) {
  switch (rng() % 4) {
    case 0:
    case 1: {
      const int flips = 1 + static_cast<int>(rng() % 3);
      std::vector<size_t> used;  // distinct bits: two flips of one bit would cancel
      for (int f = 0; f < flips; ++f) {
        size_t bit;
        do {
          bit = 8 + rng() % ((frame.size() - 1) * 8);
        } while (std::find(used.begin(), used.end(), bit) != used.end());
        used.push_back(bit);
        frame[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      }
      break;
    }
    case 2:
      frame.resize(1 + rng() % (frame.size() - 1));
      break;
    default: {
      const auto len = static_cast<uint16_t>(data_bytes + 1 + rng() % max_extra);
      frame[3] = static_cast<uint8_t>(len);
      frame[4] = static_cast<uint8_t>(len >> 8);
      break;
    }
  }
}

}  // namespace nasa::testing
