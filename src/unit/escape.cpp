// SPDX-License-Identifier: Apache-2.0
#include "unit/escape.hpp"

#include <fmt/core.h>

namespace gl {
namespace {

// Length of the valid UTF-8 sequence at `text[i]`, or 0 if none starts there.
size_t utf8_sequence(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  size_t length = lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 0;
  if (lead >= 0xf8 || length == 0 || i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k)
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
  // Reject overlong three- and four-byte forms and UTF-16 surrogates, as systemd's utf8 check does.
  if (length == 3 &&
      ((lead == 0xe0 && byte(i + 1) < 0xa0) || (lead == 0xed && byte(i + 1) >= 0xa0)))
    return 0;
  if (length == 4 &&
      ((lead == 0xf0 && byte(i + 1) < 0x90) || (lead == 0xf4 && byte(i + 1) >= 0x90)))
    return 0;
  return length;
}

std::string quote(std::string_view text, bool escape_dollar) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      // Valid UTF-8 goes through as is; a stray byte as \xNN, which systemd turns back into it.
      if (size_t length = utf8_sequence(text, i)) {
        out.append(text.substr(i, length));
        i += length;
      } else {
        out += fmt::format("\\x{:02x}", c);
        ++i;
      }
      continue;
    }
    switch (c) {
      case '%':
        out += "%%";
        break;
      case '$':
        out += escape_dollar ? "$$" : "$";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f)
          out += fmt::format("\\x{:02x}", c);
        else
          out += static_cast<char>(c);
    }
    ++i;
  }
  out += '"';
  return out;
}

}  // namespace

std::string quote_exec_word(std::string_view word) {
  return quote(word, true);
}

std::string exec_command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& word : argv) {
    if (!line.empty()) line += ' ';
    line += quote_exec_word(word);
  }
  return line;
}

std::string quote_path_word(std::string_view path) {
  return quote(path, false);
}

std::string quote_environment(std::string_view name, std::string_view value) {
  return quote(std::string(name) + "=" + std::string(value), false);
}

std::string credential_path_environment(std::string_view name, std::string_view credential) {
  return fmt::format("\"{}=%d/{}\"", name, credential);
}

std::string one_line(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f)
      out += fmt::format("\\x{:02x}", byte);
    else
      out += c;
  }
  if (out.ends_with('\\')) out += ' ';
  return out;
}

std::string escape_specifiers(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '%') out += '%';
    out += c;
  }
  return one_line(out);
}

}  // namespace gl
