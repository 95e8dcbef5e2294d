// SPDX-License-Identifier: Apache-2.0
#include "util/version.hpp"

#include <cctype>

#include <fmt/core.h>

namespace gl {

std::string Version::str() const {
  return fmt::format("{}.{}.{}", major, minor, patch);
}
std::string Version::major_minor() const {
  return fmt::format("{}.{}", major, minor);
}

std::optional<Version> parse_version(std::string_view text) {
  int parts[3] = {0, 0, 0};
  size_t position = 0;
  int count = 0;
  while (count < 3 && position < text.size() &&
         std::isdigit(static_cast<unsigned char>(text[position]))) {
    long long value = 0;
    while (position < text.size() && std::isdigit(static_cast<unsigned char>(text[position]))) {
      value = value * 10 + (text[position] - '0');
      if (value > 1'000'000) return std::nullopt;
      ++position;
    }
    parts[count++] = static_cast<int>(value);
    if (position < text.size() && text[position] == '.')
      ++position;
    else
      break;
  }
  if (count == 0) return std::nullopt;
  return Version{parts[0], parts[1], parts[2]};
}

Version version_from_cuda_int(long long encoded) {
  return Version{static_cast<int>(encoded / 1000), static_cast<int>((encoded % 1000) / 10), 0};
}

}  // namespace gl
