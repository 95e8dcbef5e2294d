// SPDX-License-Identifier: Apache-2.0
#include "cli/up_output.hpp"

#include <unistd.h>
#include <algorithm>
#include <cstdio>

#include <fmt/core.h>

#include "catalog/journal_messages.hpp"
#include "cli/colour.hpp"
#include "cli/findings_report.hpp"
#include "cli/unit_diff.hpp"
#include "engines/engine_argv.hpp"
#include "log/logger.hpp"
#include "supervise/failure_tail.hpp"
#include "supervise/start_phases.hpp"
#include "systemd/journal.hpp"
#include "util/duration.hpp"
#include "util/terminal_text.hpp"
#include "util/timekeeper.hpp"

namespace gl {
namespace {

// systemd's own last line of a failed start job, logged since `since_usec` (systemd 252
// src/core/job.c, job_log_done_status_message; Debian's 252 writes "Failed to start UNIT -
// DESCRIPTION.").
bool has_job_failed_line(const std::vector<JournalEntry>& entries, const std::string& unit,
                         uint64_t since_usec) {
  return std::any_of(entries.begin(), entries.end(), [&](const JournalEntry& entry) {
    return entry.realtime_usec >= since_usec && entry.identifier == "systemd" &&
           entry.message.starts_with("Failed to start " + unit);
  });
}

// The failed start's last journal lines: the engine's (and systemd's) first, gpulaunch's
// readiness probes, which the engine's access log writes every second, counted in one line.
// The job's failure reaches gpulaunch over D-Bus while systemd's last lines may still be on
// their way to journald: read again (every 50 ms, at most 1 s) until the job's own failure line
// is there.
void print_journal_tail(const ServiceFace& face, uint64_t since_usec) {
  constexpr size_t kShown = 15;
  constexpr size_t kRead = 400;  // enough to see past a burst of probe answers
  auto journal = open_journal();
  if (!journal) return;
  auto entries = (*journal)->tail(face.unit, kRead);
  for (int tries = 0;
       tries < 20 && entries && !has_job_failed_line(*entries, face.unit, since_usec); ++tries) {
    system_timekeeper().sleep(std::chrono::milliseconds(50));
    entries = (*journal)->tail(face.unit, kRead);
  }
  if (!entries || entries->empty()) return;
  const auto tail = failure_tail(*entries, url_path(face.health_url), kShown,
                                 static_cast<uint64_t>(system_timekeeper().now_usec()));
  logging::error(fmt::format("last lines of {}:", face.unit));
  for (const auto& line : tail.lines) logging::error(fmt::format("  {}", line));
  if (tail.probes) logging::error(fmt::format("  ({})", *tail.probes));
}

std::string endpoint(const ServiceFace& face) {
  return face.health_url.substr(0, face.health_url.rfind('/'));
}

void print_ready(const ServiceFace& face, std::chrono::milliseconds elapsed) {
  if (face.rendezvous)
    fmt::print("{} {} rank {} runs headless, joined rank 0 at {} after {:.1f}s\n",
               paint("ready:", Tone::ok), face.name, face.node_rank, *face.rendezvous,
               elapsed.count() / 1000.0);
  else if (face.health_url.empty())
    fmt::print("{} {} after {:.1f}s\n", paint("ready:", Tone::ok), face.unit,
               elapsed.count() / 1000.0);
  else
    fmt::print("{} {} serves at {} after {:.1f}s\n", paint("ready:", Tone::ok), face.name,
               endpoint(face), elapsed.count() / 1000.0);
}

}  // namespace

std::string progress_text(const std::string& phase, std::chrono::steady_clock::duration elapsed,
                          std::chrono::seconds deadline) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(elapsed).count();
  // The unit's status text, which `run` makes of the engine's start-up lines.
  const std::string shown = terminal_text(phase);
  if (deadline.count() <= 0) return fmt::format("waiting for ready: {}s: {}", seconds, shown);
  return fmt::format("waiting for ready: {}s of {}: {}", seconds, format_duration(deadline), shown);
}

ServiceFace face_of(const Profile& profile, const LaunchPlan& plan, std::string unit_file,
                    std::string where) {
  ServiceFace face;
  face.name = profile.name;
  face.unit = profile.unit_name();
  face.unit_file = std::move(unit_file);
  face.health_url = plan.health_url;
  if (plan.rendezvous) face.rendezvous = rendezvous_text(*plan.rendezvous);
  face.node_rank = plan.node_rank;
  face.ready_timeout = profile.server.ready_timeout;
  face.where = std::move(where);
  return face;
}

std::optional<RunSettings> installed_run_settings(const UnitStatus& status) {
  // gpulaunch run SETTINGS... -- ENGINE...
  const auto& exec = status.exec_start;
  if (exec.size() < 2 || exec[1] != "run") return std::nullopt;
  auto settings = parse_run_settings(std::vector<std::string>(exec.begin() + 2, exec.end()));
  if (!settings) return std::nullopt;
  return std::move(*settings);
}

ServiceFace face_of(const std::string& name, const UnitStatus& status,
                    const std::optional<RunSettings>& settings, std::string where) {
  ServiceFace face;
  face.name = name;
  face.unit = status.name;
  face.unit_file = status.fragment_path;
  face.where = std::move(where);
  if (!settings) return face;
  face.health_url = settings->health_url;
  face.ready_timeout = settings->ready_timeout;
  if (settings->rendezvous) face.rendezvous = rendezvous_text(*settings->rendezvous);
  return face;
}

