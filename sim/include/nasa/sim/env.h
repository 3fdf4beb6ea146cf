// Numbers from the environment for the simulation knobs (NASA_RTLUNIT_*, NASA_COSIM_*, ...): one
// parser, so a malformed value fails the same loud way in the unit benches and in the cosim.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>

namespace nasa::sim {

// An unsigned environment variable (decimal, 0x hex or 0 octal), or `fallback` when unset or
// empty. Throws on garbage rather than running a test with a knob it silently ignored.
inline uint64_t env_number(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v, &end, 0);
  if (end == v || *end != '\0') {
    throw std::invalid_argument(
        fmt::format("environment variable {}='{}' is not an unsigned number", name, v));
  }
  return x;
}

}  // namespace nasa::sim
