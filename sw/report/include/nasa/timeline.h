// The stages of a job as bars on a time axis (`nasa run`'s timeline.svg): what each stage took,
// in the order they ran.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace nasa::report {

struct Stage {
  std::string name;
  double seconds = 0;
  std::string detail;  // what it did (the bar's tooltip)
};

// One row per stage, its bar starting where the previous one ended, its seconds after it; the
// title reads "<what>: <total> s". Every label stays inside the canvas.
std::string timeline_svg(std::span<const Stage> stages, std::string_view what);

}  // namespace nasa::report
