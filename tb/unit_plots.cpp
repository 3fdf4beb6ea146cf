// The plots the tools write (fused trie, Pareto front, run timeline), read back from their SVG:
// bounded size, a legend, op names, totals that add up to the graph's, every node drawn or
// counted, every label inside the canvas and clear of the other labels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "nasa/fusion.h"
#include "nasa/report.h"
#include "nasa/search.h"
#include "nasa/spec.h"
#include "nasa/svg.h"
#include "nasa/timeline.h"

namespace {

using nasa::svg::Box;

// --- Reading an SVG back (the Doc's own output: one element per line, attributes quoted). ---

std::string attr(std::string_view tag, std::string_view name) {
  const std::string key = " " + std::string(name) + "=\"";
  const size_t p = tag.find(key);
  if (p == std::string_view::npos) return {};
  const size_t b = p + key.size();
  return std::string(tag.substr(b, tag.find('"', b) - b));
}

double num(std::string_view tag, std::string_view name) { return std::stod(attr(tag, name)); }

std::string unescape(std::string_view s) {
  std::string out(s);
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"&lt;", "<"},
                                 {"&gt;", ">"},
                                 {"&quot;", "\""},
                                 {"&amp;", "&"}}) {
    for (size_t p = out.find(from); p != std::string::npos; p = out.find(from, p + to.size())) {
      out.replace(p, from.size(), to);
    }
  }
  return out;
}

// Every element's text between `open` ("<text", "<title>") and `close`, with its opening tag.
struct Element {
  std::string tag, body;
};
std::vector<Element> elements(std::string_view svg, std::string_view open, std::string_view close) {
  std::vector<Element> out;
  for (size_t p = svg.find(open); p != std::string_view::npos; p = svg.find(open, p + 1)) {
    const size_t gt = svg.find('>', p), end = svg.find(close, gt);
    out.push_back({std::string(svg.substr(p, gt - p)), unescape(svg.substr(gt + 1, end - gt - 1))});
  }
  return out;
}

struct Label {
  std::string s;
  Box box;
};
std::vector<Label> labels(std::string_view svg) {
  std::vector<Label> out;
  for (const auto& e : elements(svg, "<text ", "</text>")) {
    out.push_back(
        {e.body, nasa::svg::text_box(num(e.tag, "x"), num(e.tag, "y"), e.body,
                                     num(e.tag, "font-size"), attr(e.tag, "text-anchor"))});
  }
  return out;
}

Box canvas(std::string_view svg) {
  const std::string_view tag = svg.substr(0, svg.find('>'));
  return {0, 0, num(tag, "width"), num(tag, "height")};
}

// The legend's labels.
std::vector<Label> legend_labels(std::string_view svg) {
  const size_t b = svg.find("<g class=\"legend\">");
  if (b == std::string_view::npos) return {};
  return labels(svg.substr(b, svg.find("</g>", b) - b));
}

// Every label inside the canvas and no two overlapping.
void expect_labels_placed(std::string_view svg) {
  const Box c = canvas(svg);
  const auto ls = labels(svg);
  ASSERT_FALSE(ls.empty());
  for (const auto& l : ls) {
    EXPECT_TRUE(c.contains(l.box))
        << "'" << l.s << "' at x " << l.box.x << ".." << l.box.right() << ", y " << l.box.y << ".."
        << l.box.bottom() << " leaves the " << c.w << " x " << c.h << " canvas";
  }
  for (size_t i = 0; i < ls.size(); ++i) {
    for (size_t j = i + 1; j < ls.size(); ++j) {
      EXPECT_FALSE(ls[i].box.overlaps(ls[j].box))
          << "'" << ls[i].s << "' overlaps '" << ls[j].s << "'";
    }
  }
}

bool has_label(const std::vector<Label>& ls, std::string_view s) {
  return std::any_of(ls.begin(), ls.end(), [&](const Label& l) { return l.s == s; });
}

// "1,234 MACs" -> 1234: the number (commas allowed) ending just before `unit` in `s`.
uint64_t number_before(std::string_view s, std::string_view unit) {
  const size_t u = s.find(unit);
  if (u == std::string_view::npos || u == 0) return UINT64_MAX;
  size_t b = u - 1;
  while (b > 0 && (std::isdigit(static_cast<unsigned char>(s[b - 1])) || s[b - 1] == ',')) --b;
  std::string digits;
  for (char c : s.substr(b, u - b)) {
    if (c != ',') digits += c;
  }
  return digits.empty() ? UINT64_MAX : std::stoull(digits);
}

// --- The fused trie. ---

struct TrieCase {
  const char* space;
  size_t candidates;
  uint64_t seed;
};

