// SPDX-License-Identifier: Apache-2.0
// What every rule needs: the context computed once from profile, facts and plan, and the
// small helpers that word findings the same way everywhere.
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

std::string quoted(const std::string& value) {
  return "\"" + value + "\"";
}

std::string pin_fix(const std::string& root) {
  return "toolkit.cuda_home = " + quoted(root) +
         " (then clear the FlashInfer JIT cache: its entries are not keyed on the toolkit)";
}

std::string sm_name(ComputeCapability capability) {
  return "sm_" + std::to_string(capability.sm());
}
std::string capability_name(ComputeCapability capability) {
  return fmt::format("{}.{} ({})", capability.major, capability.minor, sm_name(capability));
}

std::optional<int> major_of(const std::optional<std::string>& version) {
  if (!version) return std::nullopt;
  auto parsed = parse_version(*version);
  return parsed ? std::optional(parsed->major) : std::nullopt;
}

std::string toolkit_label(const ToolkitFact& toolkit) {
  return fmt::format("nvcc {} at {}", toolkit.version().value_or("?"), toolkit.nvcc);
}

const GpuFact* mig_mode_gpu(const Facts& facts) {
  for (const auto& gpu : facts.gpus)
    if (gpu.mig) return &gpu;
  return nullptr;
}

Context make_context(const Profile& profile, const Facts& facts, const LaunchPlan& plan) {
  Context context{profile, facts, assigned_gpu_facts(plan.gpus, facts), {}, std::nullopt, {}};
  // Facts list GPUs, not MIG instances: a MIG- device stands for a GPU in MIG mode (its
  // capability is the parent's).
  const GpuFact* mig_parent = mig_mode_gpu(facts);
  for (const auto& device : plan.gpus)
    if (device.starts_with("MIG-") && mig_parent) context.gpus.push_back(mig_parent);
  std::set<ComputeCapability> distinct;
  for (const auto* gpu : context.gpus) distinct.insert({gpu->cc_major, gpu->cc_minor});
  context.capabilities.assign(distinct.begin(), distinct.end());
  context.arch_list_text = lookup(plan.environment, "FLASHINFER_CUDA_ARCH_LIST");
  if (context.arch_list_text)
    context.arch_list = parse_flashinfer_arch_list(*context.arch_list_text);
  return context;
}

// The package version the rules know FlashInfer by, if installed.
std::optional<std::string> package_version(const Context& context, const std::string& name) {
  if (!context.facts.python) return std::nullopt;
  auto found = context.facts.python->packages.find(name);
  if (found == context.facts.python->packages.end()) return std::nullopt;
  return found->second;
}

std::string gpus_text(const Context& context, ComputeCapability capability) {
  std::vector<int> indices;
  std::string name;
  for (const auto* gpu : context.gpus)
    if (gpu->cc_major == capability.major && gpu->cc_minor == capability.minor) {
      indices.push_back(gpu->index);
      name = gpu->name;
    }
  std::string list;
  for (int index : indices) list += (list.empty() ? "" : ",") + std::to_string(index);
  return fmt::format("{} x {} (GPU {}), compute capability {}", indices.size(), name, list,
                     capability_name(capability));
}

void add(std::vector<Finding>& findings, Finding finding) {
  findings.push_back(std::move(finding));
}

}  // namespace gl::check_rules
