// A small SVG document builder for the plots the tools write next to their text output (fused
// tries, Pareto fronts, timelines): shapes and text in user units, escaped, one file out.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace nasa::svg {

// Writes a finished document; throws std::runtime_error naming the path on failure.
void write_file(const std::filesystem::path& path, std::string_view content);

class Doc {
 public:
  Doc(double width, double height);
  Doc& line(double x1, double y1, double x2, double y2, std::string_view stroke = "#888",
            double width = 1.0);
  Doc& circle(double cx, double cy, double r, std::string_view fill, std::string_view title = {});
  Doc& rect(double x, double y, double w, double h, std::string_view fill,
            std::string_view title = {});
  // anchor: "start", "middle" or "end"
  Doc& text(double x, double y, std::string_view s, double size = 11,
            std::string_view anchor = "middle", std::string_view fill = "#222");
  std::string str() const;
  void save(const std::filesystem::path& path) const { write_file(path, str()); }

 private:
  double w_, h_;
  std::string body_;
};

std::string escape(std::string_view s);

}  // namespace nasa::svg
