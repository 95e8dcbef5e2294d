// SPDX-License-Identifier: Apache-2.0
#pragma once
// A systemd manager in memory: units with their status, the jobs enqueued on them (what a user
// would see systemctl do), jobs that finish after a few waits with a scripted result, and waits
// that move a fake clock instead of blocking.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fakes/util/fake_timekeeper.hpp"
#include "systemd/manager.hpp"

namespace gl::testing {

class FakeManager final : public SystemdManager {
 public:
  explicit FakeManager(FakeTimekeeper* clock = nullptr) : clock_(clock) {}

  // How the next job ends: after `waits` calls to wait(), with `result`; the unit then has
  // `active_state` (unset: active after StartUnit/RestartUnit, inactive after StopUnit).
  struct JobScript {
    int waits = 1;
    std::string result = "done";
    std::optional<std::string> active_state;
  };
  void script_next_job(JobScript script) { scripts_.push_back(std::move(script)); }

  // A unit the manager knows, loaded, in `active_state`.
  UnitStatus& add_unit(const std::string& name, const std::string& active_state,
                       const std::string& fragment_path = {}) {
    UnitStatus& status = units[name];
    status.name = name;
    status.load_state = "loaded";
    status.active_state = active_state;
    status.sub_state = active_state == "active" ? "running" : "dead";
    status.result = "success";
    status.fragment_path = fragment_path;
    return status;
  }

  Result<void> reload() override {
    calls.push_back("Reload");
    return {};
  }
  Result<std::string> enqueue(std::string_view method, std::string_view unit) override {
    calls.push_back(std::string(method) + " " + std::string(unit));
    Job job;
    job.method = method;
    job.unit = unit;
    if (!scripts_.empty()) {
      job.script = scripts_.front();
      scripts_.erase(scripts_.begin());
    }
    const std::string path = "/org/freedesktop/systemd1/job/" + std::to_string(jobs_.size() + 1);
    jobs_[path] = job;
    return path;
  }
  Result<UnitStatus> status(std::string_view unit) override {
    auto found = units.find(std::string(unit));
    if (found != units.end()) return found->second;
    UnitStatus missing;
    missing.name = unit;
    missing.load_state = "not-found";
    missing.active_state = "inactive";
    missing.sub_state = "dead";
    return missing;
  }
  Result<std::vector<UnitFileChange>> set_enabled(std::string_view unit, bool enabled,
                                                  bool runtime) override {
    const std::string name(unit);
    calls.push_back(std::string(enabled ? "EnableUnitFiles " : "DisableUnitFiles ") + name +
                    (runtime ? " runtime" : ""));
    const std::string link =
        std::string(runtime ? "/run" : "/etc") + "/systemd/system/multi-user.target.wants/" + name;
    if (enabled == enabled_units.contains(name)) return std::vector<UnitFileChange>{};
    if (enabled) {
      enabled_units.insert(name);
      return std::vector<UnitFileChange>{{"symlink", link, "/etc/systemd/system/" + name}};
    }
    enabled_units.erase(name);
    return std::vector<UnitFileChange>{{"unlink", link, ""}};
  }
  Result<std::vector<std::string>> list_units(std::string_view) override {
    std::vector<std::string> names;
    for (const auto& [name, status] : units) names.push_back(name);
    return names;
  }
  // How a transient service's command ends once its start job is done: the unit's state and
  // ExecMainCode/ExecMainStatus.
  struct TransientEnd {
    std::string active_state = "inactive";
    int32_t exec_main_code = 1;  // CLD_EXITED
    int32_t exec_main_status = 0;
  };
  TransientEnd transient_end;
  std::vector<TransientService> transients;  // what start_transient was given

  Result<std::string> start_transient(const TransientService& service) override {
    transients.push_back(service);
    return enqueue("StartTransientUnit", service.unit);
  }

  Result<void> reset_failed(std::string_view unit) override {
    calls.push_back("ResetFailedUnit " + std::string(unit));
    auto found = units.find(std::string(unit));
    if (found != units.end() && found->second.active_state == "failed") units.erase(found);
    return {};
  }

  Result<void> wait(std::chrono::milliseconds timeout) override {
    ++waits;
    if (clock_) clock_->advance(timeout);
    for (auto& [path, job] : jobs_) {
      if (job.result || --job.script.waits > 0) continue;
      job.result = job.script.result;
      UnitStatus& status = units[job.unit];
      status.name = job.unit;
      status.load_state = "loaded";
      const bool stop = job.method == "StopUnit";
      status.active_state = job.script.active_state.value_or(
          stop || job.script.result != "done" ? "inactive" : "active");
      status.sub_state = status.active_state == "active" ? "running" : "dead";
      if (!stop && job.script.result == "done") ++started;
      if (job.method == "StartTransientUnit" && job.script.result == "done") {
        status.active_state = transient_end.active_state;
        status.sub_state = "dead";
        status.exec_main_code = transient_end.exec_main_code;
        status.exec_main_status = transient_end.exec_main_status;
        // CollectMode=inactive: one that ended well is gone before anyone looks.
        if (status.active_state == "inactive") units.erase(job.unit);
      }
    }
    return {};
  }
  std::optional<std::string> job_result(const std::string& job) const override {
    auto found = jobs_.find(job);
    if (found == jobs_.end()) return std::nullopt;
    return found->second.result;
  }

  std::map<std::string, UnitStatus> units;
  std::vector<std::string> calls;       // "StartUnit gpulaunch-x.service", "Reload", ...
  std::set<std::string> enabled_units;  // what EnableUnitFiles linked and no Disable unlinked
  int waits = 0;
  int started = 0;  // start or restart jobs that completed "done"

 private:
  struct Job {
    std::string method;
    std::string unit;
    JobScript script;
    std::optional<std::string> result;
  };
  FakeTimekeeper* clock_;
  std::vector<JobScript> scripts_;
  std::map<std::string, Job> jobs_;
};

}  // namespace gl::testing