// What a trie picture must show of its graph, whatever the batch.
enum class Expect { Summarized, EveryNode, EveryNodeNamed };
void check_trie(const TrieCase& t, Expect expect) {
  SCOPED_TRACE(testing::Message() << t.space << ", " << t.candidates << " random candidates, seed "
                                  << t.seed);
  const auto net = nasa::spec::builtin_space(t.space);
  const auto g =
      nasa::fusion::fuse(net, nasa::fusion::random_candidates(net, t.candidates, t.seed));
  const auto st = nasa::fusion::fusion_stats(net, g);
  const std::string svg = nasa::fusion::fused_graph_svg(net, g);

  EXPECT_LE(canvas(svg).w, 1600);
  expect_labels_placed(svg);

  // a legend naming every op of the space (and the stem)
  const auto legend = legend_labels(svg);
  ASSERT_FALSE(legend.empty()) << "no legend";
  EXPECT_TRUE(has_label(legend, "stem"));
  for (const auto& layer : net.layers) {
    for (const auto& c : layer.choices) {
      EXPECT_TRUE(has_label(legend, nasa::spec::op_name(c))) << nasa::spec::op_name(c);
    }
  }

  // the rows' nodes and MACs add up to the graph's, head included; the total is shown
  const auto ls = labels(svg);
  uint64_t row_nodes = 0, row_macs = 0, head = UINT64_MAX;
  size_t rows = 0;
  for (const auto& l : ls) {
    if (l.s.starts_with("head ×")) head = number_before(l.s, " MACs");
    if (l.s.ends_with(" MACs") && l.s.find(" node") != std::string::npos) {
      ++rows;
      row_nodes += std::stoull(l.s);
      row_macs += number_before(l.s, " MACs");
    }
  }
  EXPECT_EQ(rows, static_cast<size_t>(g.num_layers) + 1) << "a row total per depth";
  EXPECT_EQ(row_nodes, g.nodes.size());
  ASSERT_NE(head, UINT64_MAX) << "no head line";
  EXPECT_EQ(head, nasa::fusion::head_footprint(net).macs * st.unique_candidates);
  EXPECT_EQ(row_macs + head, st.macs_fused);
  EXPECT_TRUE(has_label(ls, "total: " + nasa::svg::grouped(st.macs_fused) + " MACs per image"));
  EXPECT_NE(svg.find("fused trie of " + std::to_string(st.candidates) + " candidate"),
            std::string::npos);
  EXPECT_NE(svg.find("(" + std::to_string(st.unique_candidates) + " unique)"), std::string::npos);

  // every node drawn as a dot, or counted in the box of its collapsed subtree, exactly once
  size_t dots = 0, in_boxes = 0, boxes = 0;
  uint64_t drawn_macs = 0;
  for (const auto& e : elements(svg, "<title>", "</title>")) {
    if (e.body.starts_with("node ")) {
      ++dots;
    } else if (e.body.find(" below node ") != std::string::npos) {
      ++boxes;
      in_boxes += std::stoull(e.body);
    } else {
      continue;
    }
    drawn_macs += number_before(e.body, " MACs/image");
  }
  EXPECT_EQ(dots + in_boxes, g.nodes.size());
  EXPECT_EQ(drawn_macs + head, st.macs_fused);
  if (expect == Expect::Summarized) {
    EXPECT_GT(boxes, 0u);
    EXPECT_NE(svg.find(" collapsed: a box per subtree"), std::string::npos)
        << "the legend explains the collapsed boxes";
    return;
  }
  EXPECT_EQ(dots, g.nodes.size());
  EXPECT_EQ(boxes, 0u);
  if (expect == Expect::EveryNodeNamed) {
    // every node but the stem labelled with its op's name (the legend names each op once)
    std::set<std::string> ops;
    for (const auto& layer : net.layers) {
      for (const auto& c : layer.choices) ops.insert(nasa::spec::op_name(c));
    }
    const auto named = [&](const std::vector<Label>& v) {
      return std::count_if(v.begin(), v.end(), [&](const Label& l) { return ops.contains(l.s); });
    };
    EXPECT_EQ(named(ls) - named(legend), static_cast<long>(g.nodes.size()) - 1);
  }
}

TEST(PlotsTrie, LargeBatchesAreSummarizedWithinTheWidth) {
  // (200 candidates of fmnist-mb14 were drawn 4,508 px wide, choice indices beside the dots)
  for (const TrieCase& t : {TrieCase{"fmnist-mb14", 200, 1}, TrieCase{"fmnist-mb14", 2000, 2},
                            TrieCase{"fbnet-imagenet", 300, 3}}) {
    check_trie(t, Expect::Summarized);
  }
}

TEST(PlotsTrie, SmallBatchesDrawEveryNode) {
  check_trie({"fmnist-mb14", 1, 4}, Expect::EveryNodeNamed);
  check_trie({"fmnist-mb14", 12, 5}, Expect::EveryNodeNamed);
  check_trie({"fmnist-mb", 40, 6}, Expect::EveryNode);
}

TEST(PlotsTrie, DuplicatesAreMarkedAndExplained) {
  const auto net = nasa::spec::builtin_space("fmnist-mb14");
  const std::vector<nasa::spec::Candidate> batch = {
      {0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}, {1, 1, 2, 3, 4, 0}};
  const std::string svg = nasa::fusion::fused_graph_svg(net, nasa::fusion::fuse(net, batch));
  const auto ls = labels(svg);
  EXPECT_TRUE(has_label(ls, "×3"));
  EXPECT_FALSE(has_label(ls, "×1"));
  EXPECT_TRUE(has_label(legend_labels(svg), "×N: N candidates end at this leaf"));
  expect_labels_placed(svg);
}

