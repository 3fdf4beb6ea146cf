#include "nasa/report.h"

#include "nasa/energy.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include "nasa/desc.h"
#include "nasa/files.h"
#include "nasa/svg.h"

namespace nasa::report {

namespace {

using nlohmann::json;
using search::Evaluated;
using search::SearchResult;

json entry(const Evaluated& e) {
  return {{"arch", spec::format_candidate(e.arch)},
          {"val_accuracy", e.val_accuracy},
          {"correct", e.correct},
          {"macs_per_image", e.macs},
          {"params", e.params},
          {"cycles_per_image_alone", e.cycles},
          {"generation", e.generation}};
}

// entry() with the 95% confidence interval of its validation accuracy (search::accuracy_ci95).
json entry_ci(const Evaluated& e, size_t val_images) {
  json j = entry(e);
  const auto ci = search::accuracy_ci95(e.correct, val_images);
  j["val_ci95"] = {ci.lo, ci.hi};
  return j;
}

std::string pct_ci(const Evaluated& e, size_t val_images) {
  const auto ci = search::accuracy_ci95(e.correct, val_images);
  return fmt::format("{:.2f}% ({:.1f}-{:.1f})", 100.0 * e.val_accuracy, 100.0 * ci.lo,
                     100.0 * ci.hi);
}

json settings_json(const SearchResult& r) {
  json j = search_settings_json(r.config);
  j.update({{"supernet", r.supernet},
            {"backend", r.backend},
            {"hw_config", r.hw_config},
            {"val_images", r.val_images},
            {"calib_images", r.calib_images}});
  return j;
}

std::string pct(double f) { return fmt::format("{:.2f}%", 100.0 * f); }

std::string limit(uint64_t v) { return v ? std::to_string(v) : std::string("none"); }

void write_text(const std::filesystem::path& p, const std::string& s) {
  write_file_atomic(p, s);
}

void candidate_table(std::string& md, const SearchResult& r, const std::vector<size_t>& idx) {
  md += "| # | arch | val acc (95% CI) | MACs/image | params | cycles/image alone | generation |\n";
  md += "|---|------|--------:|-----:|-------:|-------------:|-----------:|\n";
  for (size_t i = 0; i < idx.size(); ++i) {
    const auto& e = r.evaluated[idx[i]];
    md += fmt::format("| {} | `{}`{} | {} | {} | {} | {} | {} |\n", i + 1,
                      spec::format_candidate(e.arch), r.best && *r.best == idx[i] ? " (best)" : "",
                      pct_ci(e, r.val_images), e.macs, e.params, e.cycles, e.generation);
  }
}

// "Nice" tick step (1, 2 or 5 x 10^k) for about `n` ticks over `span`.
double tick_step(double span, int n) {
  if (span <= 0) return 1;
  const double raw = span / n;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}


json usage_json(const batch::Usage& u, uint64_t run_cycles, const hw::Config& cfg) {
  return {{"layers", u.layers},
          {"cycles", u.cycles},
          {"macs", u.macs},
          {"share_of_cycles",
           run_cycles ? static_cast<double>(u.cycles) / static_cast<double>(run_cycles) : 0.0},
          {"pe_utilization", hw::pe_utilization(u.macs, u.cycles, cfg)}};
}

}  // namespace

json search_settings_json(const search::SearchConfig& c) {
  return {{"strategy", search::strategy_name(c.strategy)},
          {"population", c.population},
          {"generations", c.generations},
          {"topk", c.topk},
          {"mutations", c.mutations},
          {"crossovers", c.crossovers},
          {"mut_prob", c.mut_prob},
          {"max_macs", c.constraints.max_macs},
          {"max_params", c.constraints.max_params},
          {"max_cycles", c.constraints.max_cycles},
          {"seed", c.seed},
          {"mini_batch", c.mini_batch},
          {"shard_batches", c.shard_batches}};
}

json counters_json(const std::array<uint64_t, hw::kNumCounters>& c) {
  json j = json::object();
  for (int i = 0; i < hw::kNumCounters; ++i) {
    j[counter_name(static_cast<hw::Counter>(i))] = c[static_cast<size_t>(i)];
  }
  return j;
}

json energy_json(const hw::Config& cfg, const std::array<uint64_t, hw::kNumCounters>& counters,
                 size_t candidates) {
  if (cfg.mcu) return json::object();
  const energy::Breakdown b = energy::estimate(cfg, counters);
  const double total = b.total_pj();
  json rows = json::array();
  for (const energy::Event& e : b.events) {
    rows.push_back({{"event", e.name},
                    {"what", e.what},
                    {"count", e.count},
                    {"pj_each", e.pj_each},
                    {"pj", e.pj()},
                    {"share", total > 0 ? e.pj() / total : 0.0}});
  }
  return {{"energy_pj", total},
          {"energy_per_candidate_pj", candidates ? total / static_cast<double>(candidates) : 0.0},
          {"energy_dram_share", b.dram_share()},
          {"energy_breakdown", rows}};
}

json cost_json(uint64_t cycles, uint64_t macs, uint64_t dram_read, uint64_t dram_written,
               size_t images, const hw::Config& cfg) {
  return {{"cycles", cycles},
          {"cycles_per_image_batch",
           images ? static_cast<double>(cycles) / static_cast<double>(images) : 0.0},
          {"macs_executed", macs},
          {"dram_bytes", dram_read + dram_written},
          {"dram_read_bytes", dram_read},
          {"dram_written_bytes", dram_written},
          {"pe_utilization", hw::pe_utilization(macs, cycles, cfg)}};
}

json batch_utilization_json(const runtime::FusedResult& r, const hw::Config& cfg) {
  json j = {{"pe_utilization", hw::pe_utilization(r.macs, r.cycles, cfg)}};
  if (!r.profile) return j;
  const batch::Profile& p = *r.profile;
  j["control_cycles"] = p.control_cycles;
  json ops = json::array();
  for (size_t op = 0; op < p.by_op.size(); ++op) {
    if (p.by_op[op].layers == 0) continue;
    json e = usage_json(p.by_op[op], r.cycles, cfg);
    e["op"] = op_name(static_cast<uint8_t>(op));
    ops.push_back(e);
  }
  j["by_op"] = ops;
  json nodes = json::array();
  for (size_t n = 0; n < p.by_node.size() && n < r.nodes.size(); ++n) {
    json e = usage_json(p.by_node[n], r.cycles, cfg);
    e["node"] = n;
    if (n == 0) {
      e["layer"] = nullptr;  // the root: the stem
    } else {
      e["layer"] = (r.nodes[n] >> 16) & 0xFFu;
      e["choice"] = (r.nodes[n] >> 24) & 0xFFu;
      e["parent"] = r.nodes[n] & 0xFFFFu;
    }
    nodes.push_back(e);
  }
  j["by_node"] = nodes;
  return j;
}

json to_json(const SearchResult& r) {
  json j;
  j["strategy"] = search::strategy_name(r.config.strategy);
  j["settings"] = settings_json(r);
  j["best"] = r.best ? entry_ci(r.evaluated[*r.best], r.val_images) : json(nullptr);
  json top = json::array(), pareto = json::array(), all = json::array(), gens = json::array();
  for (size_t i : r.top(5)) top.push_back(entry_ci(r.evaluated[i], r.val_images));
  for (size_t i : r.pareto) pareto.push_back(entry_ci(r.evaluated[i], r.val_images));
  for (const auto& e : r.evaluated) all.push_back(entry(e));
  for (const auto& g : r.generations) {
    gens.push_back({{"generation", g.generation},
                    {"candidate_count", g.candidates},
                    {"reused_count", g.reused},
                    {"batches", g.batches},
                    {"nodes", g.nodes},
                    {"batch_cycles", g.cycles},
                    {"macs_executed", g.macs},
                    {"pe_utilization", g.pe_utilization},
                    {"best_val_accuracy", g.best_val_accuracy}});
  }
  j["top"] = top;
  j["pareto"] = pareto;
  j["evaluated_count"] = r.evaluated.size();
  j["evaluated"] = all;
  j["generations"] = gens;
  return j;
}

json result_json(std::span<const SearchResult> runs) {
  if (runs.empty()) throw std::invalid_argument("result_json: no search runs");
  json j = to_json(runs.back());
  if (runs.size() > 1) {
    json all = json::object(), cmp = json::object();
    for (const auto& r : runs) {
      const std::string name(search::strategy_name(r.config.strategy));
      all[name] = to_json(r);
      cmp[name] = {{"evaluations", r.evaluated.size()},
                   {"best_val_accuracy", r.best ? r.evaluated[*r.best].val_accuracy : 0.0},
                   {"best_arch", r.best ? spec::format_candidate(r.evaluated[*r.best].arch) : ""}};
    }
    j["runs"] = all;
    j["comparison"] = cmp;
  }
  return j;
}

std::string markdown(std::span<const SearchResult> runs) {
  if (runs.empty()) throw std::invalid_argument("markdown: no search runs");
  const SearchResult& main = runs.back();
  const auto& c = main.config;
  std::string md = fmt::format("# Architecture search on {}\n\n", main.supernet);
  md += "## Configuration\n\n";
  md += "| setting | value |\n|---|---|\n";
  std::string strategies;
  for (const auto& r : runs) {
    strategies += (strategies.empty() ? "" : ", ") + std::string(strategy_name(r.config.strategy));
  }
  md += fmt::format("| strategy | {} |\n", strategies);
  md += fmt::format("| population / generations | {} / {} |\n", c.population, c.generations);
  md += fmt::format("| top-k parents, mutations (p = {}), crossovers | {}, {}, {} |\n", c.mut_prob,
                    c.topk, c.mutations, c.crossovers);
  md += fmt::format("| constraints: max MACs, params, cycles | {}, {}, {} |\n",
                    limit(c.constraints.max_macs), limit(c.constraints.max_params),
                    limit(c.constraints.max_cycles));
  md += fmt::format("| validation images (last of the training set) | {} |\n", main.val_images);
  md += fmt::format("| calibration images | {} |\n", main.calib_images);
  md += fmt::format("| backend, hardware config | {}, {} |\n", main.backend, main.hw_config);
  md += fmt::format("| seed | {} |\n\n", c.seed);

  if (runs.size() > 1) {
    md += "## Evolution vs random at equal evaluations\n\n";
    md +=
        "Random search evaluates as many candidates per generation as evolution does; with the "
        "same seed both start from the same random population.\n\n";
    md += "| strategy | evaluations | best val acc | best arch | cycles/image alone |\n";
    md += "|---|---:|---:|---|---:|\n";
    for (const auto& r : runs) {
      const Evaluated* b = r.best ? &r.evaluated[*r.best] : nullptr;
      md += fmt::format("| {} | {} | {} | `{}` | {} |\n", strategy_name(r.config.strategy),
                        r.evaluated.size(), b ? pct(b->val_accuracy) : "-",
                        b ? spec::format_candidate(b->arch) : "-", b ? b->cycles : 0);
    }
    md += "\nBest validation accuracy so far, per generation:\n\n| generation |";
    for (const auto& r : runs) md += fmt::format(" {} |", strategy_name(r.config.strategy));
    md += "\n|---:|";
    for (size_t i = 0; i < runs.size(); ++i) md += "---:|";
    md += "\n";
    size_t gens = 0;
    for (const auto& r : runs) gens = std::max(gens, r.generations.size());
    for (size_t g = 0; g < gens; ++g) {
      md += fmt::format("| {} |", g);
      for (const auto& r : runs) {
        md += g < r.generations.size()
                  ? fmt::format(" {} |", pct(r.generations[g].best_val_accuracy))
                  : std::string(" - |");
      }
      md += "\n";
    }
    const auto best_of = [](const SearchResult& r) {
      return r.best ? r.evaluated[*r.best].correct : size_t{0};
    };
    const SearchResult* evo = nullptr;
    const SearchResult* rnd = nullptr;
    for (const auto& r : runs) {
      (r.config.strategy == search::Strategy::Evolution ? evo : rnd) = &r;
    }
    if (evo && rnd) {
      const size_t e = best_of(*evo), q = best_of(*rnd);
      const auto ce = search::accuracy_ci95(e, main.val_images);
      const auto cq = search::accuracy_ci95(q, main.val_images);
      md += fmt::format(
          "\nResult: evolution {} random ({} vs {} correct of {} images; 95% intervals "
          "{:.1f}-{:.1f}% and {:.1f}-{:.1f}%, {}).\n",
          e > q    ? "beats"
          : e == q ? "ties with"
                   : "loses to",
          e, q, main.val_images, 100 * ce.lo, 100 * ce.hi, 100 * cq.lo, 100 * cq.hi,
          ce.lo > cq.hi || cq.lo > ce.hi ? "disjoint"
                                         : "overlapping: one seed does not tell them apart");
    }
    md += "\n";
  }

  for (const auto& r : runs) {
    const std::string name(strategy_name(r.config.strategy));
    md += fmt::format("## {}: top candidates\n\n", name);
    if (r.best) {
      const auto& b = r.evaluated[*r.best];
      md += fmt::format(
          "Best under the constraints: `{}`, val accuracy {}, {} MACs, {} params, {} cycles per "
          "image ({} candidates evaluated).\n\n",
          spec::format_candidate(b.arch), pct_ci(b, r.val_images), b.macs, b.params, b.cycles,
          r.evaluated.size());
    }
    candidate_table(md, r, r.top(5));
    md += fmt::format("\n## {}: Pareto front (accuracy vs cycles per image)\n\n", name);
    candidate_table(md, r, r.pareto);
    md += fmt::format("\n## {}: fused evaluation per generation\n\n", name);
    md +=
        "| generation | candidates | measured before | batches | nodes | batch cycles | MACs "
        "executed | PE utilization |\n";
    md += "|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& g : r.generations) {
      md +=
          fmt::format("| {} | {} | {} | {} | {} | {} | {} | {:.3f} |\n", g.generation, g.candidates,
                      g.reused, g.batches, g.nodes, g.cycles, g.macs, g.pe_utilization);
    }
    md += "\n";
  }
  md += "![accuracy vs cycles](pareto.svg)\n";
  return md;
}

