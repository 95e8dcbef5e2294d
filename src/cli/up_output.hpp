// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `up` and `restart` say on a terminal or into a log (supervise/up_sequence's UpOutput):
// the check, the unit's diff, the progress line with the deadline, the failure with the engine's
// last lines, ready, the rollback. `up` says it of the profile it installs, `restart` of the unit
// as installed (its `run` settings).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "plan/launch_plan.hpp"
#include "plan/run_settings.hpp"
#include "profile/profile.hpp"
#include "supervise/up_sequence.hpp"

namespace gl {

// The service as the lines name it.
struct ServiceFace {
  std::string name;       // the profile
  std::string unit;       // gpulaunch-NAME.service
  std::string unit_file;  // where it is installed
  std::string health_url;
  std::optional<std::string> rendezvous;  // a headless rank: rank 0's HOST:PORT
  long long node_rank = 0;
  std::chrono::seconds ready_timeout{0};  // the deadline `run` keeps; 0: not known
  std::string where;                      // " --user", " --runtime" or ""
};

ServiceFace face_of(const Profile& profile, const LaunchPlan& plan, std::string unit_file,
                    std::string where);
// `run`'s settings read back from the ExecStart= the manager loaded (plan/run_settings); none
// for a unit whose main process is not `gpulaunch run`.
std::optional<RunSettings> installed_run_settings(const UnitStatus& status);
// The unit as the manager loaded it, with its `run` settings where it has them.
ServiceFace face_of(const std::string& name, const UnitStatus& status,
                    const std::optional<RunSettings>& settings, std::string where);

class PrintedUpOutput final : public UpOutput {
 public:
  explicit PrintedUpOutput(ServiceFace face);
  ~PrintedUpOutput() override;

  void enabled(const std::vector<std::string>& changes) override;
  void unchanged() override;
  void checked(const CheckGate& check) override;
  void unit_changed(std::string_view installed, std::string_view rendered) override;
  void warning(std::string_view line) override;
  void starting(UnitAction action) override;
  void progress(const std::string& phase, std::chrono::steady_clock::duration elapsed) override;
  void watch_ended() override;
  void start_failed(std::string_view failure) override;
  void ready(std::chrono::milliseconds elapsed) override;
  void gate_failed(std::string_view summary) override;
  void kept_failed(UpFailure why) override;
  void rolling_back(UpFailure why) override;
  void rolled_back(const Rollback& rollback) override;
  void rollback_failed(const Error& error) override;
  void done(const std::optional<StartTimeline>& start) override;

 private:
  ServiceFace face_;
  bool tty_;
  bool drawn_ = false;
  std::string last_;
  uint64_t started_usec_ = 0;  // when the start job was asked for (starting())
};

// "waiting for ready: 12s of 20min: loading weights": the progress line's text.
std::string progress_text(const std::string& phase, std::chrono::steady_clock::duration elapsed,
                          std::chrono::seconds deadline);

}  // namespace gl
