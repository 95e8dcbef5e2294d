// SPDX-License-Identifier: Apache-2.0
#include "supervise/stall_report.hpp"

#include <charconv>
#include <vector>

#include <fmt/core.h>

#include "supervise/exit_status.hpp"

namespace gl {
namespace {

constexpr std::string_view kStalled = "stalled: no forward progress for ";
constexpr std::string_view kUnknown = "?";

template <class Number>
std::optional<Number> parse_number(std::string_view text) {
  Number value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::string_view stall_signal_name(StallSignal signal) {
  return signal == StallSignal::metrics ? "metrics" : "generate";
}

std::optional<StallSignal> parse_stall_signal(std::string_view name) {
  if (name == "generate") return StallSignal::generate;
  if (name == "metrics") return StallSignal::metrics;
  return std::nullopt;
}

std::string stall_line(const StallReport& report) {
  return fmt::format(
      "{}{}{}s (signal={} in_flight={} tokens={}); dumping every thread's stack, then killing the "
      "engine",
      kRunLinePrefix, kStalled, report.still_for.count(), stall_signal_name(report.signal),
      report.in_flight ? std::to_string(*report.in_flight) : std::string(kUnknown),
      report.tokens ? fmt::format("{}", *report.tokens) : std::string(kUnknown));
}

std::optional<StallReport> parse_stall_line(std::string_view line) {
  if (!line.starts_with(kRunLinePrefix)) return std::nullopt;
  line.remove_prefix(kRunLinePrefix.size());
  if (!line.starts_with(kStalled)) return std::nullopt;
  line.remove_prefix(kStalled.size());
  const auto seconds_end = line.find("s (");
  const auto close = line.find(')');
  if (seconds_end == std::string_view::npos || close == std::string_view::npos ||
      close < seconds_end)
    return std::nullopt;
  StallReport report;
  auto seconds = parse_number<long long>(line.substr(0, seconds_end));
  if (!seconds) return std::nullopt;
  report.still_for = Seconds{*seconds};
  std::string_view fields = line.substr(seconds_end + 3, close - seconds_end - 3);
  bool saw_signal = false;
  while (!fields.empty()) {
    const auto space = fields.find(' ');
    const std::string_view field = fields.substr(0, space);
    fields = space == std::string_view::npos ? std::string_view{} : fields.substr(space + 1);
    const auto equals = field.find('=');
    if (equals == std::string_view::npos) return std::nullopt;
    const std::string_view key = field.substr(0, equals), value = field.substr(equals + 1);
    if (key == "signal") {
      auto signal = parse_stall_signal(value);
      if (!signal) return std::nullopt;
      report.signal = *signal;
      saw_signal = true;
    } else if (key == "in_flight" && value != kUnknown) {
      report.in_flight = parse_number<long long>(value);
      if (!report.in_flight) return std::nullopt;
    } else if (key == "tokens" && value != kUnknown) {
      report.tokens = parse_number<double>(value);
      if (!report.tokens) return std::nullopt;
    }
  }
  if (!saw_signal) return std::nullopt;
  return report;
}

}  // namespace gl
