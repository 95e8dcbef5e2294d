// SPDX-License-Identifier: Apache-2.0
#include "unit/unit_environment.hpp"

#include <algorithm>
#include <iterator>

#include "catalog/containers.hpp"
#include "plan/container_command.hpp"
#include "plan/gpu_assignment.hpp"

namespace gl {

std::vector<UnitVariable> unit_environment(const Profile& profile, const LaunchPlan& plan) {
  std::vector<UnitVariable> variables;
  for (const auto& [name, value] : plan.environment)
    variables.push_back({name, value, std::nullopt});
  // [secrets]: systemd reads each file as root into the credentials directory, readable by the
  // service's user only; the environment carries the path, never the value (huggingface_hub
  // reads its token from HF_TOKEN_PATH).
  for (const auto& [name, file] : profile.secrets)
    variables.push_back({name + "_PATH", credential_path(profile, name), name});
  return variables;
}

std::vector<UnitVariable> container_unit_environment(const Profile& profile,
                                                     const LaunchPlan& plan) {
  std::vector<UnitVariable> variables{{"PATH", std::string(kSystemPath), std::nullopt},
                                      {"HOME", std::string(kContainerHostHome), std::nullopt}};
  // The rest of gpulaunch's own list from the plan (CUDA_VISIBLE_DEVICES: `run` reads which GPUs
  // are the engine's), and the credentials systemd loads.
  for (auto& variable : unit_environment(profile, plan)) {
    const bool own = std::ranges::find(kContainerUnitVariables, variable.name) !=
                     std::end(kContainerUnitVariables);
    if (variable.credential || (own && variable.name != "PATH" && variable.name != "HOME"))
      variables.push_back(std::move(variable));
  }
  return variables;
}

}  // namespace gl
