// SPDX-License-Identifier: Apache-2.0
#include "util/did_you_mean.hpp"

#include <algorithm>
#include <vector>

namespace gl {
namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

}  // namespace

std::optional<std::string> did_you_mean(std::string_view wrong,
                                        std::span<const std::string> candidates) {
  // Typos of short keys ("tpp" for "tp") must still match; long unrelated words must not.
  const size_t limit = std::max<size_t>(2, wrong.size() / 3);
  std::optional<std::string> best;
  size_t best_distance = limit + 1;
  for (const auto& candidate : candidates) {
    size_t distance = edit_distance(wrong, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string did_you_mean_suffix(std::string_view wrong, std::span<const std::string> candidates) {
  auto best = did_you_mean(wrong, candidates);
  return best ? " (did you mean '" + *best + "'?)" : std::string{};
}

}  // namespace gl