std::string pareto_svg(std::span<const SearchResult> runs) {
  if (runs.empty()) throw std::invalid_argument("pareto_svg: no search runs");
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (const auto& r : runs) {
    for (const auto& e : r.evaluated) {
      xmin = std::min(xmin, static_cast<double>(e.cycles));
      xmax = std::max(xmax, static_cast<double>(e.cycles));
      ymin = std::min(ymin, e.val_accuracy * 100);
      ymax = std::max(ymax, e.val_accuracy * 100);
    }
  }
  if (!(xmin <= xmax)) xmin = 0, xmax = 1, ymin = 0, ymax = 1;
  // axis ranges snapped to the tick grid, never empty
  const double xs = tick_step(std::max(xmax - xmin, 1.0), 6);
  const double ys = tick_step(std::max(ymax - ymin, 1.0), 6);
  const double x0 = std::floor(xmin / xs) * xs, x1 = std::max(std::ceil(xmax / xs) * xs, x0 + xs);
  const double y0 = std::floor(ymin / ys) * ys;
  double y1 = std::max(std::ceil(ymax / ys) * ys, y0 + ys);
  if (y1 - ymax < ys / 2) y1 += ys;  // room above the best point for its label
  const auto tick_x = [](double v) { return fmt::format("{:.6g}", v); };

  // random in grey, evolution in blue; each run's front in a darker shade
  const auto colors = [](search::Strategy s) {
    return s == search::Strategy::Random
               ? std::pair<std::string, std::string>{"#bbb", "#555"}
               : std::pair<std::string, std::string>{"#9ecae1", "#08519c"};
  };
  std::vector<svg::Key> keys;
  for (const auto& r : runs) {
    const auto [pt, fr] = colors(r.config.strategy);
    const std::string name(strategy_name(r.config.strategy));
    keys.push_back({svg::Mark::Dot, pt, name + ": evaluated"});
    keys.push_back({svg::Mark::Line, fr, name + ": Pareto front"});
  }
  const auto& m = runs.back();
  const std::string title =
      fmt::format("{}: validation accuracy vs accelerator cycles of one image", m.supernet);
  std::string best_label;
  if (m.best) {
    best_label = fmt::format("best {}", spec::format_candidate(m.evaluated[*m.best].arch));
    keys.push_back({svg::Mark::Frame, "#d62728",
                    fmt::format("best of the {} search", strategy_name(m.config.strategy))});
  }

  // The legend sits above the plot, so it hides no point and no label; the right margin holds
  // half the last tick label, the plot the whole best label.
  const double left = 80, bottom = 60, ph = 380;
  const double right = std::max(20.0, svg::text_width(tick_x(x1), 10) / 2 + 6);
  const double W = std::max({720.0, svg::text_width(title, 14) + 32,
                             left + svg::text_width(best_label, 11) + 40 + right});
  const double pw = W - left - right;
  const svg::Box legend = svg::legend_box(left, 34, pw, keys);
  const double top = legend.bottom() + 30, H = top + ph + bottom;
  const auto X = [&](double v) { return left + (v - x0) / (x1 - x0) * pw; };
  const auto Y = [&](double v) { return top + ph - (v - y0) / (y1 - y0) * ph; };

  svg::Doc d(W, H);
  d.text(W / 2, 22, title, 14);
  d.legend(left, 34, pw, keys);
  const long nx = std::lround((x1 - x0) / xs), ny = std::lround((y1 - y0) / ys);
  for (long i = 0; i <= nx; ++i) {
    const double v = x0 + static_cast<double>(i) * xs;
    d.line(X(v), top, X(v), top + ph, "#eee");
    d.line(X(v), top + ph, X(v), top + ph + 5, "#222");
    d.text(X(v), top + ph + 18, tick_x(v), 10);
  }
  for (long i = 0; i <= ny; ++i) {
    const double v = y0 + static_cast<double>(i) * ys;
    d.line(left, Y(v), left + pw, Y(v), "#eee");
    d.line(left - 5, Y(v), left, Y(v), "#222");
    d.text(left - 8, Y(v) + 4, fmt::format("{:.4g}", v), 10, "end");
  }
  d.line(left, top + ph, left + pw, top + ph, "#222");
  d.line(left, top, left, top + ph, "#222");
  d.text(left + pw / 2, H - 18,
         fmt::format("accelerator cycles of one image alone ({}, cycle model)", m.hw_config),
         12);
  d.text(left - 8, top - 14, "validation accuracy (%)", 12, "start");

  for (const auto& r : runs) {
    const auto [pt, fr] = colors(r.config.strategy);
    for (const auto& e : r.evaluated) {
      d.circle(X(static_cast<double>(e.cycles)), Y(e.val_accuracy * 100), 3, pt,
               fmt::format("{} {} cycles {}", spec::format_candidate(e.arch), pct(e.val_accuracy),
                           e.cycles));
    }
    for (size_t i = 1; i < r.pareto.size(); ++i) {
      const auto &a = r.evaluated[r.pareto[i - 1]], &b = r.evaluated[r.pareto[i]];
      d.line(X(static_cast<double>(a.cycles)), Y(a.val_accuracy * 100),
             X(static_cast<double>(b.cycles)), Y(b.val_accuracy * 100), fr, 2);
    }
    for (size_t i : r.pareto) {
      const auto& e = r.evaluated[i];
      d.circle(X(static_cast<double>(e.cycles)), Y(e.val_accuracy * 100), 4.5, fr,
               fmt::format("Pareto {} {} cycles {}", spec::format_candidate(e.arch),
                           pct(e.val_accuracy), e.cycles));
    }
  }
  if (m.best) {
    const auto& b = m.evaluated[*m.best];
    const double bx = X(static_cast<double>(b.cycles)), by = Y(b.val_accuracy * 100);
    d.frame(bx - 6, by - 6, 12, 12, "#d62728", 2);
    // beside the mark, inside the plot: above right, above left, below right or below left,
    // else above (below at the top), shifted into the plot
    const svg::Box plot{left, top, pw, ph};
    const double lw = svg::text_width(best_label, 11);
    const auto fits = [&](double x, double y) {
      return plot.contains(svg::text_box(x, y, best_label, 11, "start"));
    };
    double lx = std::clamp(bx - lw / 2, left, left + pw - lw);
    double ly = fits(lx, by - 10) ? by - 10 : by + 20;
    const std::array<std::pair<double, double>, 4> spots = {
        {{bx + 10, by - 10}, {bx - 10 - lw, by - 10}, {bx + 10, by + 20}, {bx - 10 - lw, by + 20}}};
    for (const auto& [x, y] : spots) {
      if (fits(x, y)) {
        lx = x, ly = y;
        break;
      }
    }
    d.text(lx, ly, best_label, 11, "start", "#d62728");
  }
  return d.str();
}

