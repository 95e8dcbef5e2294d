// SPDX-License-Identifier: Apache-2.0
#pragma once
// Colour for people at a terminal, as systemctl and podman give it: errors red, warnings yellow,
// ok green, through fmt's color support. Only where standard output is a terminal and NO_COLOR
// is unset or empty (no-color.org); never into a pipe, a file or the journal, and never in
// `--json` (which never calls paint).

#include <string>
#include <string_view>

namespace gl {

enum class Tone { none, error, warning, ok };

// The decision, from its inputs: a terminal, and NO_COLOR's value (nullptr: unset).
bool colour_wanted(bool terminal, const char* no_color);

// For this process's standard output (decided once).
bool stdout_colour();

// `text` in `tone` where `on`, else as it is.
std::string paint(std::string_view text, Tone tone, bool on);

// paint for standard output.
inline std::string paint(std::string_view text, Tone tone) {
  return paint(text, tone, stdout_colour());
}

// A unit's state as the status table shows it: active ok, failed an error, on its way a warning.
Tone state_tone(std::string_view state);

}  // namespace gl
