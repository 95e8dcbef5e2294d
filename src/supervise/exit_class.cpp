// SPDX-License-Identifier: Apache-2.0
#include "supervise/exit_class.hpp"

#include <array>
#include <charconv>
#include <iterator>
#include <utility>

#include "supervise/exit_status.hpp"

namespace gl {
namespace {

// Each class once: its name (events, metrics, journal fields), whether it counts against the
// crash-loop budget, and, for a class systemd does not restart (RestartPreventExitStatus=), the
// action its event names. A class with a stay-down text is terminal: a new one cannot be
// terminal without saying what the operator does next.
struct ExitClassRow {
  ExitClass value;
  std::string_view name;
  bool failure;                // counts against the budget and grows the backoff
  std::string_view stay_down;  // non-empty: terminal, and the event's action
};

constexpr ExitClassRow kRows[] = {
    {ExitClass::clean, "clean", false, {}},
    {ExitClass::host_oom, "host-oom", true, {}},
    {ExitClass::cuda_oom, "cuda-oom", true, {}},
    {ExitClass::hang, "hang", true, {}},
    {ExitClass::start_timeout, "start-timeout", true, {}},
    {ExitClass::config_error, "config-error", false,
     "stay down: configuration error, not retried (fix the profile, then `gpulaunch up`)"},
    {ExitClass::setup_failure, "setup-failure", false,
     "stay down: systemd could not set up the service, not retried"},
    {ExitClass::budget, "crash-loop", false,
     "stay down: crash-loop budget spent (`gpulaunch restart` to try again)"},
    {ExitClass::residue, "gpu-residue", true, {}},
    {ExitClass::stalled, "stalled", true, {}},
    {ExitClass::crash, "crash", true, {}},
};

// Every enumerator has its row, in the enum's order (all_exit_classes() is that order).
constexpr bool rows_follow_the_enum() {
  for (size_t i = 0; i < std::size(kRows); ++i)
    if (static_cast<size_t>(kRows[i].value) != i) return false;
  return std::size(kRows) == static_cast<size_t>(ExitClass::crash) + 1;
}
static_assert(rows_follow_the_enum(), "kRows: one row per ExitClass, in the enum's order");

constexpr const ExitClassRow& row_of(ExitClass value) {
  return kRows[static_cast<size_t>(value)];
}

std::optional<int> number(std::string_view text) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The value of `key=` in a comma-separated kernel line, or empty.
std::string_view field_value(std::string_view line, std::string_view key) {
  for (size_t at = line.find(key); at != std::string_view::npos; at = line.find(key, at + 1)) {
    if (at > 0 && line[at - 1] != ',' && line[at - 1] != ':') continue;
    auto value = line.substr(at + key.size());
    return value.substr(0, value.find(','));
  }
  return {};
}

Classification with(ExitClass value, std::string evidence) {
  return Classification{value, std::move(evidence), std::nullopt};
}

}  // namespace

std::string_view exit_class_name(ExitClass value) {
  return row_of(value).name;
}

std::vector<ExitClass> all_exit_classes() {
  std::vector<ExitClass> all;
  for (const auto& row : kRows) all.push_back(row.value);
  return all;
}

std::optional<ExitClass> parse_exit_class(std::string_view name) {
  for (const auto& row : kRows)
    if (row.name == name) return row.value;
  return std::nullopt;
}

bool counts_as_failure(ExitClass value) {
  return row_of(value).failure;
}

bool is_terminal(ExitClass value) {
  return !row_of(value).stay_down.empty();
}

std::optional<std::string_view> stay_down_action(ExitClass value) {
  if (!is_terminal(value)) return std::nullopt;
  return row_of(value).stay_down;
}

bool is_kernel_oom_kill_of(std::string_view line, std::string_view unit) {
  if (line.find(kKernelOomKillMarker) == std::string_view::npos || unit.empty()) return false;
  for (std::string_view key : {"oom_memcg=", "task_memcg="}) {
    auto path = field_value(line, key);
    if (path.size() > unit.size() && path.ends_with(unit) &&
        path[path.size() - unit.size() - 1] == '/')
      return true;
  }
  return false;
}

Classification classify_stop(const StopReport& report) {
  const std::string summary = "SERVICE_RESULT=" + report.service_result +
                              " EXIT_CODE=" + report.exit_code +
                              " EXIT_STATUS=" + report.exit_status;
  const bool exited = report.exit_code == "exited";
  // -1: no exit status (killed by a signal, or not a number). A plain int, as g++ 12 warns
  // falsely about std::optional<int> comparisons here.
  const int status = exited ? number(report.exit_status).value_or(-1) : -1;

  // Exit statuses that say it all come first: they are gpulaunch's own or systemd's verdicts.
  if (status == kExitConfig) {
    for (const auto& line : report.lines)
      if (is_usage_error_line(line)) {
        if (auto fix = config_error_fix(line))
          return with(ExitClass::config_error, line + "; fix: " + std::string(*fix));
        return with(ExitClass::config_error, line);
      }
    return with(ExitClass::config_error, summary);
  }
  if (is_setup_failure(status)) return with(ExitClass::setup_failure, summary);
  if (status == kExitCrashLoop) return with(ExitClass::budget, summary);
  if (status == kExitGpuResidue) return with(ExitClass::residue, summary);
  // `run` killed an engine that made no forward progress; its stall line says what it saw (the
  // last one: a restarted engine's invocation has one at most, but be sure).
  if (status == kExitStalled) {
    for (auto line = report.lines.rbegin(); line != report.lines.rend(); ++line)
      if (auto stall = parse_stall_line(*line)) {
        Classification result = with(ExitClass::stalled, *line);
        result.stall = stall;
        return result;
      }
    return with(ExitClass::stalled, summary);
  }

  // systemd calls it success when the engine exited 0 or a stop request's SIGTERM ended it.
  if (report.service_result == "success") return with(ExitClass::clean, summary);

  // The kernel's word beats the exit status: an OOM kill reads as SIGKILL (signal 9, or 137
  // from `run`) on cgroup v1 and hybrid hosts; only pure v2 reports Result=oom-kill.
  for (const auto& line : report.kernel_lines)
    if (is_kernel_oom_kill_of(line, report.unit)) return with(ExitClass::host_oom, line);
  if (report.service_result == "oom-kill") return with(ExitClass::host_oom, summary);
  if (!report.cgroup_oom_kill.empty()) return with(ExitClass::host_oom, report.cgroup_oom_kill);

  if (report.service_result == "watchdog") return with(ExitClass::hang, summary);
  if (report.service_result == "timeout" || status == kExitReadyTimeout)
    return with(ExitClass::start_timeout, summary);

  // The engine saying its failure was no shortage of memory (SGLang after a failed CUDA graph
  // capture) overrules the OOM-looking line before it: no step-down would help.
  for (auto line = report.lines.rbegin(); line != report.lines.rend(); ++line)
    for (std::string_view marker : not_oom_markers())
      if (line->find(marker) != std::string::npos)
        return with(ExitClass::crash, *line + " (not out of memory: no step-down)");

  // CUDA OOM: the engine's own words; the last matching line is the final error.
  for (auto line = report.lines.rbegin(); line != report.lines.rend(); ++line)
    for (const auto& signature : cuda_oom_signatures())
      if (line->find(signature.text) != std::string::npos)
        return Classification{ExitClass::cuda_oom, *line, signature.knob};

  if (status == 0) return with(ExitClass::clean, summary);
  return with(ExitClass::crash, summary);
}

}  // namespace gl
