// SPDX-License-Identifier: Apache-2.0
#pragma once
// `check`'s node preflight, the OS side (issue 16): InfiniBand and GPUDirect RDMA, what the unit
// lets the engine reach of them (its devices, its memlock limit), /dev/shm for NCCL, another
// installed profile on the same GPUs, and whether the model fits the GPUs' memory. Pure: the
// profile, its plan and the node's facts to findings; thresholds in catalog/node_requirements.

#include <vector>

#include "facts/facts.hpp"
#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"
#include "rules/finding.hpp"

namespace gl {

void check_node_os(const Profile& profile, const LaunchPlan& plan, const Facts& facts,
                   std::vector<Finding>& findings);

}  // namespace gl
