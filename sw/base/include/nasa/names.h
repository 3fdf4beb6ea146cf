// Did-you-mean for names a user types: commands, options, and the values of options that take
// one of a few names (hardware configurations, backends).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nasa {

// Levenshtein distance (insertions, deletions, substitutions).
size_t edit_distance(std::string_view a, std::string_view b);

// The closest of `names` to `word` within a small edit distance (a third of its length, at least
// 2), or a longer name `word` begins with (3 letters or more after any dashes); "" when none is.
std::string closest(std::string_view word, const std::vector<std::string>& names);

// " (did you mean 'x'?)" for the closest name, or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& names);

}  // namespace nasa
