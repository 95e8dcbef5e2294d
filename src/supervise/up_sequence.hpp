// SPDX-License-Identifier: Apache-2.0
#pragma once
// `up`'s sequence once the profile is loaded, its unit rendered and the transition decided
// (unit_transition's decide_up), out of cli/ as ninja's Builder is out of its main: the check
// before anything changes, root's state, the snapshot and the unit written, the unit enabled,
// the operator's word ending a crash loop, the start job watched, a change that did not become
// ready or failed its upgrade gate rolled back (supervise/rollback). The manager, clock and
// history come in as interfaces; what only cli/ reaches (the node's check, root's accounts, the
// gate's engine, the metrics file) through UpActions; every line through UpOutput. A test scripts
// a fake of each (tests/unit/supervise/up_sequence_test.cpp); the integration suites prove the
// wiring.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/finding.hpp"
#include "supervise/gate_check.hpp"
#include "supervise/history.hpp"
#include "supervise/rollback.hpp"
#include "supervise/start_timeline.hpp"
#include "supervise/unit_transition.hpp"
#include "systemd/manager.hpp"
#include "util/error.hpp"
#include "util/timekeeper.hpp"

namespace gl {

struct UpRequest {
  std::string unit;                      // gpulaunch-NAME.service
  std::filesystem::path unit_file;       // where the unit is installed
  std::filesystem::path snapshot;        // where `run` reads the merged profile
  std::string rendered;                  // the unit `up` installs
  std::string installed;                 // the unit file's text now ("" when there is none)
  std::string snapshot_text;             // the merged profile, as `run` reads it
  bool runtime = false;                  // --runtime: the [Install] links under /run
  bool force = false;                    // start despite the check's errors
  bool no_rollback = false;              // keep a changed unit that failed, for inspection
  std::chrono::seconds ready_window{0};  // the start job's bound: the ready timeout and a margin
  std::chrono::seconds stop_window{0};   // added for a restart: the running engine drains first
};

// What `up` asks beyond the manager, the clock and the history.
class UpActions {
 public:
  virtual ~UpActions() = default;
  // The check's findings on this node (rules/check); asked only when something would change.
  virtual std::vector<Finding> check() = 0;
  // Root's state before a unit names it: the history's directory, the profile's own user.
  virtual Result<void> prepare_state() = 0;
  // The upgrade gate of the unit that became ready; nullopt where it does not gate.
  virtual std::optional<GateCheck> gate(bool unit_changed) = 0;
  // The profile's metrics file: after a start that did not become ready, after a rollback.
  virtual void write_metrics() = 0;
};

// Why a changed unit is rolled back (or kept, with --no-rollback).
enum class UpFailure { not_ready, gate_failed };

// What `up` says, in the order it happens.
class UpOutput {
 public:
  virtual ~UpOutput() = default;
  virtual void enabled(const std::vector<std::string>& changes) = 0;  // [Install] links made
  virtual void unchanged() = 0;                                       // running as rendered
  virtual void checked(const CheckGate& check) = 0;  // the findings; the refusal or --force
  virtual void unit_changed(std::string_view installed, std::string_view rendered) = 0;
  virtual void warning(std::string_view line) = 0;
  virtual void starting(UnitAction action) = 0;
  virtual void progress(const std::string& phase, std::chrono::steady_clock::duration elapsed) = 0;
  virtual void watch_ended() = 0;
  virtual void start_failed(std::string_view failure) = 0;
  virtual void ready(std::chrono::milliseconds elapsed) = 0;
  virtual void gate_failed(std::string_view summary) = 0;
  virtual void kept_failed(UpFailure why) = 0;  // --no-rollback
  virtual void rolling_back(UpFailure why) = 0;
  virtual void rolled_back(const Rollback& rollback) = 0;
  virtual void rollback_failed(const Error& error) = 0;
  // Serving: the start's phases where record-start kept this start's (ExecStartPost=).
  virtual void done(const std::optional<StartTimeline>& start) = 0;
};

// `restart`: the unit as installed, restarted and watched as `up` watches a start.
struct RestartRequest {
  std::string unit;
  std::chrono::seconds ready_window{0};  // as UpRequest's
  std::chrono::seconds stop_window{0};
};

// The exit status: 0 when the unit serves (or runs unchanged); 1 when the check refused, the start
// failed or was rolled back. An error (nothing rolled back) when the manager or a write failed.
Result<int> run_up(const UpRequest& request, const UpTransition& transition,
                   SystemdManager& manager, Timekeeper& clock, const History& history,
                   UpActions& actions, UpOutput& output);

// `restart`, said through the same UpOutput as `up`'s start: the crash loop ended (the operator's
// word), the restart job watched with its progress, a start that did not become ready said with
// its failure and the metrics written (the only action asked), a ready one with its time and
// phases. Nothing is checked, written or rolled back: the unit stays as installed. 0 when ready,
// 1 when not; an error when the manager failed.
Result<int> run_restart(const RestartRequest& request, SystemdManager& manager, Timekeeper& clock,
                        const History& history, UpActions& actions, UpOutput& output);

}  // namespace gl
