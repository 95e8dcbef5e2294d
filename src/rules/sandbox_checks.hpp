// SPDX-License-Identifier: Apache-2.0
#pragma once
// `check`'s sandbox preflight (issue 26): the NVIDIA device nodes exist or something creates
// them at boot (catalog/nvidia_devices), and Yama lets the engine's ranks take each other's fds
// (catalog/sandbox_allowances' pidfd_getfd). Pure: profile, plan and facts to findings.

#include <vector>

#include "facts/facts.hpp"
#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"
#include "rules/finding.hpp"

namespace gl {

void check_sandbox(const Profile& profile, const LaunchPlan& plan, const Facts& facts,
                   std::vector<Finding>& findings);

}  // namespace gl
