#include "nasa/json_preview.h"

#include <algorithm>

namespace nasa {
namespace {

using nlohmann::json;

// Deeper than this, a container is written "[...]": the text is cut at max_chars anyway, so only
// an absurd max_chars could show more, and the recursion stays shallow.
constexpr int kMaxDepth = 32;

std::string scalar_text(const json& v, size_t limit) {
  if (v.is_string() && v.get_ref<const std::string&>().size() > limit) {
    // A cut may split a UTF-8 sequence: replace it rather than throw.
    return json(v.get_ref<const std::string&>().substr(0, limit))
        .dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Appends v in dump()'s compact form, stopping soon after `out` passes `limit` characters.
void append(std::string& out, const json& v, size_t limit, int depth) {
  if (out.size() > limit) return;
  if (!v.is_structured()) {
    out += scalar_text(v, limit);
    return;
  }
  const bool array = v.is_array();
  if (depth >= kMaxDepth) {
    out += array ? "[...]" : "{...}";
    return;
  }
  out += array ? '[' : '{';
  bool first = true;
  for (auto it = v.begin(); it != v.end() && out.size() <= limit; ++it) {
    if (!first) out += ',';
    first = false;
    if (!array) out += scalar_text(json(it.key()), limit) + ':';
    append(out, it.value(), limit, depth + 1);
  }
  out += array ? ']' : '}';
}

}  // namespace

std::string json_preview(const json& v, size_t max_chars) {
  max_chars = std::max<size_t>(max_chars, 4);
  std::string out;
  append(out, v, max_chars, 0);
  if (out.size() > max_chars) out = out.substr(0, max_chars - 3) + "...";
  return out;
}

}  // namespace nasa
