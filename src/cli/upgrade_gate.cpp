// SPDX-License-Identifier: Apache-2.0
#include "cli/upgrade_gate.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "catalog/completion_api.hpp"
#include "cli/context.hpp"
#include "log/logger.hpp"
#include "util/atomic_file.hpp"
#include "util/http_client.hpp"
#include "util/json_file.hpp"
#include "util/safe_file.hpp"
#include "util/state_paths.hpp"
#include "util/timekeeper.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

constexpr size_t kMaxApiKeyBytes = 64 * 1024;

// The key liveness's probe carries (plan/launch_plan's key_credential): the [secrets] entry's
// file, read as root, its first line.
Result<std::string> gate_api_key(const Profile& profile, const LaunchPlan& plan) {
  if (plan.liveness.key_credential.empty()) return std::string();
  const auto entry = profile.secrets.find(plan.liveness.key_credential);
  if (entry == profile.secrets.end())
    return failf("no [secrets] entry '{}' for the engine's API key", plan.liveness.key_credential);
  GL_TRY(auto read, read_regular_nofollow(entry->second, kMaxApiKeyBytes));
  if (!read) return failf("Failed to read the API key '{}': no such file", entry->second);
  std::string key = read->content.substr(0, read->content.find('\n'));
  while (!key.empty() && (key.back() == '\r' || key.back() == ' ' || key.back() == '\t'))
    key.pop_back();
  return key;
}

}  // namespace

void print_measurement(const GateMeasurement& measured) {
  for (std::size_t i = 0; i < measured.answers.size(); ++i)
    fmt::print("prompt {} '{}': {} token(s): \"{}\"\n", i + 1, measured.answers[i].prompt,
               measured.answers[i].tokens, measured.answers[i].text);
  fmt::print("throughput: {:.1f} tok/s ({} tokens in {:.1f}s){}\n", measured.tokens_per_second,
             measured.load_tokens, measured.load_time.count() / 1000.0,
             measured.retried > 0 ? fmt::format("; {} request(s) retried", measured.retried)
                                  : std::string());
}

Result<void> gate_applies(const Profile& profile, const LaunchPlan& plan) {
  if (plan.node_rank != 0)
    return failf(
        "profile '{}' gates once, through rank 0: run the gate on rank 0's node "
        "(this is rank {})",
        profile.name, plan.node_rank);
  if (!profile.gate.enabled())
    return failf("profile '{}' has no upgrade gate: add [gate] prompts", profile.name);
  if (!completion_api(profile.engine.kind))
    return failf("profile '{}': the upgrade gate does not know this engine's completions API",
                 profile.name);
  return {};
}

Result<GateMeasurement> measure_running_gate(const Profile& profile, const LaunchPlan& plan) {
  GL_TRY_VOID(gate_applies(profile, plan));
  const auto url = parse_http_url(plan.health_url);
  if (!url) return failf("invalid health URL '{}'", plan.health_url);
  GL_TRY(std::string key, gate_api_key(profile, plan));
  const GateEndpoint endpoint{
      std::string(completion_api(profile.engine.kind)->path), served_model_name(profile, plan),
      std::move(key), std::chrono::duration_cast<std::chrono::milliseconds>(plan.liveness.timeout)};
  auto client = http_client(*url);
  return measure_gate(*client, system_timekeeper(), profile.gate, endpoint);
}

Result<std::optional<GateRecord>> load_gate_record(const std::string& profile) {
  const auto path = state_paths::gate_record_file(profile);
  GL_TRY(auto read, read_regular_nofollow(path, kMaxJsonFileBytes));
  if (!read) return std::optional<GateRecord>();
  GL_TRY(auto json, parse_bounded_json<nlohmann::json>(read->content, path.string()));
  auto record = read_gate_record(json);
  if (!record) return failf("Failed to read '{}': {}", path.string(), record.error().message);
  return std::optional<GateRecord>(std::move(*record));
}

Result<void> save_gate_record(const std::string& profile, const GateRecord& record) {
  const auto path = state_paths::gate_record_file(profile);
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  if (error)
    return failf("Failed to create '{}': {}", path.parent_path().string(), error.message());
  return write_file_atomically(path, gate_record_json(record).dump(2) + "\n", 0600);
}

int check_gate(const Profile& profile, const LaunchPlan& plan) {
  auto recorded = load_gate_record(profile.name);
  if (!recorded) return report(recorded.error(), 2);
  if (!*recorded)
    return report(Error{fmt::format("no gate record for '{}': `gpulaunch gate record {}` on the "
                                    "version you trust first",
                                    profile.name, profile.name)},
                  2);
  auto measured = measure_running_gate(profile, plan);
  if (!measured) return report(measured.error(), 2);
  print_measurement(*measured);
  const GateVerdict verdict = judge_gate(profile.gate, **recorded, *measured);
  if (verdict.passed) {
    fmt::print("gate: '{}' answers as recorded, at {:.1f} tok/s (floor {:.1f})\n", profile.name,
               measured->tokens_per_second,
               (*recorded)->measured.tokens_per_second * profile.gate.min_throughput);
    return 0;
  }
  for (const auto& failure : verdict.failures)
    logging::error(fmt::format("gate failed: {}", failure));
  return 1;
}

}  // namespace gl