// --- The Pareto plot. ---

// A run whose points fill the plot and whose best (highest accuracy) sits at `best_cycles`.
nasa::search::SearchResult run(nasa::search::Strategy s, const nasa::spec::Candidate& best_arch,
                               uint64_t best_cycles, uint64_t seed) {
  nasa::search::SearchResult r;
  r.config.strategy = s;
  r.supernet = "fmnist-mb14";
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < 40; ++i) {
    nasa::search::Evaluated e;
    e.arch = nasa::spec::Candidate(best_arch.size(), static_cast<int>(i % 4));
    e.cycles = 100000 + rng() % 900000;
    e.val_accuracy = 0.80 + static_cast<double>(rng() % 1000) / 1e4;  // below the best
    r.evaluated.push_back(e);
  }
  nasa::search::Evaluated b;
  b.arch = best_arch;
  b.cycles = best_cycles;
  b.val_accuracy = 0.95;
  r.evaluated.push_back(b);
  r.pareto = nasa::search::pareto_front(r.evaluated);
  r.best = r.evaluated.size() - 1;
  return r;
}

TEST(PlotsPareto, BestLabelInsideAndClearOfTheLegend) {
  const nasa::spec::Candidate short_arch = {3, 2, 4, 3, 1, 0};
  const nasa::spec::Candidate long_arch(22, 8);  // fbnet-imagenet: 22 layers
  // the best at the right edge (where the legend used to be), the left edge and the middle
  for (const uint64_t best_cycles : {1000000ull, 100000ull, 550000ull, 12345678ull}) {
    for (const auto& arch : {short_arch, long_arch}) {
      SCOPED_TRACE(testing::Message()
                   << "best at " << best_cycles << " cycles, " << arch.size() << " layers");
      const std::vector<nasa::search::SearchResult> runs = {
          run(nasa::search::Strategy::Random, arch, best_cycles / 2, 1),
          run(nasa::search::Strategy::Evolution, arch, best_cycles, 2)};
      const std::string svg = nasa::report::pareto_svg(runs);
      expect_labels_placed(svg);
      const auto legend = legend_labels(svg);
      ASSERT_TRUE(has_label(legend, "evolution: Pareto front"));
      const auto ls = labels(svg);
      const std::string best_label = "best " + nasa::spec::format_candidate(arch);
      const auto best =
          std::find_if(ls.begin(), ls.end(), [&](const Label& l) { return l.s == best_label; });
      ASSERT_NE(best, ls.end()) << "no label '" << best_label << "'";
      Box area = legend.front().box;  // the legend's extent, marks included
      for (const auto& l : legend) {
        const double x0 = std::min(area.x, l.box.x - 12), y0 = std::min(area.y, l.box.y);
        area = {x0, y0, std::max(area.right(), l.box.right()) - x0,
                std::max(area.bottom(), l.box.bottom()) - y0};
      }
      EXPECT_FALSE(best->box.overlaps(area)) << "the best label overlaps the legend";
    }
  }
}

// --- The run timeline. ---

TEST(PlotsTimeline, EveryLabelInsideTheCanvas) {
  using nasa::report::Stage;
  const std::vector<std::vector<Stage>> cases = {
      // a typical run: the last stage's seconds used to be clipped at the right edge
      {{"train", 412.3, ""},
       {"search", 96.1, ""},
       {"test-top", 30.2, ""},
       {"finetune", 120.9, ""},
       {"quantize", 4.2, ""},
       {"rtl-check", 1234.5, ""}},
      // one stage dominating, a long name, a stage of no time
      {{"a stage with a rather long name", 9999.9, ""}, {"b", 0, ""}, {"c", 0.1, ""}},
      {{"train", 0, ""}},
  };
  for (const auto& stages : cases) {
    SCOPED_TRACE(testing::Message() << stages.size() << " stages, the first " << stages[0].name);
    const std::string svg = nasa::report::timeline_svg(stages, "nasa run on fmnist-mb14");
    expect_labels_placed(svg);
    const auto ls = labels(svg);
    for (const auto& st : stages) EXPECT_TRUE(has_label(ls, st.name)) << st.name;
  }
}

TEST(PlotsSvg, TextEstimatesCountCharactersNotBytes) {
  EXPECT_DOUBLE_EQ(nasa::svg::text_width("×12", 10), 18);
  const Box b = nasa::svg::text_box(100, 50, "abcd", 10, "end");
  EXPECT_DOUBLE_EQ(b.x, 76);
  EXPECT_DOUBLE_EQ(b.right(), 100);
  EXPECT_DOUBLE_EQ(b.y, 42);
  EXPECT_TRUE(Box({0, 0, 10, 10}).overlaps({9, 9, 5, 5}));
  EXPECT_FALSE(Box({0, 0, 10, 10}).overlaps({10, 0, 5, 5}));
  EXPECT_TRUE(Box({0, 0, 10, 10}).contains({0, 0, 10, 10}));
  EXPECT_FALSE(Box({0, 0, 10, 10}).contains({1, 1, 10, 1}));
}

}  // namespace
