// SPDX-License-Identifier: Apache-2.0
#include "util/terminal_text.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/core.h>

namespace gl {
namespace {

bool shown_escaped(std::uint32_t code) {
  return (code >= 0x80 && code <= 0x9f) || code == 0x061c || code == 0x200e || code == 0x200f ||
         (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
}

// The length of the valid UTF-8 sequence at `at` and its code point; 0 when it is not one.
std::size_t utf8_at(std::string_view text, std::size_t at, std::uint32_t& code) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  std::uint32_t minimum = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    code = lead & 0x1f;
    minimum = 0x80;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    code = lead & 0x0f;
    minimum = 0x800;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    code = lead & 0x07;
    minimum = 0x10000;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    code = (code << 6) | (byte(i) & 0x3f);
  }
  if (code < minimum || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
  return length;
}

}  // namespace

std::string terminal_text(std::string_view text) {
  std::string shown;
  shown.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const auto byte = static_cast<unsigned char>(text[at]);
    if (byte < 0x80) {
      if (byte < 0x20 || byte == 0x7f)
        shown += fmt::format("\\x{:02x}", byte);
      else
        shown += static_cast<char>(byte);
      ++at;
      continue;
    }
    std::uint32_t code = 0;
    const std::size_t length = utf8_at(text, at, code);
    if (length == 0) {
      shown += fmt::format("\\x{:02x}", byte);
      ++at;
      continue;
    }
    if (shown_escaped(code))
      shown += fmt::format("\\u{:04x}", code);
    else
      shown.append(text.substr(at, length));
    at += length;
  }
  return shown;
}

std::string terminal_lines(std::string_view text) {
  std::string shown;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    shown += terminal_text(text.substr(start, end - start));
    if (end == text.size()) break;
    shown += '\n';
    start = end + 1;
  }
  return shown;
}

}  // namespace gl
