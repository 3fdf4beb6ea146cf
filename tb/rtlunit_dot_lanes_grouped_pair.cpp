// rtl/nasa_dot_lanes.sv with three groups of two DSPs (four input channels a step, three
// output channels), as the board builds it and in fabric, side by side
// (tb/rtl/nasa_dot_lanes_pair.sv verilated with Group = 2, tb/dot_lanes_bench.h).
#include <gtest/gtest.h>

#include "Vnasa_dot_lanes_grouped_pair.h"
#include "dot_lanes_bench.h"

namespace {

using V = Vnasa_dot_lanes_grouped_pair;
constexpr int kGroup = 2;
constexpr const char* kTop = "nasa_dot_lanes_grouped_pair";

TEST(DotLanesGrouped, RandomDotProductsAreExact) {
  dot_lanes_bench::random_dot_products<V, kGroup>(kTop, "DotLanesGrouped.Random");
}

TEST(DotLanesGrouped, BackToBackAtOneStepACycle) {
  dot_lanes_bench::back_to_back<V, kGroup>(kTop, "DotLanesGrouped.BackToBack");
}

TEST(DotLanesGrouped, ExtremeSumsFitTheAccumulators) {
  dot_lanes_bench::extreme_sums<V, kGroup>(kTop, "DotLanesGrouped.Extreme");
}

}  // namespace