void check_writable(const std::filesystem::path& dir, bool force) {
  namespace fs = std::filesystem;
  // the directory, or the nearest folder above it that exists, must be a writable directory:
  // checked before the work whose results it receives, without creating anything yet
  fs::path p = fs::absolute(dir);
  while (!fs::exists(p) && p.has_relative_path()) p = p.parent_path();
  if (!fs::is_directory(p)) {
    throw std::runtime_error(fmt::format("cannot write results to '{}': '{}' is not a directory",
                                         dir.string(), p.string()));
  }
  if (::access(p.c_str(), W_OK | X_OK) != 0) {
    throw std::runtime_error(fmt::format("cannot write results to '{}': '{}' is not writable",
                                         dir.string(), p.string()));
  }
  if (!fs::exists(dir)) {
    // a trial: what the writer will create must be creatable (e.g. not below /proc), and is
    // removed again right away
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
      throw std::runtime_error(
          fmt::format("cannot write results to '{}': {}", dir.string(), ec.message()));
    }
    fs::path top = fs::absolute(dir);
    while (top.parent_path() != p && top.has_relative_path()) top = top.parent_path();
    fs::remove_all(top, ec);
  }
  if (!force && std::filesystem::exists(dir / "result.json")) {
    throw std::runtime_error(fmt::format(
        "'{}' already holds search results (result.json); pass --force to overwrite them",
        dir.string()));
  }
}

void write_outputs(const std::filesystem::path& dir, std::span<const SearchResult> runs,
                   bool force) {
  check_writable(dir, force);
  std::filesystem::create_directories(dir);
  // everything is rendered before the first file is touched
  const std::string j = result_json(runs).dump(2) + "\n", md = markdown(runs),
                    sv = pareto_svg(runs);
  write_text(dir / "report.md", md);
  svg::write_file(dir / "pareto.svg", sv);
  write_text(dir / "result.json", j);  // last: its presence marks a complete run
}

}  // namespace nasa::report
