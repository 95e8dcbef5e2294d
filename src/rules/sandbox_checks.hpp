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

// The driver is loaded but a device node it serves is missing, and nothing on the node makes it
// before an engine starts: also `check --node`'s (rules/node_verdict).
void check_device_nodes(const Facts& facts, std::vector<Finding>& findings);

void check_sandbox(const Profile& profile, const LaunchPlan& plan, const Facts& facts,
                   std::vector<Finding>& findings);

}  // namespace gl
