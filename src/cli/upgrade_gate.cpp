// SPDX-License-Identifier: Apache-2.0
#include "cli/upgrade_gate.hpp"

#include <cstdio>

#include <fmt/core.h>

#include "cli/context.hpp"
#include "log/logger.hpp"
#include "profile/secret_files.hpp"
#include "util/http_client.hpp"
#include "util/safe_file.hpp"
#include "util/timekeeper.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// The key liveness's probe carries (plan/launch_plan's key_credential): the [secrets] entry's
// file, read as root, its first line.
Result<std::string> gate_api_key(const Profile& profile, const LaunchPlan& plan) {
  if (plan.liveness.key_credential.empty()) return std::string();
  const auto entry = profile.secrets.find(plan.liveness.key_credential);
  if (entry == profile.secrets.end())
    return failf("no [secrets] entry '{}' for the engine's API key", plan.liveness.key_credential);
  GL_TRY(auto read, read_regular_nofollow(entry->second, kMaxApiKeyBytes));
  if (!read) return failf("Failed to read the API key '{}': no such file", entry->second);
  return api_key_of(read->content);
}

// Reads the key and opens the client when asked, so that what fails there is the engine's
// answer to the gate (`up` rolls back, `gate check` could not run).
class RunningGateEngine final : public GateEngine {
 public:
  RunningGateEngine(const Profile& profile, const LaunchPlan& plan, bool announce)
      : profile_(profile), plan_(plan), announce_(announce) {}

  Result<GateMeasurement> measure(const GateSettings& settings) override {
    if (announce_) {
      fmt::print("gate: asking {} prompt(s) and a load of {} request(s)\n", settings.prompts.size(),
                 settings.requests);
      std::fflush(stdout);
    }
    const auto url = parse_http_url(plan_.health_url);
    if (!url) return failf("invalid health URL '{}'", plan_.health_url);
    GL_TRY(std::string key, gate_api_key(profile_, plan_));
    auto client = http_client(*url);
    return measure_gate(*client, system_timekeeper(), settings,
                        gate_endpoint(profile_, plan_, std::move(key)));
  }

 private:
  const Profile& profile_;
  const LaunchPlan& plan_;
  bool announce_;
};

}  // namespace

std::unique_ptr<GateEngine> running_gate_engine(const Profile& profile, const LaunchPlan& plan,
                                                bool announce) {
  return std::make_unique<RunningGateEngine>(profile, plan, announce);
}

Result<GateCheck> check_running_gate(const Profile& profile, const LaunchPlan& plan) {
  GL_TRY_VOID(gate_applies(profile, plan));
  auto engine = running_gate_engine(profile, plan);
  return check_gate(profile.gate, GateRecordFile::of(profile.name), *engine);
}

void print_measurement(const GateMeasurement& measured) {
  // The engine's answers, escaped (supervise/upgrade_gate's measurement_lines).
  for (const auto& line : measurement_lines(measured)) fmt::print("{}\n", line);
}

int gate_exit_code(const GateCheck& check) {
  switch (check.outcome) {
    case GateOutcome::passed:
      return 0;
    case GateOutcome::failed:
      return 1;
    default:
      return 2;
  }
}

int say_gate_check(const Profile& profile, const GateCheck& check) {
  if (check.measured) print_measurement(*check.measured);
  switch (check.outcome) {
    case GateOutcome::passed:
      fmt::print("gate: '{}' answers as recorded, at {:.1f} tok/s (floor {:.1f})\n", profile.name,
                 check.measured->tokens_per_second, check.floor);
      break;
    case GateOutcome::failed:
      for (const auto& failure : check.failures)
        logging::error(fmt::format("gate failed: {}", failure));
      break;
    case GateOutcome::no_record:
      logging::error(fmt::format(
          "no gate record for '{}': `gpulaunch gate record {}` on the version you trust first",
          profile.name, profile.name));
      break;
    case GateOutcome::unanswered:
    case GateOutcome::record_unreadable:
      logging::error(check.summary());
      break;
  }
  return gate_exit_code(check);
}

nlohmann::ordered_json gate_check_json(const GateCheck& check) {
  nlohmann::ordered_json out{{"outcome", gate_outcome_name(check.outcome)},
                             {"failures", check.failures}};
  if (check.measured) {
    out["tokens_per_second"] = check.measured->tokens_per_second;
    out["floor"] = check.floor;
    out["retried"] = check.measured->retried;
  }
  return out;
}

}  // namespace gl
