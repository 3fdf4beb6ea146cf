// The fused graph as a picture: the prefix trie top-down, one row per depth, dots coloured by op
// and sized by MACs, each row's node count and MACs beside it. A trie wider than kMaxWidth is
// drawn down to the deepest row that fits and every subtree below that row collapsed into one box
// (its nodes per layer, its candidates): readable at any batch size, every node still counted.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "nasa/fusion.h"
#include "nasa/svg.h"

namespace nasa::fusion {
namespace {

constexpr double kMaxWidth = 1600;  // the widest picture, whatever the batch
constexpr double kMargin = 16, kRowPitch = 54, kFont = 11, kSmall = 9;
// Column widths: a leaf's, a collapsed box's, and at most (small batches spread out).
constexpr double kLeafPitch = 18, kBoxPitch = 50, kMaxPitch = 80;

// Tableau 10 without its grey and three more, one per op name in order of appearance
// (repeating past twelve); skip, which does no work, and the stem in greys.
constexpr std::array<std::string_view, 12> kOpColors = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                                        "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                                                        "#9c755f", "#499894", "#8cd17d", "#d37295"};
constexpr std::string_view kStemColor = "#555", kSkipColor = "#bbb", kBoxFill = "#f3f3f3",
                           kBoxStroke = "#999", kBarFill = "#c6dbef";

std::string plural(size_t n, std::string_view what) {
  return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
}

}  // namespace

std::string fused_graph_svg(const spec::Supernet& net, const FusedGraph& g) {
  const FusionStats st = fusion_stats(net, g);  // also checks every node is in `net`
  const size_t n = g.nodes.size();
  const int leaf_depth = g.num_layers;
  const auto row_count = static_cast<size_t>(leaf_depth) + 1;

  // Per node: its op and MACs, the candidates through it, the unique leaves below it.
  std::vector<std::string> op(n, "stem");
  std::vector<uint64_t> macs(n, stem_footprint(net).macs);
  std::vector<size_t> cands(n, 0), unique(n, 0), nodes_at(row_count, 0);
  std::vector<uint64_t> macs_at(row_count, 0);
  for (uint32_t id = 1; id < n; ++id) {
    const auto layer = static_cast<size_t>(g.nodes[id].layer);
    const auto choice = static_cast<size_t>(g.nodes[id].choice);
    op[id] = spec::op_name(net.layers[layer].choices[choice]);
    macs[id] = op_footprint(net, layer, choice).macs;
  }
  for (uint32_t l : g.leaf_of) ++cands[l];
  for (uint32_t l : g.unique_leaves) unique[l] = 1;
  for (uint32_t id = static_cast<uint32_t>(n); id-- > 1;) {  // children after their parents
    cands[g.nodes[id].parent] += cands[id];
    unique[g.nodes[id].parent] += unique[id];
  }
  for (uint32_t id = 0; id < n; ++id) {
    ++nodes_at[static_cast<size_t>(g.nodes[id].depth)];
    macs_at[static_cast<size_t>(g.nodes[id].depth)] += macs[id];
  }
  const uint64_t max_macs = std::max<uint64_t>(1, *std::max_element(macs.begin(), macs.end()));

  // Colours by op name, in order of appearance in the spec.
  std::vector<std::string> names;
  std::vector<svg::Key> keys;
  for (const auto& layer : net.layers) {
    for (const auto& c : layer.choices) {
      const std::string name = spec::op_name(c);
      if (std::find(names.begin(), names.end(), name) != names.end()) continue;
      const bool skip = c.kind == spec::OpKind::Skip;
      names.push_back(name);
      keys.push_back(
          {svg::Mark::Dot,
           std::string(skip ? kSkipColor : kOpColors[(names.size() - 1) % kOpColors.size()]),
           name});
    }
  }
  const auto color = [&](uint32_t id) {
    if (id == 0) return std::string(kStemColor);
    const auto it = std::find(names.begin(), names.end(), op[id]);
    return keys[static_cast<size_t>(it - names.begin())].color;
  };
  keys.push_back({svg::Mark::Dot, std::string(kStemColor), "stem"});
  keys.push_back({svg::Mark::None, {}, "dot area ∝ MACs per image"});

  // The texts beside the trie: row names on the left, nodes and MACs per row on the right.
  std::vector<std::string> row_name, row_sum;
  for (size_t d = 0; d < row_count; ++d) {
    row_name.push_back(d == 0 ? "stem" : fmt::format("layer {}", d - 1));
    row_sum.push_back(
        fmt::format("{}, {} MACs", plural(nodes_at[d], "node"), svg::grouped(macs_at[d])));
  }
  const uint64_t head_macs = head_footprint(net).macs;
  row_sum.push_back(fmt::format("head ×{}: {} MACs", st.unique_candidates,
                                svg::grouped(head_macs * st.unique_candidates)));
  row_sum.push_back(fmt::format("total: {} MACs per image", svg::grouped(st.macs_fused)));
  double name_w = 0, sum_w = 0;
  for (const auto& s : row_name) name_w = std::max(name_w, svg::text_width(s, kFont));
  for (const auto& s : row_sum) sum_w = std::max(sum_w, svg::text_width(s, kFont));
  // (room after the last column for an op name beside its dot)
  double op_w = 0;
  for (const auto& s : names) op_w = std::max(op_w, svg::text_width(s, kSmall));
  const double left = kMargin + name_w + 12, gap = op_w + 10, right_w = gap + sum_w + kMargin;

  // Drawn down to depth `shown`: all of it when every leaf gets its column, else the deepest row
  // whose nodes get a box column each.
  const double budget = kMaxWidth - left - right_w;
  const bool full = static_cast<double>(nodes_at[row_count - 1]) * kLeafPitch <= budget;
  int shown = leaf_depth;
  if (!full) {
    shown = 0;
    while (shown + 1 < leaf_depth &&
           static_cast<double>(nodes_at[static_cast<size_t>(shown) + 1]) * kBoxPitch <= budget) {
      ++shown;
    }
  }
  const auto cols = static_cast<double>(nodes_at[static_cast<size_t>(shown)]);
  const double pitch = std::clamp(budget / cols, full ? kLeafPitch : kBoxPitch, kMaxPitch);
  const double trie_w = cols * pitch;

  // Columns: the nodes at depth `shown` in depth-first order, each parent centred over its
  // children.
  std::vector<double> col(n, 0.0);
  std::vector<uint32_t> frontier;
  const std::function<void(uint32_t)> place = [&](uint32_t id) {
    const Node& nd = g.nodes[id];
    if (nd.depth == shown) {
      col[id] = static_cast<double>(frontier.size());
      frontier.push_back(id);
      return;
    }
    for (uint32_t c : nd.children) place(c);
    col[id] = (col[nd.children.front()] + col[nd.children.back()]) / 2;
  };
  place(0);

  const std::string title = fmt::format("{}: fused trie of {} ({} unique)", net.name,
                                        plural(st.candidates, "candidate"), st.unique_candidates);
  const std::string subtitle =
      fmt::format("{}; MACs per image: {} fused vs {} unfused (x{:.2f})", plural(st.nodes, "node"),
                  svg::grouped(st.macs_fused), svg::grouped(st.macs_unfused),
                  static_cast<double>(st.macs_unfused) /
                      static_cast<double>(std::max<uint64_t>(1, st.macs_fused)));
  if (full && std::any_of(cands.begin(), cands.end(), [&](size_t c) { return c > 1; })) {
    keys.push_back({svg::Mark::None, {}, "×N: N candidates end at this leaf"});
  }
  const std::string collapsed = shown + 1 == leaf_depth
                                    ? fmt::format("layer {}", shown)
                                    : fmt::format("layers {}-{}", shown, leaf_depth - 1);
  if (!full) {
    keys.push_back({svg::Mark::Frame, std::string(kBoxStroke),
                    fmt::format("{} collapsed: a box per subtree, per layer its nodes (bar: "
                                "nodes ÷ unique candidates below)",
                                collapsed)});
    keys.push_back({svg::Mark::None, {}, "×N: N candidates end in the box"});
  }
  double width = std::max({left + trie_w + right_w, 560.0, svg::text_width(title, 14) + 2 * kMargin,
                           svg::text_width(subtitle, kFont) + 2 * kMargin});
  for (const auto& k : keys) width = std::max(width, svg::text_width(k.label, kFont) + 40);
  const svg::Box legend = svg::legend_box(kMargin, 54, width - 2 * kMargin, keys, kFont);
  const double top = legend.bottom() + 28;
  const auto X = [&](uint32_t id) { return left + (col[id] + 0.5) * pitch; };
  const auto Y = [&](size_t d) { return top + static_cast<double>(d) * kRowPitch; };
  const double last = Y(row_count - 1);
  const double height = last + 2 * kRowPitch * 0.6 + kMargin;

  svg::Doc doc(width, height);
  doc.text(kMargin, 26, title, 14, "start");
  doc.text(kMargin, 44, subtitle, kFont, "start", "#444");
  doc.legend(kMargin, 54, width - 2 * kMargin, keys, kFont);
  const double sums_x = left + trie_w + gap;
  for (size_t d = 0; d < row_count; ++d) {
    doc.text(left - 12, Y(d) + 4, row_name[d], kFont, "end", "#555");
    doc.text(sums_x, Y(d) + 4, row_sum[d], kFont, "start", "#555");
  }
  doc.text(sums_x, last + kRowPitch * 0.6, row_sum[row_count], kFont, "start", "#555");
  doc.text(sums_x, last + kRowPitch * 1.2, row_sum[row_count + 1], kFont, "start");

  // Edges first, dots over them; a row's op names where they fit before the next dot.
  const auto radius = [&](uint32_t id) {
    return std::min(pitch / 2 - 1, 2.5 + 5.5 * std::sqrt(static_cast<double>(macs[id]) / max_macs));
  };
  std::vector<std::vector<uint32_t>> rows(row_count);
  for (uint32_t id = 0; id < n; ++id) {
    const auto d = static_cast<size_t>(g.nodes[id].depth);
    if (g.nodes[id].depth > shown) continue;
    rows[d].push_back(id);
    if (id != 0) doc.line(X(g.nodes[id].parent), Y(d - 1), X(id), Y(d));
  }
  const double box_top = Y(static_cast<size_t>(shown) + 1) - 12, box_bottom = last + 12;
  if (!full) {
    for (uint32_t f : frontier) doc.line(X(f), Y(static_cast<size_t>(shown)), X(f), box_top);
  }
  for (auto& row : rows) {
    std::sort(row.begin(), row.end(), [&](uint32_t a, uint32_t b) { return col[a] < col[b]; });
    for (size_t i = 0; i < row.size(); ++i) {
      const uint32_t id = row[i];
      const double x = X(id), y = Y(static_cast<size_t>(g.nodes[id].depth)), r = radius(id);
      doc.circle(x, y, r, color(id),
                 fmt::format("node {}: {}{}: {} MACs/image, {} through it", id,
                             id == 0 ? "" : fmt::format("layer {} ", g.nodes[id].layer), op[id],
                             svg::grouped(macs[id]), plural(cands[id], "candidate")));
      const double room = i + 1 < row.size() ? X(row[i + 1]) - radius(row[i + 1]) - 3 : sums_x - 6;
      if (id != 0 && x + r + 2 + svg::text_width(op[id], kSmall) <= room) {
        doc.text(x + r + 2, y + 3, op[id], kSmall, "start", "#444");
      }
      if (full && g.nodes[id].depth == leaf_depth && cands[id] > 1) {
        doc.text(x, y + r + 11, fmt::format("×{}", cands[id]), kSmall);
      }
    }
  }
  if (full) return doc.str();

  // Each subtree below depth `shown`: a box over the rows it spans, per row its node count as a
  // bar.
  std::vector<size_t> box_of(n, 0);
  std::vector<std::vector<size_t>> sub_nodes(frontier.size(), std::vector<size_t>(row_count, 0));
  std::vector<uint64_t> sub_macs(frontier.size(), 0);
  for (size_t k = 0; k < frontier.size(); ++k) box_of[frontier[k]] = k;
  for (uint32_t id = 1; id < n; ++id) {
    if (g.nodes[id].depth <= shown) continue;
    const size_t k = box_of[id] = box_of[g.nodes[id].parent];
    ++sub_nodes[k][static_cast<size_t>(g.nodes[id].depth)];
    sub_macs[k] += macs[id];
  }
  const double bw = pitch - 8;
  for (size_t k = 0; k < frontier.size(); ++k) {
    const uint32_t f = frontier[k];
    const double x = X(f), bx = x - bw / 2;
    size_t total = 0;
    for (size_t c : sub_nodes[k]) total += c;
    doc.rect(bx, box_top, bw, box_bottom - box_top, kBoxFill,
             fmt::format("{} below node {} ({}): {} ({} unique), {} MACs/image",
                         plural(total, "node"), f, collapsed, plural(cands[f], "candidate"),
                         unique[f], svg::grouped(sub_macs[k])));
    for (size_t d = static_cast<size_t>(shown) + 1; d < row_count; ++d) {
      const double frac = static_cast<double>(sub_nodes[k][d]) / static_cast<double>(unique[f]);
      doc.rect(bx + 2, Y(d) - 6, (bw - 4) * frac, 12, kBarFill);
      doc.text(x, Y(d) + 3, std::to_string(sub_nodes[k][d]), kSmall);
    }
    doc.frame(bx, box_top, bw, box_bottom - box_top, kBoxStroke);
    doc.text(x, box_bottom + 12, fmt::format("×{}", cands[f]), kSmall);
  }
  return doc.str();
}

}  // namespace nasa::fusion
