// What every libFuzzer target of fuzz/ shares: the rule for exceptions (a documented error is the
// expected answer to bad input, anything else is a finding), invariant checks that abort with a
// message, and the framing of inputs that hold more than one file.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

namespace nasa::fuzz {

// A finding: the message goes to stderr and abort() makes libFuzzer save the input as a crash.
[[noreturn]] inline void finding(std::string_view what) {
  std::fprintf(stderr, "\nFUZZ FINDING: %.*s\n", static_cast<int>(what.size()), what.data());
  std::fflush(stderr);
  std::abort();
}

// (A string_view: a literal costs nothing on the path that passes, run millions of times.)
inline void check(bool ok, std::string_view what) {
  if (!ok) finding(what);
}

// Runs `f`. Returns true when it returned, false when it threw one of `Expected` (the parser's
// documented errors) with a message that names `source` (when not empty): that is a clear
// rejection of bad input. Any other exception, or an error message that does not say where, is a
// finding.
template <class... Expected, class F>
bool accepts(std::string_view source, F&& f) {
  try {
    f();
    return true;
  } catch (const std::exception& e) {
    const bool documented = (... || (dynamic_cast<const Expected*>(&e) != nullptr));
    if (!documented) {
      finding(std::string("undocumented exception ") + typeid(e).name() + ": " + e.what());
    }
    const std::string_view msg = e.what();
    if (msg.empty() || (!source.empty() && msg.find(source) == std::string_view::npos)) {
      finding(std::string("error message does not name '") + std::string(source) +
              "': " + std::string(msg));
    }
    return false;
  } catch (...) {
    finding("exception not derived from std::exception");
  }
}

inline std::string_view text_of(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// Inputs that carry several files: every part but the last is preceded by its length (4 bytes,
// little-endian), clamped to what is left, so any byte string is a valid framing. make_seeds
// writes the corpora in this form (join()).
inline std::vector<std::span<const uint8_t>> split(const uint8_t* data, size_t size, size_t parts) {
  std::vector<std::span<const uint8_t>> out;
  std::span<const uint8_t> rest(data, size);
  for (size_t i = 0; i + 1 < parts; ++i) {
    uint32_t len = 0;
    for (size_t b = 0; b < 4 && b < rest.size(); ++b) len |= uint32_t{rest[b]} << (8 * b);
    rest = rest.subspan(std::min<size_t>(4, rest.size()));
    const size_t n = std::min<size_t>(len, rest.size());
    out.push_back(rest.first(n));
    rest = rest.subspan(n);
  }
  out.push_back(rest);
  return out;
}

inline std::vector<uint8_t> join(const std::vector<std::vector<uint8_t>>& parts) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i + 1 < parts.size()) {
      const auto len = static_cast<uint32_t>(parts[i].size());
      for (int b = 0; b < 4; ++b) out.push_back(static_cast<uint8_t>(len >> (8 * b)));
    }
    out.insert(out.end(), parts[i].begin(), parts[i].end());
  }
  return out;
}

}  // namespace nasa::fuzz
