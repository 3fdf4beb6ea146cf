// A small SVG document builder for the plots the tools write next to their text output (fused
// tries, Pareto fronts, timelines): shapes and text in user units, escaped, one file out; text
// extents estimated so labels can be kept inside the canvas and clear of each other.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace nasa::svg {

// Writes a finished document; throws std::runtime_error naming the path on failure.
void write_file(const std::filesystem::path& path, std::string_view content);

// An axis-aligned box: x, y its top left corner.
struct Box {
  double x = 0, y = 0, w = 0, h = 0;
  double right() const { return x + w; }
  double bottom() const { return y + h; }
  bool overlaps(const Box& o) const;
  bool contains(const Box& o) const;
};

// Estimates without font metrics (sans-serif): 0.6 x size per character, one size high
// (0.8 above the baseline). Generous for digits and lower case, which most labels are.
double text_width(std::string_view s, double size);
// The box of Doc::text(x, y, s, size, anchor): y is the baseline.
Box text_box(double x, double y, std::string_view s, double size,
             std::string_view anchor = "middle");

// A count for a label, digits grouped by three: 1234567 -> "1,234,567".
std::string grouped(uint64_t v);

// A legend entry: a mark drawn in `color` (none for a note) and its label.
enum class Mark { None, Dot, Square, Frame, Line };
struct Key {
  Mark mark = Mark::None;
  std::string color;
  std::string label;
};

class Doc {
 public:
  Doc(double width, double height);
  double width() const { return w_; }
  double height() const { return h_; }
  Doc& line(double x1, double y1, double x2, double y2, std::string_view stroke = "#888",
            double width = 1.0);
  Doc& circle(double cx, double cy, double r, std::string_view fill, std::string_view title = {});
  Doc& rect(double x, double y, double w, double h, std::string_view fill,
            std::string_view title = {});
  // An unfilled rectangle.
  Doc& frame(double x, double y, double w, double h, std::string_view stroke, double width = 1.0,
             std::string_view title = {});
  // anchor: "start", "middle" or "end"
  Doc& text(double x, double y, std::string_view s, double size = 11,
            std::string_view anchor = "middle", std::string_view fill = "#222");
  // Keys left to right from (x, y) (the top left corner), wrapping before x + width, inside a
  // <g class="legend">; returns the box they take.
  Box legend(double x, double y, double width, std::span<const Key> keys, double size = 11);
  std::string str() const;
  void save(const std::filesystem::path& path) const { write_file(path, str()); }

 private:
  double w_, h_;
  std::string body_;
};

// The box Doc::legend would take, without drawing.
Box legend_box(double x, double y, double width, std::span<const Key> keys, double size = 11);

std::string escape(std::string_view s);

}  // namespace nasa::svg
