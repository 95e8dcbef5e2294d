// SPDX-License-Identifier: Apache-2.0
#pragma once
// `check`'s rules: a pure function of the merged profile and the node's facts to findings.
// `up` calls this before it starts anything, and refuses to start when has_errors().

#include <string_view>
#include <vector>

#include "facts/environment.hpp"
#include "facts/facts.hpp"
#include "facts/gather.hpp"
#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"
#include "rules/finding.hpp"

namespace gl {

// The port the profile listens on is held: `up` forgives it when the holder is its own running
// engine (supervise/unit_transition).
inline constexpr std::string_view kPortTakenCode = "port-taken";
// gpulaunch's own program a unit runs as root around the engine (record-start, ExecStartPost=)
// is missing: `run --foreground` runs none of them and leaves this out.
inline constexpr std::string_view kProgramMissingCode = "gpulaunch-program-missing";

// `plan` is make_launch_plan(profile, ...): the unit's environment, argv and GPUs the rules judge.
std::vector<Finding> evaluate(const Profile& profile, const LaunchPlan& plan, const Facts& facts,
                              const ShellEnvironment& shell);

// What gather_facts must look at for this profile: the unit's environment and the shell's, the
// venv, the launcher, the model and the port.
FactsRequest facts_request(const Profile& profile, const LaunchPlan& plan,
                           const ShellEnvironment& shell);

}  // namespace gl