PrintedUpOutput::PrintedUpOutput(ServiceFace face)
    : face_(std::move(face)), tty_(::isatty(STDOUT_FILENO) == 1) {}

PrintedUpOutput::~PrintedUpOutput() {
  watch_ended();
}

void PrintedUpOutput::enabled(const std::vector<std::string>& changes) {
  for (const auto& line : changes) fmt::print("{}\n", terminal_text(line));
}

void PrintedUpOutput::unchanged() {
  fmt::print("{} is running and unchanged: nothing to do.\n", face_.unit);
  if (face_.rendezvous)
    fmt::print("headless rank {}: no endpoint; joins rank 0 at {}\n", face_.node_rank,
               *face_.rendezvous);
  else
    fmt::print("endpoint: {}\n", endpoint(face_));
}

void PrintedUpOutput::checked(const CheckGate& check) {
  if (!check.findings.empty()) {
    fmt::print("gpulaunch check: {} error(s), {} warning(s) for '{}' on this node", check.errors,
               std::ranges::count(check.findings, Severity::warning, &Finding::severity),
               face_.name);
    print_findings(check.findings);
    fmt::print("\n");
  }
  std::fflush(stdout);
  if (check.refuse)
    logging::error(
        fmt::format("Refusing to start {}: the check found {} error(s) above. Fix them, or "
                    "pass --force to start anyway.",
                    face_.unit, check.errors));
  else if (check.errors > 0)
    logging::warning(
        fmt::format("WARNING: --force: starting {} DESPITE {} CHECK ERROR(S); expect the "
                    "failures they predict.",
                    face_.unit, check.errors));
}

void PrintedUpOutput::unit_changed(std::string_view installed, std::string_view rendered) {
  fmt::print("{} changed:\n{}", face_.unit_file,
             unit_diff(std::string(installed), std::string(rendered), face_.unit_file));
}

void PrintedUpOutput::warning(std::string_view line) {
  logging::warning(fmt::format("warning: {}", line));
}

void PrintedUpOutput::starting(UnitAction action) {
  started_usec_ = static_cast<uint64_t>(system_timekeeper().now_usec());
  fmt::print("{} {} ({})\n", action == UnitAction::restart ? "restarting" : "starting", face_.unit,
             face_.unit_file);
  std::fflush(stdout);
}

// On a terminal the line redraws itself; elsewhere each change is its own line.
void PrintedUpOutput::progress(const std::string& phase,
                               std::chrono::steady_clock::duration elapsed) {
  const std::string text = progress_text(phase, elapsed, face_.ready_timeout);
  if (tty_) {
    fmt::print("\r\033[K{}", text);
    std::fflush(stdout);
    drawn_ = true;
  } else if (phase != last_) {
    fmt::print("{}\n", text);
    std::fflush(stdout);
  }
  last_ = phase;
}

void PrintedUpOutput::watch_ended() {
  if (tty_ && drawn_) fmt::print("\n");
  drawn_ = false;
}

void PrintedUpOutput::start_failed(std::string_view failure) {
  logging::error(fmt::format("Failed to start {}: {}", face_.unit, failure));
  print_journal_tail(face_, started_usec_);
}

void PrintedUpOutput::ready(std::chrono::milliseconds elapsed) {
  print_ready(face_, elapsed);
}

void PrintedUpOutput::gate_failed(std::string_view summary) {
  logging::error(fmt::format("Failed the upgrade gate of {}: {}", face_.unit, summary),
                 logging::Fields{.kind = kGateFailedMessage});
}

void PrintedUpOutput::kept_failed(UpFailure why) {
  logging::error(fmt::format(
      "--no-rollback: {} keeps the changed unit, {}; `gpulaunch up` of the previous profile "
      "puts the previous version back.",
      face_.unit, why == UpFailure::not_ready ? "as it failed" : "which failed its gate"));
}

void PrintedUpOutput::rolling_back(UpFailure why) {
  logging::error(
      fmt::format("Rolling back {}: the changed unit {}; restoring the previous unit and "
                  "profile snapshot (pass --no-rollback to keep the failed state for "
                  "inspection).",
                  face_.unit,
                  why == UpFailure::not_ready ? "did not become ready" : "failed its upgrade gate"),
      logging::Fields{.kind = kRolledBackMessage});
}

void PrintedUpOutput::rolled_back(const Rollback& rolled) {
  for (const auto& warning : rolled.warnings) logging::warning(fmt::format("warning: {}", warning));
  if (rolled.restarted)
    fmt::print("rolled back: {} runs its previous unit again, ready after {:.1f}s\n", face_.unit,
               rolled.ready_after.count() / 1000.0);
  else
    fmt::print("rolled back: {} has its previous unit again and is stopped, as it was before\n",
               face_.unit);
}

void PrintedUpOutput::rollback_failed(const Error& error) {
  logging::error(fmt::format("Failed to roll back {}: {}", face_.unit, error.message));
}

void PrintedUpOutput::done(const std::optional<StartTimeline>& start) {
  if (start) fmt::print("{}\n", describe_start(*start));
  fmt::print(
      "status: gpulaunch status {0}   logs: gpulaunch logs {0} -f   stop: gpulaunch down {0}{1}\n",
      face_.name, face_.where);
}

}  // namespace gl
