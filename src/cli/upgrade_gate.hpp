// SPDX-License-Identifier: Apache-2.0
#pragma once
// The upgrade gate wired to the real world (supervise/upgrade_gate decides): the running
// engine's completions endpoint through util/http_client with liveness's API key and timeout,
// and the record in the profile's state directory. `gate`, `verify --gate`, `lock` and `up`
// share it.

#include <optional>
#include <string>

#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"
#include "supervise/upgrade_gate.hpp"
#include "util/error.hpp"

namespace gl {

// An error when this rank does not gate: a multi-node group gates once, through rank 0, and a
// profile without [gate] prompts or an engine whose completions API is not in the catalog has
// nothing to gate with.
Result<void> gate_applies(const Profile& profile, const LaunchPlan& plan);

// The profile's gate asked of its running engine, now.
Result<GateMeasurement> measure_running_gate(const Profile& profile, const LaunchPlan& plan);

// The record `gate record` wrote; nullopt when there is none.
Result<std::optional<GateRecord>> load_gate_record(const std::string& profile);
// Written atomically, 0600, into the root-owned state directory.
Result<void> save_gate_record(const std::string& profile, const GateRecord& record);

// The gate of the running engine against the record, said: each failure on its own error line.
// 0: it passed; 1: it failed; 2: it could not run (no record, no answer).
int check_gate(const Profile& profile, const LaunchPlan& plan);
// Each prompt's answer and the load's throughput, as `gate record` and `gate check` print them.
void print_measurement(const GateMeasurement& measured);

}  // namespace gl
