// SPDX-License-Identifier: Apache-2.0
#include "unit/drop_in.hpp"

#include <string>

namespace gl {
namespace {

std::string_view trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r";
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

}  // namespace

Result<void> apply_drop_in(UnitFile& unit, std::string_view text, std::string_view shown) {
  std::string section;
  size_t number = 0;
  while (!text.empty()) {
    // One logical line: a trailing backslash joins the next physical line, with a space.
    std::string line;
    const size_t first_number = number + 1;
    for (;;) {
      const size_t end = std::min(text.find('\n'), text.size());
      std::string_view physical = text.substr(0, end);
      text.remove_prefix(std::min(text.size(), end + 1));
      ++number;
      physical = trim(physical);
      const bool comment = physical.starts_with('#') || physical.starts_with(';');
      if (!line.empty() && comment) continue;  // a comment inside a continuation is skipped
      if (physical.ends_with('\\') && !text.empty()) {
        line.append(physical.substr(0, physical.size() - 1)).append(" ");
        continue;
      }
      line.append(physical);
      break;
    }
    const std::string_view logical = trim(line);
    if (logical.empty() || logical.starts_with('#') || logical.starts_with(';')) continue;
    if (logical.starts_with('[')) {
      if (!logical.ends_with(']') || logical.size() < 3)
        return failf("{}:{}: '{}' is not a section header", shown, first_number, logical);
      section = std::string(logical.substr(1, logical.size() - 2));
      continue;
    }
    const size_t equals = logical.find('=');
    if (equals == std::string_view::npos)
      return failf("{}:{}: '{}' is not Key=Value", shown, first_number, logical);
    if (section.empty())
      return failf("{}:{}: '{}' is outside any section", shown, first_number, logical);
    unit.add(section, std::string(trim(logical.substr(0, equals))),
             std::string(trim(logical.substr(equals + 1))));
  }
  return {};
}

}  // namespace gl
