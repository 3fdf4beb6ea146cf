// Bounded one-line text of a JSON value for error messages about untrusted input: such input can
// nest arrays thousands deep, which nlohmann::json::dump() serializes recursively until the stack
// overflows (found by fuzzing, docs/reliability.md), and can be megabytes long.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace nasa {

// v.dump() when that is at most `max_chars` (>= 4) long, else its first max_chars - 3 characters
// and "...". The work is bounded by max_chars (and a fixed nesting depth), whatever v holds.
std::string json_preview(const nlohmann::json& v, size_t max_chars = 40);

}  // namespace nasa
