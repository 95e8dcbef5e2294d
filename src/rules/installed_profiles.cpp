// SPDX-License-Identifier: Apache-2.0
#include "rules/installed_profiles.hpp"

#include "catalog/engines.hpp"
#include "plan/gpu_assignment.hpp"
#include "profile/installed_snapshot.hpp"
#include "profile/service_user.hpp"
#include "util/state_paths.hpp"

namespace gl {

std::filesystem::path installed_snapshot_path(const NodeFs& node,
                                              const InstalledProfileFact& fact) {
  // Empty where the path's links do not resolve inside the node's root: read as no snapshot.
  return node.host_path(fact.snapshot).value_or(std::filesystem::path());
}

std::vector<InstalledProfileFact> probe_installed_profiles(const NodeFs& node) {
  std::vector<InstalledProfileFact> installed;
  const std::string directory = state_paths::snapshot_directory().string();
  for (const auto& entry : node.list(directory)) {
    if (!entry.ends_with(".toml") || entry.starts_with(".")) continue;
    InstalledProfileFact fact;
    fact.name = entry.substr(0, entry.size() - 5);
    fact.snapshot = directory + "/" + entry;
    auto profile = load_installed_profile(fact.name, installed_snapshot_path(node, fact));
    if (!profile) {
      fact.problem = profile.error().message;
    } else if (!*profile) {
      continue;  // removed since the listing
    } else {
      const Profile& installed = **profile;
      fact.engine = std::string(engine_kind_name(installed.engine.kind));
      fact.gpus = assigned_gpus(installed);
      fact.user = service_user(installed);
      fact.share_user = installed.service.share_user;
    }
    installed.push_back(std::move(fact));
  }
  return installed;
}

}  // namespace gl
