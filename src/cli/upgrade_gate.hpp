// SPDX-License-Identifier: Apache-2.0
#pragma once
// The upgrade gate wired to the real world and said (supervise/gate_check decides): the running
// engine's completions endpoint through util/http_client with liveness's API key and timeout,
// the record in the profile's state directory, and the lines and JSON that report an outcome.
// `gate`, `verify --gate`, `lock` and `up` share it.

#include <memory>

#include <nlohmann/json.hpp>

#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"
#include "supervise/gate_check.hpp"
#include "util/error.hpp"

namespace gl {

// The profile's running engine, asked over HTTP where its health URL points; with `announce`,
// a line says so before the gate's requests go out (`up`, whose wait it explains).
std::unique_ptr<GateEngine> running_gate_engine(const Profile& profile, const LaunchPlan& plan,
                                                bool announce = false);

// The running engine against its record, now; an error when this rank does not gate.
Result<GateCheck> check_running_gate(const Profile& profile, const LaunchPlan& plan);

// Each prompt's answer and the load's throughput, as `gate record` and `gate check` print them.
void print_measurement(const GateMeasurement& measured);
// `gate check`, `verify --gate`: the measurement, then the outcome (each failure on its own error
// line). Returns gate_exit_code().
int say_gate_check(const Profile& profile, const GateCheck& check);
// 0: it passed; 1: it failed; 2: it could not run (no record, no answer, an unreadable record).
int gate_exit_code(const GateCheck& check);
// `verify --gate --json`'s "gate" member.
nlohmann::ordered_json gate_check_json(const GateCheck& check);

}  // namespace gl
