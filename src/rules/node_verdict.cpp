// SPDX-License-Identifier: Apache-2.0
#include "rules/node_verdict.hpp"

#include <algorithm>

#include "catalog/node_health.hpp"
#include "rules/check_rules.hpp"
#include "rules/gpu_health.hpp"
#include "rules/node_checks.hpp"
#include "rules/sandbox_checks.hpp"

namespace gl {

FactsRequest node_facts_request() {
  FactsRequest request;
  request.probe_ports = false;
  request.probe_cdi = true;
  // IMEX channels are a multi-node profile's question: nvidia-modprobe is not asked here.
  request.probe_modprobe_options = false;
  return request;
}

std::vector<Finding> evaluate_node(const Facts& facts) {
  std::vector<Finding> findings;
  // No driver answers, none refused, and no NVIDIA GPU on the PCI bus: a node without GPUs, which
  // a GPU verdict has nothing to say against.
  const bool no_library =
      !facts.driver.nvml_error || *facts.driver.nvml_error == kNvmlErrorLibraryNotFound;
  const bool no_gpu_hardware =
      !facts.driver.present && no_library && facts.driver.lost_gpus.empty() && facts.nvidia_nodes &&
      !facts.nvidia_nodes->driver_loaded && facts.nvidia_nodes->minors.empty();
  if (no_gpu_hardware) {
    findings.push_back({Severity::info,
                        "node-without-gpus",
                        "no NVIDIA driver and no NVIDIA GPU on the PCI bus: nothing to judge",
                        "a node without GPUs runs no GPU job; the GPU rules do not apply",
                        {{"driver", facts.driver.source}, {"PCI GPUs", "0"}},
                        "none needed; install the NVIDIA driver if this node should have GPUs"});
    return findings;
  }
  const auto driver = check_rules::check_driver(facts, std::nullopt, findings);
  std::vector<const GpuFact*> gpus;
  if (driver.usable)
    for (const auto& gpu : facts.gpus) gpus.push_back(&gpu);
  check_gpu_health(gpus, facts, findings,
                   "`gpulaunch check --node --acknowledge-xids` sets this boot's lines so far "
                   "aside (then resume the node: scontrol update nodename=NODE state=resume)");
  check_device_nodes(facts, findings);
  check_peermem(facts, findings);
  const auto count = static_cast<long long>(facts.gpus.size());
  check_shm({count, Severity::warning,
             "the ranks of a job on this node's " + std::to_string(count) + " GPUs"},
            facts, findings);
  if (driver.usable) check_rules::check_node_toolkits(facts, findings);
  check_rules::check_cdi_freshness(facts, findings);
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity < b.severity; });
  return findings;
}

}  // namespace gl
