#include "cli_contract.h"

#include "cli_log.h"
#include "nasa/names.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace nasa::cli {

namespace {

constexpr long double kU32 = 4294967295.0L;
constexpr long double kU63 = 9223372036854775807.0L;
constexpr long double kMillion = 1e6L;

// Every numeric option of `nasa`, whatever the subcommand (docs/cli.md "Options").
constexpr std::array kRules{
    NumericRule{"--seed", 0, kU32, true},
    NumericRule{"--random", 1, kMillion, true},
    NumericRule{"--generate", 1, 65535, true},
    NumericRule{"--mut-prob", 0, 1, false},
    NumericRule{"--mini-batch", 1, 1 << 20, true},
    NumericRule{"--shard-batches", 1, kMillion, true},
    NumericRule{"--images", 1, kMillion, true},
    NumericRule{"--calib", 1, 50000, true},
    NumericRule{"--epochs", 1, 10000, true},
    NumericRule{"--batch", 1, 65536, true},
    NumericRule{"--lr", 1e-9L, 100, false},
    NumericRule{"--wd", 0, 1, false},
    NumericRule{"--threads", 1, 1024, true},
    NumericRule{"--train-images", 1, 50000, true},
    NumericRule{"--eval-candidates", 0, 10000, true},
    NumericRule{"--eval-images", 1, 10000, true},
    NumericRule{"--augment-shift", 0, 8, true},
    NumericRule{"--finetune-shift", 0, 8, true},
    NumericRule{"--label-smoothing", 0, 0.999L, false},
    NumericRule{"--paths-per-step", 0, 1024, true},
    NumericRule{"--finetune-smoothing", 0, 0.999L, false},
    NumericRule{"--finetune-epochs", 1, 10000, true},
    NumericRule{"--finetune-lr", 1e-9L, 100, false},
    NumericRule{"--population", 1, kMillion, true},
    NumericRule{"--generations", 1, kMillion, true},
    NumericRule{"--topk", 1, kMillion, true},
    NumericRule{"--mutations", 0, kMillion, true},
    NumericRule{"--crossovers", 0, kMillion, true},
    NumericRule{"--max-macs", 0, kU63, true},
    NumericRule{"--max-params", 0, kU63, true},
    NumericRule{"--max-cycles", 0, kU63, true},
    NumericRule{"--val-images", 1, 10000, true},
    NumericRule{"--top", 1, 1000, true},
    NumericRule{"--finalists", 1, 1000, true},
    NumericRule{"--recal-images", 0, 50000, true},
    NumericRule{"--finalist-images", 0, 10000, true},
    NumericRule{"--test-images", 1, 10000, true},
    NumericRule{"--rtl-images", 0, 10000, true},
};

std::string bound_text(long double v, bool integer) {
  if (integer) return fmt::format("{}", static_cast<unsigned long long>(v));
  return fmt::format("{}", static_cast<double>(v));
}

// [-](digits[.digits] | .digits)[(e|E)[+-]digits]
bool is_decimal(std::string_view t) {
  size_t i = 0;
  auto digits = [&] {
    const size_t from = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    return i - from;
  };
  if (i < t.size() && t[i] == '-') ++i;
  size_t mantissa = digits();
  if (i < t.size() && t[i] == '.') {
    ++i;
    mantissa += digits();
  }
  if (mantissa == 0) return false;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == t.size();
}

bool is_numeric_type(const std::string& type) {
  return type.starts_with("INT") || type.starts_with("UINT") || type.starts_with("FLOAT");
}

std::vector<CLI::App*> all_apps(CLI::App& app) {
  std::vector<CLI::App*> apps{&app};
  for (CLI::App* s : app.get_subcommands([](CLI::App*) { return true; })) apps.push_back(s);
  return apps;
}

std::vector<std::string> option_names(CLI::App& sub) {
  std::vector<std::string> names;
  for (const CLI::Option* o : sub.get_options()) {
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
  }
  return names;
}

std::vector<std::string> command_names(CLI::App& app) {
  std::vector<std::string> names;
  for (CLI::App* s : app.get_subcommands([](CLI::App*) { return true; })) {
    names.push_back(s->get_name());
  }
  return names;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

int report(const std::string& msg) {
  error(msg);
  return 1;
}

}  // namespace

std::span<const NumericRule> numeric_rules() { return kRules; }

const NumericRule* numeric_rule(std::string_view name) {
  for (const auto& r : kRules) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

std::string range_text(const NumericRule& r) {
  return r.integer ? fmt::format("{}..{}", bound_text(r.lo, true), bound_text(r.hi, true))
                   : fmt::format("[{}, {}]", bound_text(r.lo, false), bound_text(r.hi, false));
}

std::string check_number(const NumericRule& r, std::string_view text) {
  const std::string expected =
      fmt::format("expected {} in {}", r.integer ? "an integer" : "a number", range_text(r));
  const std::string got = fmt::format("{}, got '{}'", expected, text);
  if (text.empty() || text.size() > 64) return got;
  long double v = 0;
  if (r.integer) {
    // digits only (a sign only for a negative value, which is then out of range): no hex, no
    // exponent, no wrap-around of "-3" into a huge unsigned value
    const bool neg = text.front() == '-';
    const std::string_view digits = neg ? text.substr(1) : text;
    // (no leading zero either: CLI11 would read "010" as octal 8)
    if (digits.empty() || (digits.size() > 1 && digits.front() == '0') ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return got;
    }
    for (const char c : digits) v = v * 10 + (c - '0');
    if (neg) v = -v;
  } else {
    // plain decimal notation: [-]digits[.digits][e[+-]digits] (no hex, inf, nan or blanks)
    if (!is_decimal(text)) return got;
    const std::string s(text);
    v = std::strtold(s.c_str(), nullptr);
    if (!std::isfinite(v)) return got;
  }
  if (v < r.lo || v > r.hi) return got;
  return {};
}

void apply_contract(CLI::App& app) {
  for (CLI::App* a : all_apps(app)) {
    for (CLI::Option* o : a->get_options()) {
      if (!is_numeric_type(o->get_type_name())) continue;
      const auto lnames = o->get_lnames();
      const NumericRule* r = lnames.empty() ? nullptr : numeric_rule("--" + lnames.front());
      if (r == nullptr) {
        throw std::logic_error(fmt::format(
            "nasa {}: numeric option '{}' has no rule in nasa::cli::numeric_rules()",
            a->get_name(), o->get_name()));
      }
      const NumericRule rule = *r;
      // a default outside the range stands for "not given" (e.g. --random 0: no random batch,
      // --train-images 0: all of them); the help says what instead of showing the number
      const std::string def = o->get_default_str();
      if (!def.empty() && !check_number(rule, def).empty()) o->default_str("");
      o->check(CLI::Validator([rule](std::string& v) { return check_number(rule, v); },
                              range_text(rule)));
    }
  }
}

std::optional<int> parse(CLI::App& app, int argc, const char* const* argv) {
  const std::vector<std::string> commands = command_names(app);
  // an unknown command: CLI11 would say "A subcommand is required"
  if (argc >= 2 && argv[1][0] != '-' &&
      std::find(commands.begin(), commands.end(), argv[1]) == commands.end()) {
    return report(fmt::format("unknown command '{}'{}; the commands are {} (see 'nasa --help')",
                              argv[1], did_you_mean(argv[1], commands), join(commands)));
  }
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    CLI::App* sub = nullptr;
    for (CLI::App* s : app.get_subcommands()) sub = s;  // the parsed one
    const std::string where = sub ? sub->get_name() : "nasa";
    const std::string help =
        fmt::format("see 'nasa{} --help'", sub ? " " + sub->get_name() : std::string());
    if (sub == nullptr) {
      // `nasa --versoin`: CLI11 reports the missing command before the unknown option
      for (const auto& tok : app.remaining(true)) {
        if (tok.starts_with("--")) {
          const std::string opt = tok.substr(0, tok.find('='));
          return report(fmt::format(
              "unknown option '{}'{} (see 'nasa --help'; a command's options follow it)", opt,
              did_you_mean(opt, option_names(app))));
        }
      }
      if (argc < 2 || dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
        return report(fmt::format("a command is required: {} (see 'nasa --help')", join(commands)));
      }
      return report(fmt::format("{} ({})", e.what(), help));
    }
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      const auto names = option_names(*sub);
      std::vector<std::string> unknown, stray;
      for (const auto& tok : app.remaining(true)) {
        (tok.starts_with("-") && tok.size() > 1 && !std::isdigit(static_cast<unsigned char>(tok[1]))
             ? unknown
             : stray)
            .push_back(tok);
      }
      if (!unknown.empty()) {  // (remaining() keeps the command line's order)
        const std::string opt = unknown.front().substr(0, unknown.front().find('='));
        if (std::find(names.begin(), names.end(), opt) != names.end()) {
          // an option of the command given before it: `nasa --quiet info`
          return report(fmt::format("{}: '{}' goes after the command: nasa {} {} ... ({})", where,
                                    opt, sub->get_name(), opt, help));
        }
        return report(fmt::format("{}: unknown option '{}'{} ({})", where, opt,
                                  did_you_mean(opt, names), help));
      }
      return report(fmt::format("{}: unexpected argument{} '{}' ({})", where,
                                stray.size() > 1 ? "s" : "", fmt::join(stray, " "), help));
    }
    return report(fmt::format("{}: {} ({})", where, e.what(), help));
  }
}

}  // namespace nasa::cli
