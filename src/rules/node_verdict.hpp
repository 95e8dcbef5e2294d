// SPDX-License-Identifier: Apache-2.0
#pragma once
// `check --node`: the node judged without a profile, for a scheduler's prolog (issue 47). The
// rules are the profile check's own node rules (rules/gpu_health, the driver's in gpu_rules,
// node_checks' peer memory and /dev/shm, sandbox_checks' device nodes, toolkit_rules on the node's
// toolkits, image_rules' CDI freshness) run on every GPU of the node; nothing here is a rule of
// its own but what no profile changes: a node with no NVIDIA GPU at all passes.

#include <vector>

#include "facts/facts.hpp"
#include "facts/gather.hpp"
#include "rules/finding.hpp"

namespace gl {

// What the node check gathers: GPUs and their health (NVML), the toolkits in the node's own
// places, the CDI specs, the OS side (InfiniBand, /dev/shm, device nodes); no Python environment,
// model, port or installed profile, and no program run where NVML answers.
FactsRequest node_facts_request();

// The findings, errors first. An error means a job placed here fails (or the GPUs are unfit).
std::vector<Finding> evaluate_node(const Facts& facts);

}  // namespace gl
