// SPDX-License-Identifier: Apache-2.0
#include "unit/unit_environment.hpp"

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

}  // namespace gl
