// SPDX-License-Identifier: Apache-2.0
#pragma once
// The reason a scheduler's script hands to `scontrol update ... reason=`, as the JSON of
// `check --node` and `release-gpus` carry it: one line of at most 240 bytes with no quote,
// backslash or control character, so the JSON string has no escape and `sed` lifts it out whole.

#include <string>
#include <string_view>

namespace gl {

inline std::string drain_reason(std::string_view text) {
  constexpr size_t kReasonBytes = 240;
  std::string out;
  for (unsigned char c : text) {
    if (c == '"')
      out += '\'';
    else if (c == '\\')
      out += '/';
    else if (c < 0x20 || c == 0x7f)
      out += ' ';
    else
      out += static_cast<char>(c);
  }
  if (out.size() > kReasonBytes) {
    size_t cut = kReasonBytes - 3;
    // Not inside a UTF-8 sequence: back up over continuation bytes.
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out = out.substr(0, cut) + "...";
  }
  return out;
}

}  // namespace gl
