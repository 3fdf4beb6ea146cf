#include "cli_log.h"

#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>

namespace nasa::cli {

namespace {

spdlog::logger& logger() {
  static const auto l = [] {
    auto lg = spdlog::stderr_logger_st("nasa");
    lg->set_pattern("%v");
    lg->set_level(spdlog::level::info);
    lg->flush_on(spdlog::level::trace);  // every line at once: progress is read as it comes
    return lg;
  }();
  return *l;
}

bool tty() {
  static const bool t = isatty(fileno(stderr)) != 0;
  return t;
}

}  // namespace

void set_verbosity(Verbosity v) {
  logger().set_level(v == Verbosity::Quiet     ? spdlog::level::warn
                     : v == Verbosity::Verbose ? spdlog::level::debug
                                               : spdlog::level::info);
}

void info(const std::string& line) { logger().info(line); }
void debug(const std::string& line) { logger().debug(line); }
void warn(const std::string& line) { logger().warn("nasa: {}", line); }
void error(const std::string& line) { logger().error("nasa: error: {}", line); }

void progress(const std::string& line, bool keep) {
  if (!logger().should_log(spdlog::level::info)) return;
  if (tty()) {
    // the logger writes whole lines; a line updated in place is the same level's output,
    // written unbuffered to the same stream
    fmt::print(stderr, "\r{:<78}{}", line, keep ? "\n" : "");
    std::fflush(stderr);
  } else if (keep) {
    info(line);
  }
}

void Status::update(size_t done, const std::string& line) {
  const size_t step = total_ >= 10 ? total_ / 10 : 1;
  const bool keep_off_tty = done == 1 || done == total_ || done >= shown_ + step;
  if (keep_off_tty) shown_ = done;
  if (tty()) {
    progress(line, done == total_);
    open_ = done != total_;
  } else if (keep_off_tty) {
    progress(line, true);
  }
}

Status::~Status() {
  if (open_ && tty() && logger().should_log(spdlog::level::info)) {
    fmt::print(stderr, "\n");
    std::fflush(stderr);
  }
}

}  // namespace nasa::cli
