// SPDX-License-Identifier: Apache-2.0
#include "cli/status_table.hpp"

#include "cli/colour.hpp"

#include <algorithm>
#include <array>

#include <fmt/core.h>
#include <fmt/format.h>

#include "catalog/engines.hpp"
#include "plan/gpu_assignment.hpp"
#include "util/terminal_text.hpp"

namespace gl {
namespace {

std::string state_of(const UnitStatus& unit) {
  // Between two starts systemd holds the unit in activating/auto-restart: say what it does.
  if (unit.active_state == "activating" && unit.sub_state == "auto-restart") return "restarting";
  return unit.active_state;
}

std::string systemd_failure(const UnitStatus& unit) {
  if (unit.result.empty() || unit.result == "success") return "";
  return unit.result;
}

}  // namespace

ServiceRow service_row(const std::string& name, const std::optional<UnitStatus>& unit,
                       const SupervisorState& supervisor, const Profile* installed) {
  ServiceRow row;
  row.name = name;
  if (installed != nullptr) {
    row.engine = std::string(engine_kind_name(installed->engine.kind));
    row.port = installed->server.port;
    row.endpoint = fmt::format("http://{}:{}", installed->server.host, installed->server.port);
    row.gpus = assigned_gpus(*installed);
  }
  if (!unit || unit->load_state != "loaded") {
    row.state = "not-loaded";
  } else {
    row.state = state_of(*unit);
    row.phase = unit->status_text;
    row.restarts = unit->restarts;
    row.since_usec = static_cast<int64_t>(unit->active_state == "active" && unit->active_enter_usec
                                              ? unit->active_enter_usec
                                              : unit->state_change_usec);
    row.last_failure = systemd_failure(*unit);
  }
  // The supervisor's class says why ("cuda-oom"), where systemd says only how ("exit-code").
  if (!supervisor.last_class.empty()) row.last_failure = supervisor.last_class;
  return row;
}

std::string format_ago(int64_t since_usec, int64_t now_usec) {
  if (since_usec <= 0) return "-";
  const int64_t seconds = std::max<int64_t>(0, (now_usec - since_usec) / 1'000'000);
  if (seconds < 120) return fmt::format("{}s ago", seconds);
  if (seconds < 2 * 3600) return fmt::format("{}m ago", seconds / 60);
  if (seconds < 2 * 86400) return fmt::format("{}h ago", seconds / 3600);
  return fmt::format("{}d ago", seconds / 86400);
}

std::string status_table(const std::vector<ServiceRow>& rows, int64_t now_usec, bool colour) {
  constexpr size_t kColumns = 9;
  using Line = std::array<std::string, kColumns>;
  std::vector<Line> lines{
      {"NAME", "ENGINE", "STATE", "SINCE", "RESTARTS", "LAST-FAILURE", "PORT", "GPUS", "PHASE"}};
  auto or_dash = [](std::string text) { return text.empty() ? std::string("-") : text; };
  for (const auto& row : rows)
    lines.push_back({row.name, or_dash(row.engine), row.state, format_ago(row.since_usec, now_usec),
                     std::to_string(row.restarts), or_dash(row.last_failure),
                     row.port ? std::to_string(*row.port) : "-",
                     or_dash(fmt::format("{}", fmt::join(row.gpus, ","))),
                     // The phase quotes what the engine's process said.
                     or_dash(terminal_text(row.phase))});
  std::array<size_t, kColumns> width{};
  for (const auto& line : lines)
    for (size_t column = 0; column < kColumns; ++column)
      width[column] = std::max(width[column], line[column].size());
  constexpr size_t kState = 2;
  std::string text;
  for (size_t at = 0; at < lines.size(); ++at) {
    const auto& line = lines[at];
    std::string out;
    for (size_t column = 0; column < kColumns; ++column) {
      // The last column is not padded: no trailing blanks. The state is coloured, not its
      // padding, so the columns stay aligned.
      if (column + 1 == kColumns)
        out += line[column];
      else if (column == kState && at > 0)
        out += paint(line[column], state_tone(line[column]), colour) +
               std::string(width[column] - line[column].size() + 2, ' ');
      else
        out += fmt::format("{:<{}}  ", line[column], width[column]);
    }
    text += out + "\n";
  }
  return text;
}

nlohmann::ordered_json service_row_json(const ServiceRow& row, int64_t now_usec) {
  auto optional_text = [](const std::string& text) {
    return text.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(text);
  };
  return {{"profile", row.name},
          {"engine", optional_text(row.engine)},
          {"state", row.state},
          {"phase", row.phase},
          {"since_usec",
           row.since_usec ? nlohmann::ordered_json(row.since_usec) : nlohmann::ordered_json()},
          {"since", format_ago(row.since_usec, now_usec)},
          {"restarts", row.restarts},
          {"last_failure_class", optional_text(row.last_failure)},
          {"port", row.port ? nlohmann::ordered_json(*row.port) : nlohmann::ordered_json()},
          {"endpoint", optional_text(row.endpoint)},
          {"gpus", row.gpus}};
}

}  // namespace gl
