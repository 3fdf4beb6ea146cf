// rtl/nasa_requant_dsp.sv with one DSP (Dual = 0), as the board builds it and in fabric, side by
// side (tb/rtl/nasa_requant_dsp_pair.sv, tb/requant_dsp_bench.h): exact against the reference
// model, an input every other cycle, the result 5 cycles after it was taken.
#include <gtest/gtest.h>

#include "Vnasa_requant_dsp_pair.h"
#include "requant_dsp_bench.h"

namespace {

using V = Vnasa_requant_dsp_pair;
constexpr const char* kTop = "nasa_requant_dsp_pair";
constexpr int kLatency = 5;  // cycles from taking an input to its valid_o

TEST(RequantDsp, BackToBackIsExactAndTakesAnInputEveryOtherCycle) {
  requant_dsp_bench::back_to_back<V>(kTop, kLatency, 2, "RequantDsp.BackToBack");
}

TEST(RequantDsp, IrregularInputsAndCornersAreExact) {
  requant_dsp_bench::irregular<V>(kTop, kLatency, "RequantDsp.Irregular");
}

}  // namespace
