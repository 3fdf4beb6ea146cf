#include "nasa/svg.h"

#include "nasa/files.h"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

namespace nasa::svg {

std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

Doc::Doc(double width, double height) : w_(width), h_(height) {}

namespace {
std::string titled(std::string_view tag, std::string_view title) {
  return title.empty() ? fmt::format("{}/>\n", tag)
                       : fmt::format("{}><title>{}</title></{}>\n", tag, escape(title),
                                     tag.substr(1, tag.find(' ') - 1));
}
}  // namespace

Doc& Doc::line(double x1, double y1, double x2, double y2, std::string_view stroke, double width) {
  body_ += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
      "stroke-width=\"{:.2f}\"/>\n",
      x1, y1, x2, y2, escape(stroke), width);
  return *this;
}

Doc& Doc::circle(double cx, double cy, double r, std::string_view fill, std::string_view title) {
  body_ += titled(fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" fill=\"{}\"", cx,
                              cy, r, escape(fill)),
                  title);
  return *this;
}

Doc& Doc::rect(double x, double y, double w, double h, std::string_view fill,
               std::string_view title) {
  body_ += titled(fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                              "height=\"{:.1f}\" fill=\"{}\"",
                              x, y, w, h, escape(fill)),
                  title);
  return *this;
}

Doc& Doc::text(double x, double y, std::string_view s, double size, std::string_view anchor,
               std::string_view fill) {
  body_ += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{:.1f}\" text-anchor=\"{}\" fill=\"{}\" "
      "font-family=\"sans-serif\">{}</text>\n",
      x, y, size, escape(anchor), escape(fill), escape(s));
  return *this;
}

std::string Doc::str() const {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.0f}\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n{}"
      "</svg>\n",
      w_, h_, w_, h_, body_);
}

void write_file(const std::filesystem::path& path, std::string_view content) {
  write_file_atomic(path, content);
}

}  // namespace nasa::svg
