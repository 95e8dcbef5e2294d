// SPDX-License-Identifier: Apache-2.0
#include "util/duration.hpp"

#include <array>
#include <cctype>
#include <limits>
#include <utility>

#include <fmt/core.h>

namespace gl {
namespace {

constexpr std::array<std::pair<std::string_view, long long>, 8> kUnits{{
    {"s", 1},
    {"sec", 1},
    {"m", 60},
    {"min", 60},
    {"h", 3600},
    {"hr", 3600},
    {"d", 86400},
    {"day", 86400},
}};

}  // namespace

std::optional<Seconds> parse_duration(std::string_view text) {
  long long total = 0;
  size_t i = 0;
  bool any = false;
  constexpr long long kMax = 10LL * 365 * 86400;  // far above any sane timeout, far below overflow
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    if (i == text.size()) break;
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
    long long number = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      number = number * 10 + (text[i] - '0');
      if (number > kMax) return std::nullopt;
      ++i;
    }
    size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    long long factor = 0;
    if (unit.empty()) {
      factor = 1;
    } else {
      for (const auto& [name, seconds] : kUnits)
        if (name == unit) factor = seconds;
    }
    if (factor == 0) return std::nullopt;
    total += number * factor;
    if (total > kMax) return std::nullopt;
    any = true;
  }
  if (!any) return std::nullopt;
  return Seconds{total};
}

std::string format_duration(Seconds value) {
  long long s = value.count();
  if (s == 0) return "0s";
  std::string text;
  auto part = [&](long long unit, std::string_view name) {
    if (s < unit) return;
    if (!text.empty()) text += ' ';
    text += fmt::format("{}{}", s / unit, name);
    s %= unit;
  };
  part(3600, "h");
  part(60, "min");
  part(1, "s");
  return text;
}

}  // namespace gl
