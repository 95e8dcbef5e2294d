// SPDX-License-Identifier: Apache-2.0
#include "run/prometheus_text.hpp"

#include <charconv>
#include <cmath>
#include <string>

namespace gl {
namespace {

// A sample's value: a float as Go and Python write it, "NaN" and "+Inf" included (from_chars
// takes "nan" and "inf" in any case, but not a leading '+').
std::optional<double> parse_value(std::string_view text) {
  if (text.starts_with('+')) text.remove_prefix(1);
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The end of a label set that starts at `open` ('{'): label values are quoted strings in which
// '\' escapes the next character, so a '}' inside one does not end the set.
std::string_view::size_type labels_end(std::string_view line, std::string_view::size_type open) {
  bool quoted = false;
  for (auto i = open + 1; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '\\') {
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (!quoted && c == '}') {
      return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

std::optional<double> prometheus_sum(std::string_view text, std::string_view name) {
  std::optional<double> sum;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.starts_with(name) || line.size() == name.size()) continue;
    auto rest = line.substr(name.size());
    if (rest.front() == '{') {
      const auto close = labels_end(rest, 0);
      if (close == std::string_view::npos) continue;
      rest = rest.substr(close + 1);
    }
    // What follows the name (and labels) is whitespace, then the value, then an optional
    // timestamp: a name that merely starts with `name` fails here.
    if (rest.empty() || (rest.front() != ' ' && rest.front() != '\t')) continue;
    const auto value_start = rest.find_first_not_of(" \t");
    if (value_start == std::string_view::npos) continue;
    rest = rest.substr(value_start);
    auto value = parse_value(rest.substr(0, rest.find_first_of(" \t")));
    if (!value || std::isnan(*value)) continue;
    sum = sum.value_or(0) + *value;
  }
  return sum;
}

}  // namespace gl
