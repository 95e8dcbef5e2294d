// SPDX-License-Identifier: Apache-2.0
// The GPUs the engine gets: lost ones, too few for the ranks, MIG, the architectures the
// profile expects.
#include "rules/check_rules.hpp"

#include <algorithm>
#include <set>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "catalog/cuda_arch.hpp"
#include "catalog/engines.hpp"
#include "catalog/flashinfer_arch_list.hpp"
#include "catalog/flashinfer_packages.hpp"
#include "catalog/node_health.hpp"
#include "engines/engine_argv.hpp"
#include "facts/node_fs.hpp"
#include "facts/python_env.hpp"
#include "plan/gpu_assignment.hpp"
#include "plan/launch_plan.hpp"
#include "profile/api_key.hpp"
#include "profile/service_user.hpp"
#include "rules/gpu_health.hpp"
#include "rules/installed_profiles.hpp"
#include "rules/jit_toolkit.hpp"
#include "rules/node_checks.hpp"
#include "util/version.hpp"

namespace gl::check_rules {
namespace {

// The GPUs the driver cannot reach (NVML's or nvidia-smi's "GPU is lost", Xid 79 at an address
// no GPU answers at now): empty when none.
std::vector<std::string> lost_gpus(const Facts& facts) {
  std::vector<std::string> lost = facts.driver.lost_gpus;
  for (const auto& event : facts.node_health.xids)
    if (event.xid == kXidFallenOffTheBus && !event.gpu) {
      std::string where = "PCI:" + event.pci;
      if (std::ranges::find(lost, where) == lost.end()) lost.push_back(where);
    }
  return lost;
}

// A lost GPU is named as lost with the reboot fix, never as too few GPUs for the ranks.
bool check_lost_gpus(const Facts& facts, std::optional<long long> needed_per_node,
                     std::vector<Finding>& findings) {
  const bool init_lost = facts.driver.nvml_error == kNvmlErrorGpuIsLost;
  const auto lost = lost_gpus(facts);
  if (!init_lost && lost.empty()) return false;
  std::string where = init_lost && lost.empty() ? "a GPU (nvmlInit_v2)" : "";
  for (const auto& gpu : lost) where += (where.empty() ? "" : ", ") + gpu;
  std::vector<std::pair<std::string, std::string>> seen{
      {"lost", where}, {"gpus answering", std::to_string(facts.gpus.size())}};
  if (needed_per_node) seen.emplace_back("needed per node", std::to_string(*needed_per_node));
  add(findings, {Severity::error, "gpu-lost",
                 fmt::format("{} fell off the bus: the driver cannot reach {} ({})", where,
                             lost.size() > 1 ? "them" : "it", kNvmlGpuIsLostText),
                 fmt::format("every GPU of the node must answer the driver; a lost one is "
                             "present but unreachable ({})",
                             kGpuLostSource),
                 std::move(seen), std::string(kGpuLostFix)});
  return true;
}

}  // namespace

DriverVerdict check_driver(const Facts& facts, std::optional<long long> needed_per_node,
                           std::vector<Finding>& findings) {
  DriverVerdict verdict;
  verdict.lost = check_lost_gpus(facts, needed_per_node, findings);
  verdict.usable = facts.driver.present;
  if (facts.driver.present) return verdict;
  if (verdict.lost) return verdict;
  // The driver is there but its libraries are another version: rules/gpu_health says so.
  if (driver_library_mismatch(facts.driver)) return verdict;
  std::string why;
  for (const auto& problem : facts.driver.problems) why += (why.empty() ? "" : "; ") + problem;
  // NVML and nvidia-smi are installed and say the kernel module is not there: loading it is
  // the fix, not installing a driver.
  if (facts.driver.nvml_error == kNvmlErrorDriverNotLoaded ||
      why.find(kNvidiaSmiNoDriverText) != std::string::npos) {
    add(findings,
        {Severity::error,
         "nvidia-driver-not-loaded",
         "the NVIDIA driver's libraries are installed but its kernel module is not loaded",
         "NVML answers \"Driver Not Loaded\" and nvidia-smi cannot communicate with the driver: "
         "no engine can open a GPU",
         {{"driver", facts.driver.source}, {"probes", why}},
         "load it as root: `modprobe nvidia` (then `systemctl restart "
         "gpulaunch-nvidia-devices`); if that fails, `dmesg | grep -i nvrm` says why: no module "
         "built for the running kernel (`dkms status`, install the linux-headers of `uname -r` "
         "and `dkms autoinstall`) or Secure Boot refusing an unsigned module (`mokutil "
         "--sb-state`, enroll the DKMS key); the libraries need no reinstall"});
    return verdict;
  }
  add(findings,
      {Severity::error,
       "no-nvidia-driver",
       "no usable NVIDIA driver on this node",
       "the engine needs the NVIDIA driver (NVML or nvidia-smi must answer)",
       {{"driver", facts.driver.source + (facts.driver.version ? " " + *facts.driver.version : "")},
        {"probes", why}},
       "install the NVIDIA driver (>= 580 for CUDA 13) and check that `nvidia-smi` works"});
  return verdict;
}

void check_gpus(const Context& context, std::vector<Finding>& findings) {
  const auto& facts = context.facts;
  const auto& profile = context.profile;
  const DriverVerdict driver = check_driver(facts, profile.gpus_per_node(), findings);
  if (!driver.usable) return;
  const bool lost = driver.lost;
  for (const auto& device : profile.gpus.devices)
    if (!lost && !(device.starts_with("MIG-") && mig_mode_gpu(facts)) &&
        std::none_of(facts.gpus.begin(), facts.gpus.end(),
                     [&](const GpuFact& gpu) { return names_gpu(device, gpu); }))
      add(findings, {Severity::error,
                     "gpu-device-missing",
                     fmt::format("GPU '{}' named in gpus.devices is not on this node", device),
                     "every entry of gpus.devices must be a GPU index or UUID of this node",
                     {{"gpus.devices", device}, {"gpus found", std::to_string(facts.gpus.size())}},
                     "fix gpus.devices (see `gpulaunch facts`)"});
  long long needed = profile.gpus_per_node();
  long long available = static_cast<long long>(context.gpus.size());
  if (available < needed && !lost)
    add(findings, {Severity::error,
                   "gpu-count-short",
                   fmt::format("the profile needs {} GPUs per node ({}), {} available", needed,
                               profile.world_text(), available),
                   "a node must have one GPU for each of its ranks",
                   {{"gpus needed", std::to_string(needed)},
                    {"gpus available", std::to_string(available)},
                    {"gpus on node", std::to_string(facts.gpus.size())}},
                   "lower parallelism.tp/pp/dp or run on a node with enough GPUs"});
  // A GPU in MIG mode runs CUDA only in its MIG instances (catalog/engines, MigSupport).
  const EngineRow& engine = engine_row(profile.engine.kind);
  std::set<int> reported;
  for (const GpuFact* gpu : context.gpus) {
    if (!gpu->mig || !reported.insert(gpu->index).second) continue;
    const bool named_instance = std::ranges::any_of(
        profile.gpus.devices, [](const std::string& device) { return device.starts_with("MIG-"); });
    if (engine.mig == MigSupport::none)
      add(findings,
          {Severity::error,
           "gpu-mig-engine-unsupported",
           fmt::format("GPU {} ({}) is in MIG mode, and engine.kind = \"{}\" cannot run on a MIG "
                       "instance",
                       gpu->index, gpu->name, engine.name),
           std::string(engine.mig_source),
           {{"gpu", fmt::format("{} {} (MIG mode on)", gpu->index, gpu->uuid)},
            {"engine.kind", std::string(engine.name)}},
           fmt::format("give the engine a GPU without MIG (gpus.devices), or turn MIG off on this "
                       "one: `nvidia-smi -i {} -mig 0` (as root, with no process on it)",
                       gpu->index)});
    else if (!named_instance)
      add(findings,
          {Severity::error,
           "gpu-mig-whole-gpu",
           fmt::format("GPU {} ({}) is in MIG mode: CUDA cannot use it as a whole GPU", gpu->index,
                       gpu->name),
           "a GPU in MIG mode runs CUDA only in its MIG instances, one per process (NVIDIA MIG "
           "user guide)",
           {{"gpu", fmt::format("{} {} (MIG mode on)", gpu->index, gpu->uuid)}},
           "name one MIG instance in gpus.devices (`nvidia-smi -L` lists their MIG- UUIDs) with "
           "one rank, or turn MIG off on this GPU"});
  }
  if (context.capabilities.size() > 1) {
    std::string list;
    for (auto capability : context.capabilities)
      list += (list.empty() ? "" : ", ") + capability_name(capability);
    add(findings, {Severity::error,
                   "gpu-arch-mixed",
                   "the engine's GPUs have different architectures: " + list,
                   "tensor/pipeline parallel ranks must run on one GPU architecture",
                   {{"architectures", list}},
                   "select GPUs of one architecture with gpus.devices"});
  }
  if (const auto& expected = profile.gpus.arch) {
    auto wanted = parse_version(*expected);
    for (auto capability : context.capabilities)
      if (wanted && (wanted->major != capability.major || wanted->minor != capability.minor))
        add(findings, {Severity::error,
                       "gpu-arch-unexpected",
                       fmt::format("gpus.arch is {} but the GPUs are {}", *expected,
                                   capability_name(capability)),
                       "gpus.arch states the compute capability the profile was built for",
                       {{"gpus.arch", *expected}, {"gpus", gpus_text(context, capability)}},
                       "run on the intended GPUs or update gpus.arch"});
  }
}

}  // namespace gl::check_rules
