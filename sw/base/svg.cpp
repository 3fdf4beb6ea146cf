#include "nasa/svg.h"

#include "nasa/files.h"

#include <fmt/format.h>

#include <algorithm>

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

bool Box::overlaps(const Box& o) const {
  return x < o.right() && o.x < right() && y < o.bottom() && o.y < bottom();
}

bool Box::contains(const Box& o) const {
  return o.x >= x && o.y >= y && o.right() <= right() && o.bottom() <= bottom();
}

double text_width(std::string_view s, double size) {
  // characters, not bytes: UTF-8 continuation bytes (10xxxxxx) do not start one
  const auto chars = std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
  return 0.6 * size * static_cast<double>(chars);
}

std::string grouped(uint64_t v) {
  const std::string digits = std::to_string(v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

Box text_box(double x, double y, std::string_view s, double size, std::string_view anchor) {
  const double w = text_width(s, size);
  const double x0 = anchor == "start" ? x : anchor == "end" ? x - w : x - w / 2;
  return {x0, y - 0.8 * size, w, size};
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

Doc& Doc::frame(double x, double y, double w, double h, std::string_view stroke, double width,
                std::string_view title) {
  body_ += titled(fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                              "height=\"{:.1f}\" fill=\"none\" stroke=\"{}\" "
                              "stroke-width=\"{:.2f}\"",
                              x, y, w, h, escape(stroke), width),
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

namespace {
// The keys' layout (see Doc::legend), drawn into `d` when it is given: a row is 1.5 sizes high,
// its text centred in it.
Box lay_out_legend(Doc* d, double x, double y, double width, std::span<const Key> keys,
                   double size) {
  const double mark_w = 1.3 * size, gap = 1.4 * size, row_h = 1.5 * size;
  double cx = x, cy = y, widest = 0;
  for (const Key& k : keys) {
    const double kw = (k.mark == Mark::None ? 0 : mark_w) + text_width(k.label, size);
    if (cx > x && cx + kw > x + width) {
      cx = x;
      cy += row_h;
    }
    if (d != nullptr) {
      const double mid = cy + 0.75 * size, m = 0.35 * size;
      switch (k.mark) {
        case Mark::Dot:
          d->circle(cx + m, mid, m, k.color);
          break;
        case Mark::Square:
          d->rect(cx, mid - m, 2 * m, 2 * m, k.color);
          break;
        case Mark::Frame:
          d->frame(cx, mid - m, 2 * m, 2 * m, k.color, 1.5);
          break;
        case Mark::Line:
          d->line(cx, mid, cx + 0.9 * size, mid, k.color, 2);
          break;
        case Mark::None:
          break;
      }
      d->text(cx + kw - text_width(k.label, size), cy + 1.05 * size, k.label, size, "start");
    }
    widest = std::max(widest, cx + kw - x);
    cx += kw + gap;
  }
  return {x, y, widest, keys.empty() ? 0.0 : cy - y + row_h};
}
}  // namespace

Box legend_box(double x, double y, double width, std::span<const Key> keys, double size) {
  return lay_out_legend(nullptr, x, y, width, keys, size);
}

Box Doc::legend(double x, double y, double width, std::span<const Key> keys, double size) {
  body_ += "<g class=\"legend\">\n";
  const Box b = lay_out_legend(this, x, y, width, keys, size);
  body_ += "</g>\n";
  return b;
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
