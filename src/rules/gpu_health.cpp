// SPDX-License-Identifier: Apache-2.0
#include "rules/gpu_health.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include <fmt/core.h>

#include "catalog/node_health.hpp"
#include "plan/gpu_assignment.hpp"
#include "systemd/manager.hpp"
#include "util/text_join.hpp"

namespace gl {
namespace {

std::string fill_gpu(std::string_view text, const std::string& gpus) {
  std::string out(text);
  constexpr std::string_view kPlaceholder = "{gpu}";
  for (size_t at = out.find(kPlaceholder); at != std::string::npos;
       at = out.find(kPlaceholder, at + gpus.size()))
    out.replace(at, kPlaceholder.size(), gpus);
  return out;
}

std::string gpu_label(const GpuFact& gpu) {
  return fmt::format("GPU {} ({}{})", gpu.index, gpu.name,
                     gpu.pci_bus_id.empty() ? "" : ", " + gpu.pci_bus_id);
}

// The engine's GPUs; a MIG- device stands for the GPUs in MIG mode, as check.cpp reads it.
std::vector<const GpuFact*> engine_gpus(const LaunchPlan& plan, const Facts& facts) {
  auto gpus = assigned_gpu_facts(plan.gpus, facts);
  if (std::ranges::any_of(plan.gpus, [](const auto& device) { return device.starts_with("MIG-"); }))
    for (const auto& gpu : facts.gpus)
      if (gpu.mig && std::ranges::find(gpus, &gpu) == gpus.end()) gpus.push_back(&gpu);
  return gpus;
}

void check_driver_mismatch(const Facts& facts, std::vector<Finding>& findings) {
  if (!driver_library_mismatch(facts.driver)) return;
  std::vector<std::pair<std::string, std::string>> seen{
      {"nvml", fmt::format("nvmlInit_v2 returned {} (NVML_ERROR_LIB_RM_VERSION_MISMATCH)",
                           kNvmlErrorLibRmVersionMismatch)}};
  if (facts.driver.version)
    seen.emplace_back("loaded module", *facts.driver.version + " (" + facts.driver.source + ")");
  findings.push_back(
      {Severity::error, "driver-library-mismatch",
       fmt::format("the NVIDIA libraries are not the loaded kernel module's version: NVML says "
                   "\"{}\" (nvidia-smi: \"{}\"), and CUDA fails the same way",
                   kNvmlVersionMismatchText, kNvidiaSmiVersionMismatchText),
       "the driver's user-space libraries and its loaded kernel module must be one version; a "
       "driver upgraded under a running system leaves the old module loaded until it is reloaded",
       std::move(seen),
       "reboot the node; or stop every GPU process (and nvidia-persistenced, "
       "nvidia-fabricmanager) and reload the modules: `modprobe -r nvidia_uvm nvidia_drm "
       "nvidia_modeset nvidia && modprobe nvidia`. Hold the driver packages "
       "(`apt-mark hold`) so unattended upgrades cannot do it again"});
}

bool fabric_reported(const GpuFact& gpu) {
  return gpu.health.fabric_state &&
         *gpu.health.fabric_state != fabric_state_name(FabricState::not_supported);
}

void check_fabric(const std::vector<const GpuFact*>& gpus, const Facts& facts,
                  std::vector<Finding>& findings) {
  std::vector<const GpuFact*> fabric;
  std::vector<const GpuFact*> not_ready;
  for (const auto* gpu : gpus) {
    if (!fabric_reported(*gpu)) continue;
    fabric.push_back(gpu);
    if (*gpu->health.fabric_state != fabric_state_name(FabricState::completed) ||
        gpu->health.fabric_error)
      not_ready.push_back(gpu);
  }
  if (fabric.empty()) return;
  const auto& manager = facts.node_health.fabric_manager_state;
  const bool manager_running = manager && is_running_state(*manager);
  // Unknown under --root, or when the service manager did not answer (facts say why).
  std::string manager_text = manager ? *manager : std::string("unknown");
  for (const auto& problem : facts.node_health.problems)
    if (!manager && problem.starts_with(kFabricManagerUnit))
      manager_text += " (" + problem.substr(kFabricManagerUnit.size() + 2) + ")";
  const std::string version = facts.driver.version.value_or("the driver's");
  const std::string start_fix = fmt::format(
      "start the Fabric Manager: `systemctl enable --now nvidia-fabricmanager` (install "
      "nvidia-fabricmanager of the driver's exact version, {}, if it is missing; a version that "
      "differs from the driver's refuses to run)",
      version);
  if (!not_ready.empty()) {
    std::vector<std::pair<std::string, std::string>> seen;
    for (const auto* gpu : not_ready)
      seen.emplace_back(gpu_label(*gpu),
                        "fabric " + *gpu->health.fabric_state +
                            (gpu->health.fabric_error ? ": " + *gpu->health.fabric_error : ""));
    seen.emplace_back(std::string(kFabricManagerUnit), manager_text);
    std::vector<std::string> indices;
    for (const auto* gpu : not_ready) indices.push_back(std::to_string(gpu->index));
    findings.push_back(
        {Severity::error, "gpu-fabric-not-ready",
         fmt::format("GPU {} not registered with the NVLink fabric: CUDA fails on them with "
                     "error {} \"{}\"",
                     join(indices, ","), kCudaErrorSystemNotReady, kCudaSystemNotReadyText),
         fmt::format("on an NVSwitch system the Fabric Manager registers each GPU with the NVLink "
                     "fabric, and CUDA refuses the GPU (cudaErrorSystemNotReady) until NVML's "
                     "fabric state is completed without error"),
         std::move(seen),
         manager_running
             ? fmt::format("the Fabric Manager runs but the registration {}: read `journalctl -u "
                           "nvidia-fabricmanager` and /var/log/fabricmanager.log, check that "
                           "its version is the driver's ({}), then `systemctl restart "
                           "nvidia-fabricmanager` and wait for the state to reach completed",
                           not_ready.front()->health.fabric_error ? "failed" : "has not finished",
                           version)
             : start_fix});
    return;
  }
  if (gpus.size() > 1 && manager && !manager_running)
    findings.push_back({Severity::error,
                        "fabric-manager-inactive",
                        fmt::format("{} is {} on a node whose GPUs share an NVLink fabric: a "
                                    "multi-GPU start fails with CUDA error {} \"{}\" once the "
                                    "fabric must be set up again (a GPU reset, a reboot)",
                                    kFabricManagerUnit, *manager, kCudaErrorSystemNotReady,
                                    kCudaSystemNotReadyText),
                        "an NVSwitch system needs the Fabric Manager running for its GPUs to "
                        "reach each other over NVLink",
                        {{std::string(kFabricManagerUnit), *manager},
                         {"gpus", std::to_string(gpus.size()) + " with fabric state completed"}},
                        start_fix});
}

// One finding per threshold, naming every GPU of the engine that crosses it.
void check_thresholds(const std::vector<const GpuFact*>& gpus, std::vector<Finding>& findings) {
  auto flag = [](const std::optional<bool>& value) -> std::optional<unsigned long long> {
    if (!value) return std::nullopt;
    return *value ? 1 : 0;
  };
  const std::vector<std::pair<
      HealthCheck, std::function<std::optional<unsigned long long>(const GpuHealthFact&)>>>
      readings{
          {HealthCheck::ecc_uncorrected_volatile,
           [](const GpuHealthFact& h) { return h.ecc_uncorrected_volatile; }},
          {HealthCheck::row_remap_failure,
           [&](const GpuHealthFact& h) { return flag(h.row_remap_failure); }},
          {HealthCheck::row_remap_pending,
           [&](const GpuHealthFact& h) { return flag(h.row_remap_pending); }},
          {HealthCheck::retired_pages_pending,
           [&](const GpuHealthFact& h) { return flag(h.retired_pages_pending); }},
          {HealthCheck::persistence_off,
           [&](const GpuHealthFact& h) {
             return h.persistence_mode ? flag(!*h.persistence_mode) : std::nullopt;
           }},
      };
  for (const auto& [check, read] : readings) {
    const HealthThreshold& threshold = health_threshold(check);
    std::vector<std::pair<std::string, std::string>> seen;
    std::vector<std::string> indices;
    for (const auto* gpu : gpus) {
      auto value = read(gpu->health);
      if (!value || *value <= threshold.limit) continue;
      indices.push_back(std::to_string(gpu->index));
      seen.emplace_back(gpu_label(*gpu), check == HealthCheck::ecc_uncorrected_volatile
                                             ? std::to_string(*value) + " uncorrected"
                                         : check == HealthCheck::persistence_off
                                             ? "persistence mode off"
                                             : "yes");
    }
    if (indices.empty()) continue;
    findings.push_back({threshold.blocks_start ? Severity::error : Severity::warning,
                        std::string(threshold.code),
                        fmt::format("GPU {}: {}", join(indices, ","), threshold.meaning),
                        fmt::format("{} ({})", threshold.rule, threshold.source), std::move(seen),
                        fill_gpu(threshold.fix, join(indices, ","))});
  }
}

// The Xids since boot on the engine's GPUs, or at an address no GPU answers at any more (the GPU
// fell off the bus): one finding per catalogued Xid.
void check_xids(const std::vector<const GpuFact*>& gpus, const Facts& facts,
                std::vector<Finding>& findings, std::string_view once_reset) {
  std::map<int, std::vector<const XidFact*>> by_xid;
  for (const auto& event : facts.node_health.xids) {
    if (!xid_row(event.xid)) continue;
    bool ours = !event.gpu || std::ranges::any_of(gpus, [&](const GpuFact* gpu) {
      return gpu->index == *event.gpu;
    });
    if (ours) by_xid[event.xid].push_back(&event);
  }
  // Without NVML's addresses (nvidia-smi facts) an unmapped line says nothing about a lost GPU.
  const bool addresses_known =
      std::ranges::any_of(facts.gpus, [](const GpuFact& gpu) { return !gpu.pci_bus_id.empty(); });
  for (const auto& [xid, events] : by_xid) {
    const XidRow& row = *xid_row(xid);
    std::vector<std::string> where;
    std::map<std::string, std::pair<int, std::string>> per_device;  // label -> count, last line
    for (const auto* event : events) {
      std::string label = event->gpu ? fmt::format("GPU {} (PCI:{})", *event->gpu, event->pci)
                          : addresses_known
                              ? fmt::format("PCI:{} (no GPU there now)", event->pci)
                              : fmt::format("PCI:{} (NVML gave no GPU addresses)", event->pci);
      auto& [count, last] = per_device[label];
      if (count++ == 0) where.push_back(event->gpu ? std::to_string(*event->gpu) : event->pci);
      last = event->message;
    }
    std::vector<std::pair<std::string, std::string>> seen;
    for (const auto& [label, entry] : per_device)
      seen.emplace_back(label, fmt::format("{} since boot, last: {}", entry.first, entry.second));
    findings.push_back(
        {row.blocks_start ? Severity::error : Severity::warning, fmt::format("gpu-xid-{}", xid),
         fmt::format("Xid {} ({}) since boot on {}: {}", xid, row.name,
                     (events.front()->gpu ? "GPU " : "") + join(where, ","), row.meaning),
         fmt::format("the NVIDIA driver logged Xid {} in the kernel's journal since this boot; "
                     "{} ({})",
                     xid,
                     row.blocks_start ? "the GPU is unfit until it is reset or rebooted"
                                      : "the GPU still works",
                     kXidCatalogSource),
         std::move(seen),
         fill_gpu(row.fix, join(where, ",")) +
             (row.fix.starts_with("reboot")
                  ? ""
                  : fmt::format("; the line stays in this boot's journal, so once the GPU is "
                                "reset {}",
                                once_reset))});
  }
}

}  // namespace

bool driver_library_mismatch(const DriverFact& driver) {
  return driver.nvml_error == kNvmlErrorLibRmVersionMismatch;
}

void check_gpu_health(const std::vector<const GpuFact*>& gpus, const Facts& facts,
                      std::vector<Finding>& findings, std::string_view once_reset) {
  check_driver_mismatch(facts, findings);
  check_fabric(gpus, facts, findings);
  check_thresholds(gpus, findings);
  check_xids(gpus, facts, findings, once_reset);
}

void check_node_health(const LaunchPlan& plan, const Facts& facts, std::vector<Finding>& findings) {
  check_gpu_health(engine_gpus(plan, facts), facts, findings);
}

}  // namespace gl
