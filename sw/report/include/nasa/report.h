// Search results as files: result.json (every evaluated candidate, best, top, Pareto front,
// config), report.md (tables, and evolution vs random when both ran) and pareto.svg (accuracy vs
// accelerator cycles with the Pareto front highlighted).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "nasa/runtime.h"
#include "nasa/search.h"

namespace nasa::report {

// One run: {strategy, config, best, top, pareto, evaluated, generations}.
nlohmann::json to_json(const search::SearchResult& r);

// A search configuration's settings (strategy, budget, constraints, seed, mini-batch).
nlohmann::json search_settings_json(const search::SearchConfig& c);

// result.json for one or more runs of the same budget: the last run's fields at the top level
// (evolution when both ran), plus "runs" (every run by strategy) and, with several runs,
// "comparison" (best val accuracy per strategy at equal evaluations).
nlohmann::json result_json(std::span<const search::SearchResult> runs);

std::string markdown(std::span<const search::SearchResult> runs);

// Accuracy (y) vs cycles per image (x) of every evaluated candidate of every run; each run's
// Pareto front connected, the best of the last run marked.
std::string pareto_svg(std::span<const search::SearchResult> runs);

// Writes result.json, report.md and pareto.svg into `dir` (created). Throws before writing
// anything when dir/result.json exists and !force.
void check_writable(const std::filesystem::path& dir, bool force);
void write_outputs(const std::filesystem::path& dir, std::span<const search::SearchResult> runs,
                   bool force);

// A fused batch run's utilization: pe_utilization (MACs / (Rows x Cols x cycles)) and, when the
// target reported where its cycles went (runtime::FusedResult::profile), control_cycles, by_op
// and by_node rows {layers, cycles, macs, share_of_cycles, pe_utilization} (docs/engine.md
// "Utilization").
nlohmann::json batch_utilization_json(const runtime::FusedResult& r, const hw::Config& cfg);

// What a run cost (docs/cli.md "Output fields and metrics"): cycles, cycles_per_image_batch
// (cycles / images), macs_executed, dram_bytes (read + written), dram_read_bytes,
// dram_written_bytes and pe_utilization.
nlohmann::json cost_json(uint64_t cycles, uint64_t macs, uint64_t dram_read, uint64_t dram_written,
                         size_t images, const hw::Config& cfg);

// A run's hardware counters by name (hw_spec.h NASA_COUNTERS).
nlohmann::json counters_json(const std::array<uint64_t, hw::kNumCounters>& counters);

// A run's energy (nasa/energy.h, docs/energy.md) from its counters, for `candidates` candidates:
// energy_pj, energy_per_candidate_pj, energy_dram_share and energy_breakdown rows {event, what,
// count, pj_each, pj, share}. Empty on configurations whose core is the board's controller
// (Mcu = 1: the model describes the engine).
nlohmann::json energy_json(const hw::Config& cfg,
                           const std::array<uint64_t, hw::kNumCounters>& counters,
                           size_t candidates);

}  // namespace nasa::report
