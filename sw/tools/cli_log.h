// Everything `nasa` tells the user besides its result goes through one logger (spdlog, to
// stderr): progress and status at info, details at debug, errors at error. --quiet shows only
// errors, --verbose adds the details (docs/cli.md "Output").
#pragma once

#include <string>

namespace nasa::cli {

enum class Verbosity { Quiet, Normal, Verbose };
void set_verbosity(Verbosity v);

void info(const std::string& line);
void debug(const std::string& line);
void warn(const std::string& line);   // `nasa: <line>`, shown even with --quiet
void error(const std::string& line);  // `nasa: error: <line>`

// One progress line: on a terminal it replaces the previous one in place (`keep`: and stays,
// ending the line); otherwise only kept lines are printed, whole.
void progress(const std::string& line, bool keep);

// A status line of a long loop (k of n done): on a terminal one line updated in place, the last
// one kept; otherwise a line at the first and last report and about every tenth in between.
class Status {
 public:
  explicit Status(size_t total) : total_(total) {}
  void update(size_t done, const std::string& line);
  ~Status();

 private:
  size_t total_, shown_ = 0;
  bool open_ = false;  // a terminal line waiting for its newline
};

}  // namespace nasa::cli
