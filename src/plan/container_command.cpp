// SPDX-License-Identifier: Apache-2.0
#include "plan/container_command.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "catalog/containers.hpp"
#include "catalog/pinned_variables.hpp"
#include "profile/secret_files.hpp"
#include "util/path_within.hpp"

namespace gl {
std::vector<std::string> container_command(const Profile& profile, const LaunchPlan& plan) {
  std::vector<std::string> argv{std::string(kPodmanProgram),
                                "run",
                                "--rm",
                                "--replace",
                                "--pull=never",
                                fmt::format("--name={}{}", kContainerNamePrefix, profile.name),
                                "--cgroups=split",
                                "--sdnotify=ignore",
                                fmt::format("--network={}", kContainerNetwork),
                                fmt::format("--ipc={}", kContainerIpc),
                                "--cap-drop=all",
                                "--security-opt=no-new-privileges"};
  if (plan.gpus.empty())
    argv.push_back(fmt::format("--device={}=all", kCdiGpuKind));
  else
    for (const auto& gpu : plan.gpus)
      argv.push_back(fmt::format("--device={}={}", kCdiGpuKind, gpu));
  // By name: podman copies each value from the unit's environment. HOME and XDG_* by value: the
  // unit's are root's (unit/unit_environment's container_unit_environment).
  for (const auto& [name, value] : plan.environment)
    if (container_by_value(name))
      argv.push_back(fmt::format("--env={}={}", name, value));
    else if (!container_host_only(name))
      argv.push_back("--env=" + name);
  for (const auto& [name, file] : profile.secrets) argv.push_back("--env=" + name + "_PATH");
  // Each host directory at its own path, so every variable above means the same inside.
  std::vector<std::string> mounts{plan.cache_root};
  for (const auto& cache : plan.caches)
    if (!path_within(cache.directory, plan.cache_root)) mounts.push_back(cache.directory);
  mounts.push_back(plan.engine_home);
  for (const auto& path : mounts) argv.push_back(fmt::format("--volume={}:{}", path, path));
  if (!profile.secrets.empty()) {
    const std::string directory = credentials_directory(profile);
    argv.push_back(fmt::format("--volume={}:{}:ro", directory, directory));
  }
  if (profile.model.path.starts_with("/"))
    argv.push_back(fmt::format("--volume={}:{}:ro", profile.model.path, profile.model.path));
  argv.push_back("--workdir=" + plan.engine_home);
  argv.push_back(*profile.engine.image);
  return argv;
}

bool container_host_only(std::string_view name) {
  const PinnedVariable* pinned = find_pinned_variable(name);
  return pinned && pinned->host_only;
}

bool container_by_value(std::string_view name) {
  return name == kContainerByValueVariable || name.starts_with(kContainerByValuePrefix);
}

Result<std::vector<std::string>> with_container_user(std::vector<std::string> argv, unsigned uid,
                                                     unsigned gid) {
  if (argv.size() < 2 || argv[0] != kPodmanProgram || argv[1] != "run")
    return failf("not a container command: it does not start with '{} run'", kPodmanProgram);
  argv.insert(argv.begin() + 2, fmt::format("--user={}:{}", uid, gid));
  return argv;
}

}  // namespace gl
