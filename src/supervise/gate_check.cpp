// SPDX-License-Identifier: Apache-2.0
#include "supervise/gate_check.hpp"

#include <chrono>
#include <system_error>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "catalog/completion_api.hpp"
#include "util/json_file.hpp"
#include "util/safe_file.hpp"
#include "util/state_paths.hpp"
#include "util/try.hpp"

namespace gl {

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

GateEndpoint gate_endpoint(const Profile& profile, const LaunchPlan& plan, std::string api_key) {
  const CompletionApi* api = completion_api(profile.engine.kind);
  return GateEndpoint{api ? std::string(api->path) : std::string(),
                      served_model_name(profile, plan), std::move(api_key),
                      std::chrono::duration_cast<std::chrono::milliseconds>(plan.liveness.timeout)};
}

GateRecordFile GateRecordFile::of(std::string_view profile) {
  return GateRecordFile(state_paths::gate_record_file(profile));
}

Result<std::optional<GateRecord>> GateRecordFile::load() const {
  GL_TRY(auto read, read_regular_nofollow(path_, kMaxJsonFileBytes));
  if (!read) return std::optional<GateRecord>();
  GL_TRY(auto json, parse_bounded_json<nlohmann::json>(read->content, path_.string()));
  auto record = read_gate_record(json);
  if (!record) return failf("Failed to read '{}': {}", path_.string(), record.error().message);
  return std::optional<GateRecord>(std::move(*record));
}

Result<void> GateRecordFile::save(const GateRecord& record) {
  // Root's state: only into a directory no other user could write, never through a link.
  GL_TRY(auto directory, open_root_owned_directory(path_.parent_path()));
  return write_atomically_at(directory.get(), path_.filename().string(),
                             gate_record_json(record).dump(2) + "\n", 0600, path_.string());
}

std::string_view gate_outcome_name(GateOutcome outcome) {
  switch (outcome) {
    case GateOutcome::passed:
      return "passed";
    case GateOutcome::failed:
      return "failed";
    case GateOutcome::unanswered:
      return "unanswered";
    case GateOutcome::no_record:
      return "no-record";
    case GateOutcome::record_unreadable:
      return "record-unreadable";
  }
  return "unknown";
}

std::string GateCheck::summary() const {
  std::string line;
  for (const auto& failure : failures) line += (line.empty() ? "" : "; ") + failure;
  return line;
}

GateCheck check_gate(const GateSettings& settings, const GateRecords& records, GateEngine& engine) {
  GateCheck check;
  auto recorded = records.load();
  if (!recorded) {
    check.outcome = GateOutcome::record_unreadable;
    check.failures.push_back(recorded.error().message);
    return check;
  }
  if (!*recorded) {
    check.outcome = GateOutcome::no_record;
    return check;
  }
  check.record = std::move(**recorded);
  auto measured = engine.measure(settings);
  if (!measured) {
    check.outcome = GateOutcome::unanswered;
    check.failures.push_back(measured.error().message);
    return check;
  }
  check.floor = check.record->measured.tokens_per_second * settings.min_throughput;
  GateVerdict verdict = judge_gate(settings, *check.record, *measured);
  check.measured = std::move(*measured);
  check.outcome = verdict.passed ? GateOutcome::passed : GateOutcome::failed;
  check.failures = std::move(verdict.failures);
  return check;
}

Result<GateRecord> record_gate(const GateSettings& settings, GateRecords& records,
                               GateEngine& engine, int64_t now_usec, std::string engine_version) {
  GL_TRY(auto measured, engine.measure(settings));
  GateRecord record{std::move(measured), now_usec, std::move(engine_version)};
  GL_TRY_VOID(records.save(record));
  return record;
}

UpGate up_gates(const Profile& profile, const LaunchPlan& plan, bool unit_changed,
                bool user_manager) {
  // Nothing changed: the engine answers as it did. No prompts: nothing to ask. Another rank:
  // rank 0 gates the group.
  if (!unit_changed || !profile.gate.enabled() || plan.node_rank != 0) return {};
  if (user_manager)
    return {false,
            "gate: not run for a --user unit (the gate record lives in the root-owned state "
            "directory)"};
  if (auto applies = gate_applies(profile, plan); !applies)
    return {false, fmt::format("gate: not run: {}", applies.error().message)};
  return {true, ""};
}

bool gate_rolls_back(const GateCheck& check) {
  return check.outcome == GateOutcome::failed || check.outcome == GateOutcome::unanswered;
}

}  // namespace gl
