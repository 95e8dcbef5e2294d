// SPDX-License-Identifier: Apache-2.0
#include "cli/colour.hpp"

#include <unistd.h>
#include <cstdlib>

#include <fmt/color.h>

namespace gl {

bool colour_wanted(bool terminal, const char* no_color) {
  return terminal && (no_color == nullptr || *no_color == '\0');
}

bool stdout_colour() {
  static const bool on = colour_wanted(::isatty(STDOUT_FILENO) == 1, std::getenv("NO_COLOR"));
  return on;
}

std::string paint(std::string_view text, Tone tone, bool on) {
  if (!on || tone == Tone::none) return std::string(text);
  const auto colour = tone == Tone::error     ? fmt::terminal_color::red
                      : tone == Tone::warning ? fmt::terminal_color::yellow
                                              : fmt::terminal_color::green;
  return fmt::format(fmt::fg(colour), "{}", text);
}

Tone state_tone(std::string_view state) {
  if (state == "active") return Tone::ok;
  if (state == "failed") return Tone::error;
  if (state == "activating" || state == "restarting" || state == "deactivating" ||
      state == "reloading")
    return Tone::warning;
  return Tone::none;
}

}  // namespace gl
