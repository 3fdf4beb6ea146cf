#include "nasa/names.h"

#include <algorithm>

namespace nasa {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string closest(std::string_view word, const std::vector<std::string>& names) {
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  const size_t letters = word.find_first_not_of('-');
  for (const auto& n : names) {
    // a prefix of a longer name (e.g. --generation for --generations) is close too
    const size_t d = n.starts_with(word) && letters != std::string_view::npos &&
                             word.size() - letters >= 3
                         ? 1
                         : edit_distance(word, n);
    if (d < best_d) {
      best_d = d;
      best = n;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& names) {
  const std::string near = closest(word, names);
  return near.empty() ? std::string() : " (did you mean '" + near + "'?)";
}

}  // namespace nasa
