// SPDX-License-Identifier: Apache-2.0
#include "caches/fingerprint_facts.hpp"

#include "catalog/engines.hpp"
#include "plan/gpu_assignment.hpp"
#include "rules/jit_toolkit.hpp"

namespace gl {

FingerprintInputs fingerprint_inputs(const Profile& profile, const LaunchPlan& plan,
                                     const Facts& facts) {
  FingerprintInputs inputs;
  inputs.engine = std::string(engine_kind_name(profile.engine.kind));
  inputs.arch_list = profile.toolkit.arch_list.value_or("");
  const JitPick pick = pick_jit_toolkit(plan.environment, facts);
  inputs.toolkit_path = pick.root;
  if (pick.toolkit) inputs.toolkit_version = pick.toolkit->version().value_or("");
  inputs.driver_version = facts.driver.version.value_or("");
  for (const GpuFact* gpu : assigned_gpu_facts(plan.gpus, facts))
    inputs.gpu_archs.push_back(capability_text(*gpu));
  if (profile.engine.image && facts.image)
    inputs.image_digest = facts.image->digest.empty() ? facts.image->id : facts.image->digest;
  if (facts.python) {
    inputs.torch_version = facts.python->torch_version.value_or("");
    auto version_of = [&](const std::string& name) {
      auto found = facts.python->packages.find(name);
      return found == facts.python->packages.end() ? std::string() : found->second;
    };
    inputs.flashinfer_version = version_of("flashinfer");
    inputs.triton_version = version_of("triton");
    // Packages are keyed by import name: trtllm's is tensorrt_llm.
    const std::string_view module = engine_row(profile.engine.kind).import_module;
    if (!module.empty()) inputs.engine_version = version_of(std::string(module));
  }
  return inputs;
}

}  // namespace gl
