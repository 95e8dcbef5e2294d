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
  // By value: the unit's own environment is root's (podman's and `run`'s), and keeps only
  // gpulaunch's own variables (unit/unit_environment's container_unit_environment).
  for (const auto& [name, value] : container_environment(profile, plan))
    argv.push_back(fmt::format("--env={}={}", name, value));
  // By name: `run` sets it from the credential it reads, so the key is never in the unit's text.
  if (!plan.liveness.key_credential.empty() && !plan.liveness.key_variable.empty())
    argv.push_back("--env=" + plan.liveness.key_variable);
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

std::vector<std::pair<std::string, std::string>> container_environment(const Profile& profile,
                                                                       const LaunchPlan& plan) {
  std::vector<std::pair<std::string, std::string>> variables;
  for (const auto& [name, value] : plan.environment)
    if (!container_host_only(name)) variables.emplace_back(name, value);
  for (const auto& [name, file] : profile.secrets)
    variables.emplace_back(name + "_PATH", credential_path(profile, name));
  return variables;
}

std::vector<std::string> container_mount_sources(const std::vector<std::string>& argv) {
  std::vector<std::string> sources;
  if (argv.size() < 2 || argv[0] != kPodmanProgram || argv[1] != "run") return sources;
  constexpr std::string_view kVolume = "--volume=";
  for (std::size_t at = 2; at < argv.size() && argv[at].starts_with("--"); ++at)
    if (argv[at].starts_with(kVolume)) {
      const std::string spec = argv[at].substr(kVolume.size());
      sources.push_back(spec.substr(0, spec.find(':')));
    }
  return sources;
}

const char* container_variable(const std::vector<std::string>& argv, std::string_view name) {
  if (argv.size() < 2 || argv[0] != kPodmanProgram || argv[1] != "run") return nullptr;
  const std::string prefix = fmt::format("--env={}=", name);
  // podman's own options come first, each "--NAME=VALUE"; the image is the first word without.
  for (std::size_t at = 2; at < argv.size() && argv[at].starts_with("--"); ++at)
    if (argv[at].starts_with(prefix)) return argv[at].c_str() + prefix.size();
  return nullptr;
}

Result<std::vector<std::string>> with_container_user(std::vector<std::string> argv, unsigned uid,
                                                     unsigned gid) {
  if (argv.size() < 2 || argv[0] != kPodmanProgram || argv[1] != "run")
    return failf("not a container command: it does not start with '{} run'", kPodmanProgram);
  argv.insert(argv.begin() + 2, fmt::format("--user={}:{}", uid, gid));
  return argv;
}

}  // namespace gl
