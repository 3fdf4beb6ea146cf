// rtl/nasa_requant_dsp.sv with two DSPs (Dual = 1), as the board builds it and in fabric, side by
// side (tb/rtl/nasa_requant_dsp_pair.sv verilated with Dual = 1, tb/requant_dsp_bench.h): exact
// against the reference model, an input every cycle, the result 4 cycles after it was taken.
#include <gtest/gtest.h>

#include "Vnasa_requant_dsp_dual_pair.h"
#include "requant_dsp_bench.h"

namespace {

using V = Vnasa_requant_dsp_dual_pair;
constexpr const char* kTop = "nasa_requant_dsp_dual_pair";
constexpr int kLatency = 4;  // cycles from taking an input to its valid_o

TEST(RequantDspDual, BackToBackIsExactAndTakesAnInputEveryCycle) {
  requant_dsp_bench::back_to_back<V>(kTop, kLatency, 1, "RequantDspDual.BackToBack");
}

TEST(RequantDspDual, IrregularInputsAndCornersAreExact) {
  requant_dsp_bench::irregular<V>(kTop, kLatency, "RequantDspDual.Irregular");
}

}  // namespace
