// Small chain supernets for the batch-mode tests: they simulate fast on the RTL (6x6 input,
// 4 channels), with `layers` choice layers offering `choices` each.
#pragma once

#include <span>
#include <vector>

#include "nasa/spec.h"

namespace nasa::testing {

inline spec::Supernet tiny_net(int layers, std::span<const spec::OpSpec> choices) {
  spec::Supernet n;
  n.name = "tiny";
  n.in_h = n.in_w = 6;
  n.in_c = 1;
  n.classes = 4;
  n.stem = {4, 3, 1};
  for (int i = 0; i < layers; ++i) {
    spec::ChoiceLayer l;
    l.out_channels = 4;
    l.stride = 1;
    l.choices.assign(choices.begin(), choices.end());
    n.layers.push_back(l);
  }
  n.head = {8};
  n.act = "relu6";
  spec::validate(n);
  return n;
}

}  // namespace nasa::testing
