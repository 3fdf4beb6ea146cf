// The CLI's parse contract (sw/tools/cli_contract.h, docs/cli.md): numeric ranges without
// wrap-around, did-you-mean, and every numeric option of an app covered by the table.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <fstream>
#include <map>
#include <stdexcept>

#include "cli_contract.h"

using nasa::cli::check_number;
using nasa::cli::closest;
using nasa::cli::numeric_rule;

TEST(CliContract, IntegersAreDecimalAndInRange) {
  const auto& pop = *numeric_rule("--population");
  EXPECT_EQ(check_number(pop, "50"), "");
  EXPECT_EQ(check_number(pop, "1"), "");
  EXPECT_EQ(check_number(pop, "1000000"), "");
  for (const char* bad : {"-3", "0", "1000001", "1e3", "2.5", "0x10", "+5", " 3", "", "abc", "010", "08",
                          "18446744073709551613", "99999999999999999999999999"}) {
    EXPECT_NE(check_number(pop, bad), "") << bad;
  }
  EXPECT_EQ(check_number(pop, "-3"), "expected an integer in 1..1000000, got '-3'");
  // the largest limits hold exactly, one more is out
  const auto& macs = *numeric_rule("--max-macs");
  EXPECT_EQ(check_number(macs, "9223372036854775807"), "");
  EXPECT_NE(check_number(macs, "9223372036854775808"), "");
  const auto& seed = *numeric_rule("--seed");
  EXPECT_EQ(check_number(seed, "4294967295"), "");
  EXPECT_NE(check_number(seed, "4294967296"), "");
}

TEST(CliContract, ProbabilitiesAreFractions) {
  const auto& p = *numeric_rule("--mut-prob");
  for (const char* ok : {"0", "1", "0.1", ".5", "1e-3", "1.0"}) EXPECT_EQ(check_number(p, ok), "") << ok;
  for (const char* bad : {"70000", "-0.1", "1.01", "nan", "inf", "0x1p-2", "0.5 ", "1e400"}) {
    EXPECT_NE(check_number(p, bad), "") << bad;
  }
}

TEST(CliContract, DidYouMean) {
  const std::vector<std::string> subs{"info", "init", "eval", "fuse", "train", "run", "search"};
  EXPECT_EQ(closest("serach", subs), "search");
  EXPECT_EQ(closest("evl", subs), "eval");
  EXPECT_EQ(closest("quantize", subs), "");
  const std::vector<std::string> opts{"--generations", "--population", "--topk", "--seed"};
  EXPECT_EQ(closest("--generation", opts), "--generations");
  EXPECT_EQ(closest("--popluation", opts), "--population");
  EXPECT_EQ(closest("--colour", opts), "");
}

TEST(CliContract, EveryNumericOptionNeedsARule) {
  CLI::App app{"t"};
  auto* sub = app.add_subcommand("search", "");
  size_t population = 50;
  sub->add_option("--population", population, "");
  nasa::cli::apply_contract(app);
  const char* good[] = {"nasa", "search", "--population", "7"};
  EXPECT_EQ(nasa::cli::parse(app, 4, good), std::nullopt);
  EXPECT_EQ(population, 7u);
  CLI::App app2{"t"};
  uint32_t unlisted = 0;
  app2.add_subcommand("x", "")->add_option("--not-in-the-table", unlisted, "");
  EXPECT_THROW(nasa::cli::apply_contract(app2), std::logic_error);
}

TEST(CliContract, ParseErrorsAreExitOne) {
  CLI::App app{"t"};
  app.require_subcommand(1);
  auto* sub = app.add_subcommand("search", "");
  size_t population = 50;
  sub->add_option("--population", population, "");
  nasa::cli::apply_contract(app);
  const char* wrapped[] = {"nasa", "search", "--population", "-3"};
  EXPECT_EQ(nasa::cli::parse(app, 4, wrapped), 1);
  EXPECT_EQ(population, 50u);  // untouched: no wrap-around
  CLI::App app2{"t"};
  app2.require_subcommand(1);
  app2.add_subcommand("search", "");
  const char* unknown[] = {"nasa", "serach"};
  EXPECT_EQ(nasa::cli::parse(app2, 2, unknown), 1);
}

// docs/cli.md "Numeric options" lists exactly the rules, with the same ranges.
TEST(CliContract, DocsTableMatchesTheRules) {
  std::ifstream in(std::string(NASA_SOURCE_DIR) + "/docs/cli.md");
  ASSERT_TRUE(in) << "docs/cli.md";
  std::map<std::string, std::string> docs;
  bool in_section = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("## ")) in_section = line == "## Numeric options";
    // | `--name` | range | ...
    if (!in_section || !line.starts_with("| `--")) continue;
    const size_t name_end = line.find("` | ", 3);
    const size_t range_end = line.find(" |", name_end + 4);
    ASSERT_NE(name_end, std::string::npos) << line;
    ASSERT_NE(range_end, std::string::npos) << line;
    docs[line.substr(3, name_end - 3)] = line.substr(name_end + 4, range_end - name_end - 4);
  }
  std::map<std::string, std::string> code;
  for (const auto& r : nasa::cli::numeric_rules()) code[std::string(r.name)] = nasa::cli::range_text(r);
  EXPECT_EQ(docs, code);
}
