// SPDX-License-Identifier: Apache-2.0
#pragma once
// Durations as profiles write them ("90s", "20min", "1h 30min", or an integer of seconds) and
// as unit files want them.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace gl {

using Seconds = std::chrono::seconds;

// nullopt when the text is not a duration; units: s, sec, m, min, h, hr, d.
std::optional<Seconds> parse_duration(std::string_view text);

// "20min", "90s", "1h 30s": exact, in the units systemd reads.
std::string format_duration(Seconds value);

}  // namespace gl
