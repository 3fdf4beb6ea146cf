// The fused graph as a picture: the prefix trie drawn top-down, one row per depth, leaves in
// depth-first order; node area ~ its MACs, leaves labelled with how many candidates share them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "nasa/fusion.h"
#include "nasa/svg.h"

namespace nasa::fusion {

std::string fused_graph_svg(const spec::Supernet& net, const FusedGraph& g) {
  const size_t n = g.nodes.size();
  std::vector<double> x(n, 0.0);
  std::vector<uint64_t> macs(n, 0);
  double next_leaf = 0;
  uint64_t max_macs = 1;
  const std::function<void(uint32_t)> place = [&](uint32_t id) {
    const Node& nd = g.nodes[id];
    macs[id] =
        id == 0
            ? stem_footprint(net).macs
            : op_footprint(net, static_cast<size_t>(nd.layer), static_cast<size_t>(nd.choice)).macs;
    max_macs = std::max(max_macs, macs[id]);
    if (nd.children.empty()) {
      x[id] = next_leaf++;
      return;
    }
    for (uint32_t c : nd.children) place(c);
    x[id] = (x[nd.children.front()] + x[nd.children.back()]) / 2;
  };
  if (n > 0) place(0);
  std::vector<size_t> shares(n, 0);
  for (uint32_t l : g.leaf_of) ++shares[l];

  const double dx = 22, dy = 70, left = 90, top = 50;
  const double width = std::max(480.0, left + 40 + std::max(1.0, next_leaf) * dx);
  const double height = top + 60 + g.num_layers * dy;
  svg::Doc doc(width, height);
  doc.text(width / 2, 22,
           fmt::format("{}: {} candidates, {} unique, {} nodes", net.name, g.leaf_of.size(),
                       g.unique_leaves.size(), n),
           14);
  for (int d = 0; d <= g.num_layers; ++d) {
    doc.text(10, top + d * dy + 4, d == 0 ? "stem" : fmt::format("layer {}", d - 1), 11, "start",
             "#555");
  }
  auto px = [&](uint32_t id) { return left + x[id] * dx; };
  auto py = [&](uint32_t id) { return top + g.nodes[id].depth * dy; };
  for (uint32_t id = 1; id < n; ++id) {
    doc.line(px(g.nodes[id].parent), py(g.nodes[id].parent), px(id), py(id));
  }
  for (uint32_t id = 0; id < n; ++id) {
    const Node& nd = g.nodes[id];
    const double r = 3 + 7 * std::sqrt(static_cast<double>(macs[id]) / max_macs);
    const std::string op = id == 0 ? "stem"
                                   : spec::op_name(net.layers[static_cast<size_t>(nd.layer)]
                                                       .choices[static_cast<size_t>(nd.choice)]);
    const bool skip = id != 0 && macs[id] == 0;
    doc.circle(px(id), py(id), r, skip ? "#bbb" : (nd.children.empty() ? "#d95f02" : "#1b9e77"),
               fmt::format("node {}: {} ({} MACs/image)", id, op, macs[id]));
    if (id != 0) doc.text(px(id) + r + 1, py(id) - r, std::to_string(nd.choice), 9, "start");
    if (nd.children.empty() && shares[id] > 1) {
      doc.text(px(id), py(id) + r + 12, fmt::format("x{}", shares[id]), 9);
    }
  }
  return doc.str();
}

}  // namespace nasa::fusion
