// SPDX-License-Identifier: Apache-2.0
#pragma once
// `check`'s node preflight, the OS side (issue 16): InfiniBand and GPUDirect RDMA, what the unit
// lets the engine reach of them (its devices, its memlock limit), /dev/shm for NCCL, another
// installed profile on the same GPUs, and whether the model fits the GPUs' memory. Pure: the
// profile, its plan and the node's facts to findings; thresholds in catalog/node_requirements.

#include <string>
#include <vector>

#include "facts/facts.hpp"
#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"
#include "rules/finding.hpp"

namespace gl {

// Shared with `check --node` (rules/node_verdict), which has no profile:
// InfiniBand devices without a peer-memory module (GPUDirect RDMA off).
void check_peermem(const Facts& facts, std::vector<Finding>& findings);
// /dev/shm smaller than NCCL needs for `ranks` ranks on this node: an error where the profile
// puts them there, a warning where only a job might.
struct ShmNeed {
  long long ranks = 0;
  Severity severity = Severity::error;
  std::string ranks_text;  // "the 8 ranks on this node"
};
void check_shm(const ShmNeed& need, const Facts& facts, std::vector<Finding>& findings);

void check_node_os(const Profile& profile, const LaunchPlan& plan, const Facts& facts,
                   std::vector<Finding>& findings);

}  // namespace gl
