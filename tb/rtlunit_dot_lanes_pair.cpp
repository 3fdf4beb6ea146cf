// rtl/nasa_dot_lanes.sv with six groups of one DSP (two input channels a step, six output
// channels), as the board builds it and in fabric, side by side (tb/rtl/nasa_dot_lanes_pair.sv,
// tb/dot_lanes_bench.h).
#include <gtest/gtest.h>

#include "Vnasa_dot_lanes_pair.h"
#include "dot_lanes_bench.h"

namespace {

using V = Vnasa_dot_lanes_pair;
constexpr int kGroup = 1;
constexpr const char* kTop = "nasa_dot_lanes_pair";

TEST(DotLanes, RandomDotProductsAreExact) {
  dot_lanes_bench::random_dot_products<V, kGroup>(kTop, "DotLanes.Random");
}

TEST(DotLanes, BackToBackAtOneStepACycle) {
  dot_lanes_bench::back_to_back<V, kGroup>(kTop, "DotLanes.BackToBack");
}

TEST(DotLanes, ExtremeSumsFitTheAccumulators) {
  dot_lanes_bench::extreme_sums<V, kGroup>(kTop, "DotLanes.Extreme");
}

}  // namespace
