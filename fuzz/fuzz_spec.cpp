// Supernet spec files (docs/supernet.md), as `nasa info --supernet`, `nasa init` and the supernet
// directory read them: JSON text -> parse_supernet_text. Bad input must be a SpecError naming the
// file; a spec that parses must survive everything the tools derive from it: the JSON round trip,
// shapes, and costs below 2^63 as spec.h promises.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "fuzz_common.h"
#include "nasa/spec.h"

namespace {

using nasa::fuzz::check;
namespace spec = nasa::spec;

using u128 = unsigned __int128;  // sums that cannot wrap
constexpr u128 kCostLimit = u128{1} << 63;

void check_costs(const spec::Supernet& net) {
  // The largest candidate: the costliest choice of every layer, plus stem and head.
  u128 macs = spec::stem_cost(net).macs;
  u128 params = spec::stem_cost(net).params;
  macs += spec::head_cost(net).macs;
  params += spec::head_cost(net).params;
  spec::Candidate biggest(net.layers.size(), 0);
  for (size_t i = 0; i < net.layers.size(); ++i) {
    uint64_t best = 0, best_params = 0;
    for (size_t c = 0; c < net.layers[i].choices.size(); ++c) {
      const spec::OpCost oc = spec::op_cost(net, i, c);
      check(oc.macs < kCostLimit && oc.params < kCostLimit, "an op cost reaches 2^63");
      if (oc.macs >= best) {
        best = oc.macs;
        biggest[i] = static_cast<int>(c);
      }
      best_params = std::max(best_params, oc.params);
    }
    macs += best;
    params += best_params;
  }
  check(macs < kCostLimit && params < kCostLimit,
        "a valid supernet's largest candidate costs 2^63 or more (candidate_cost would wrap)");
  // Skip is never the costliest choice where it is not allowed (it costs 0, others cost more).
  const spec::OpCost total = spec::candidate_cost(net, biggest);
  check(total.macs == spec::candidate_macs(net, biggest), "candidate_macs != candidate_cost");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<spec::Supernet> net;
  if (!nasa::fuzz::accepts<spec::SpecError>(
          "fuzz.json", [&] { net = spec::parse_supernet_text(text, "fuzz.json"); })) {
    return 0;
  }
  spec::validate(*net);  // what parse accepted, validate accepts
  // What save_supernet writes (to_json's text) reads back as the same supernet.
  check(spec::parse_supernet_text(spec::to_json(*net).dump(), "round trip") == *net,
        "JSON round trip differs");
  const auto shapes = spec::layer_shapes(*net);
  check(shapes.size() == net->layers.size(), "layer_shapes size");
  check(spec::search_space_size(*net) >= 1.0, "search space size below 1");
  check_costs(*net);
  // Candidate text forms of this net: all zeros is always valid (validate forbids a skip that
  // is not allowed, and choice 0 of every layer exists).
  const spec::Candidate zeros(net->layers.size(), 0);
  check(spec::parse_candidate(spec::format_candidate(zeros), *net) == zeros,
        "candidate text round trip");
  check(spec::candidate_from_json(spec::candidate_to_json(zeros), *net) == zeros,
        "candidate JSON round trip");
  return 0;
}
