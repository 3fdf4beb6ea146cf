// Candidates as users hand them to `nasa`: an architecture file (--arch-file, --parents-file: one
// "2-0-1-3" per line, '#' comments), one --arch string, and the JSON array form, each against a
// built-in search space. Input: one byte choosing the space, then the text. Bad input must be a
// FusionError naming the file and line (files) or a SpecError naming the candidate; whatever is
// accepted must be a valid candidate of the space and round-trip through both text forms.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "nasa/fusion.h"
#include "nasa/spec.h"

namespace spec = nasa::spec;
using nasa::fuzz::accepts;
using nasa::fuzz::check;

namespace {

const std::vector<spec::Supernet>& spaces() {
  static const std::vector<spec::Supernet> all = [] {
    std::vector<spec::Supernet> v;
    for (const auto& name : spec::builtin_space_names()) v.push_back(spec::builtin_space(name));
    return v;
  }();
  return all;
}

void check_valid(const spec::Candidate& c, const spec::Supernet& net) {
  spec::validate_candidate(net, c);  // throws (a finding) if an invalid one got through
  check(spec::parse_candidate(spec::format_candidate(c), net) == c, "text round trip");
  check(spec::candidate_from_json(spec::candidate_to_json(c), net) == c, "JSON round trip");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const spec::Supernet& net = spaces()[data[0] % spaces().size()];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

  std::vector<spec::Candidate> file;
  if (accepts<nasa::fusion::FusionError>(
          "fuzz.arch", [&] { file = nasa::fusion::parse_arch_text(text, "fuzz.arch", net); })) {
    check(!file.empty(), "an architecture file without candidates was accepted");
    for (const auto& c : file) check_valid(c, net);
  }

  spec::Candidate one;
  if (accepts<spec::SpecError>("candidate", [&] { one = spec::parse_candidate(text, net); })) {
    check_valid(one, net);
  }

  // The JSON form: only text that is JSON at all reaches the library.
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) {
    spec::Candidate c;
    if (accepts<spec::SpecError>("candidate", [&] { c = spec::candidate_from_json(j, net); })) {
      check_valid(c, net);
    }
  }
  return 0;
}
