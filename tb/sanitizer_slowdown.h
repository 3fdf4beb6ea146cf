// How many times slower a test runs in a sanitizer build (NASA_SANITIZE, docs/reliability.md),
// for the few tests whose emulated peer must answer within a wall-clock timeout.
#pragma once

namespace nasa::testing {

#if defined(__SANITIZE_THREAD__)
inline constexpr int kSanitizerSlowdown = 100;  // (ThreadSanitizer: 5-15x, more on a busy machine)
#elif defined(__SANITIZE_ADDRESS__)
inline constexpr int kSanitizerSlowdown = 20;
#else
inline constexpr int kSanitizerSlowdown = 1;
#endif

}  // namespace nasa::testing
