#include "caches/fingerprint_facts.hpp"

#include <algorithm>

namespace gl {
namespace {

const ToolkitFact* unit_toolkit(const Profile& profile, const Facts& facts) {
  if (profile.toolkit.cuda_home) return facts.toolkit_at(*profile.toolkit.cuda_home);
  for (const auto& toolkit : facts.toolkits)
    if (std::find(toolkit.found_via.begin(), toolkit.found_via.end(), "PATH (unit)") !=
        toolkit.found_via.end())
      return &toolkit;
  return nullptr;
}

}  // namespace

FingerprintInputs fingerprint_inputs(const Profile& profile, const Facts& facts) {
  FingerprintInputs inputs;
  inputs.engine = std::string(engine_kind_name(profile.engine.kind));
  inputs.arch_list = profile.toolkit.arch_list.value_or("");
  if (const ToolkitFact* toolkit = unit_toolkit(profile, facts)) {
    inputs.toolkit_path = toolkit->root;
    inputs.toolkit_version = toolkit->version().value_or("");
  } else if (profile.toolkit.cuda_home) {
    inputs.toolkit_path = *profile.toolkit.cuda_home;
  }
  inputs.driver_version = facts.driver.version.value_or("");
  for (const auto& gpu : facts.gpus) inputs.gpu_archs.push_back(capability_text(gpu));
  if (facts.python) {
    inputs.torch_version = facts.python->torch_version.value_or("");
    auto version_of = [&](const std::string& name) {
      auto found = facts.python->packages.find(name);
      return found == facts.python->packages.end() ? std::string() : found->second;
    };
    inputs.flashinfer_version = version_of("flashinfer");
    inputs.triton_version = version_of("triton");
    if (profile.engine.kind != EngineKind::command)
      inputs.engine_version = version_of(inputs.engine);
  }
  return inputs;
}

}  // namespace gl
