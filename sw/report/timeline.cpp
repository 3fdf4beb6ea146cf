#include "nasa/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <vector>

#include "nasa/svg.h"

namespace nasa::report {

std::string timeline_svg(std::span<const Stage> stages, std::string_view what) {
  double total = 0;
  for (const auto& st : stages) total += st.seconds;
  const double name_size = 12, size = 11, row = 28, top = 50, pad = 8;
  const auto seconds = [](double s) { return fmt::format("{:.1f} s", s); };
  const auto tick = [](double s) { return fmt::format("{:.0f} s", s); };
  const std::string title = fmt::format("{}: {:.0f} s", what, total);
  double left = 110;
  for (const auto& st : stages) {
    left = std::max(left, 2 * pad + svg::text_width(st.name, name_size));
  }
  const double w = std::max(760.0, svg::text_width(title, 14) + 2 * pad);
  // The time scale: as wide as the canvas allows with every bar's seconds written after its end
  // and the last tick's label centred under the axis end, all inside the canvas.
  const double span = std::max(total, 1e-9);
  double scale = (w - left - 30) / span;
  scale = std::min(scale, (w - pad - left - svg::text_width(tick(total), size) / 2) / span);
  double t = 0;
  for (const auto& st : stages) {
    t += st.seconds;
    if (t > 0) {
      scale =
          std::min(scale, (w - pad - left - 4 - svg::text_width(seconds(st.seconds), size)) / t);
    }
  }
  const double h = top + row * static_cast<double>(stages.size()) + 50;
  svg::Doc d(w, h);
  d.text(w / 2, 24, title, 14);
  static constexpr std::array<std::string_view, 6> kColors = {"#4e79a7", "#f28e2b", "#59a14f",
                                                              "#e15759", "#76b7b2", "#b07aa1"};
  t = 0;
  for (size_t i = 0; i < stages.size(); ++i) {
    const double y = top + row * static_cast<double>(i);
    d.text(left - pad, y + row * 0.6, stages[i].name, name_size, "end");
    d.rect(left + t * scale, y + 4, std::max(stages[i].seconds * scale, 1.0), row - 8,
           kColors[i % kColors.size()],
           fmt::format("{}: {:.1f} s, {}", stages[i].name, stages[i].seconds, stages[i].detail));
    d.text(left + (t + stages[i].seconds) * scale + 4, y + row * 0.6, seconds(stages[i].seconds),
           size, "start");
    t += stages[i].seconds;
  }
  const double axis = top + row * static_cast<double>(stages.size()) + 8;
  d.line(left, axis, left + span * scale, axis);
  for (int k = 0; k <= 4; ++k) {
    const double x = left + span * scale * k / 4.0;
    d.line(x, axis, x, axis + 5);
    d.text(x, axis + 18, tick(total * k / 4.0), size);
  }
  return d.str();
}

}  // namespace nasa::report
