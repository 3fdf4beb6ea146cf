// The command line's contract (docs/cli.md): one table of numeric options, range-checked while
// parsing (no wrap-around), and one way to report a parse error: `nasa: error: ...`, exit 1, with
// a did-you-mean for misspelt subcommands and options.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nasa/names.h"

namespace nasa::cli {

// A numeric option, by long name: the same name has the same range (and meaning) in every
// subcommand that takes it.
struct NumericRule {
  std::string_view name;  // "--population"
  long double lo, hi;     // inclusive
  bool integer;           // false: a real number (e.g. a learning rate or a probability)
};
std::span<const NumericRule> numeric_rules();
const NumericRule* numeric_rule(std::string_view name);

// "1..1000000" (integers) or "[0, 1]" (real numbers), as --help and docs/cli.md show it.
std::string range_text(const NumericRule& r);

// The value's error against `r`, empty when it is valid ("expected an integer in 1..1000000").
std::string check_number(const NumericRule& r, std::string_view text);

// Attaches the table's check to every numeric option of `app` and its subcommands. Throws
// std::logic_error naming a numeric option the table lacks (a programming error: every test
// that starts `nasa` finds it).
void apply_contract(CLI::App& app);

using nasa::closest;  // nasa/names.h

// Parses argv. nullopt: parsed, go on. Otherwise the exit code: 0 after --help / --version,
// 1 after a parse error, printed to stderr as `nasa: error: ...` with a did-you-mean where one
// fits and the subcommand's --help to read.
std::optional<int> parse(CLI::App& app, int argc, const char* const* argv);

}  // namespace nasa::cli
