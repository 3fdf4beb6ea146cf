// Small chain supernets for the batch-mode tests: they simulate fast on the RTL (6x6 input,
// 4 channels), with `layers` choice layers offering `choices` each. (The board's tests take 8
// channels: layers its MAC array takes, where its bit-serial core would take hundreds of cycles
// a MAC in software.)
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "nasa/spec.h"

namespace nasa::testing {

// A supernet of `size` x `size` x 1 images and `classes` classes with its stem, no layers yet.
inline spec::Supernet square_net(std::string name, int size, int classes, spec::Stem stem) {
  spec::Supernet n;
  n.name = std::move(name);
  n.in_h = n.in_w = size;
  n.in_c = 1;
  n.classes = classes;
  n.stem = stem;
  n.act = "relu6";
  return n;
}

inline spec::Supernet tiny_net(int layers, std::span<const spec::OpSpec> choices,
                               int channels = 4) {
  spec::Supernet n = square_net("tiny", 6, 4, {channels, 3, 1});
  for (int i = 0; i < layers; ++i) {
    spec::ChoiceLayer l;
    l.out_channels = channels;
    l.stride = 1;
    l.choices.assign(choices.begin(), choices.end());
    n.layers.push_back(l);
  }
  n.head = {8};
  spec::validate(n);
  return n;
}

}  // namespace nasa::testing
