// SPDX-License-Identifier: Apache-2.0
#pragma once
// `check`'s node-health rules: the NVIDIA driver's user-space libraries against the loaded
// module, the NVLink fabric and its Fabric Manager, each GPU's ECC, row remapping, page
// retirement and persistence mode, and the Xid events since boot. Thresholds, meanings and fixes
// come from catalog/node_health.

#include <string_view>
#include <vector>

#include "facts/facts.hpp"
#include "plan/launch_plan.hpp"
#include "rules/finding.hpp"

namespace gl {

// NVML refused to start because the libraries are not the loaded module's version.
bool driver_library_mismatch(const DriverFact& driver);

// Findings for the given GPUs and the node they sit in: the profile's check passes the engine's,
// `check --node` every GPU of the node (rules/node_verdict).
// `once_reset`: what lets the caller past an Xid line once the GPU is reset (the line stays in
// this boot's journal).
void check_gpu_health(const std::vector<const GpuFact*>& gpus, const Facts& facts,
                      std::vector<Finding>& findings,
                      std::string_view once_reset = "`gpulaunch up --force` starts anyway");

// Findings for the GPUs the engine gets (plan.gpus) and the node they sit in.
void check_node_health(const LaunchPlan& plan, const Facts& facts, std::vector<Finding>& findings);

}  // namespace gl
