// SPDX-License-Identifier: Apache-2.0
#include "plan/launch_plan.hpp"

#include <algorithm>

#include "catalog/jit_caches.hpp"
#include "plan/gpu_assignment.hpp"
#include "util/state_paths.hpp"

namespace gl {
namespace {

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string text;
  for (const auto& part : parts) {
    if (!text.empty()) text += separator;
    text += part;
  }
  return text;
}

std::string parent_directory(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string local_address(const std::string& host) {
  // A wildcard listener is probed on loopback.
  if (host == "0.0.0.0") return "127.0.0.1";
  if (host == "::" || host == "[::]") return "[::1]";
  if (host.find(':') != std::string::npos && host.front() != '[') return "[" + host + "]";
  return host;
}

}  // namespace

LaunchPlan make_launch_plan(const Profile& profile, const LaunchOptions& options) {
  LaunchPlan plan;
  plan.node_rank = options.node_rank;
  plan.argv = engine_argv(profile, options);
  plan.engine_home = state_paths::engine_home(profile.name).string();
  plan.snapshot_path = state_paths::snapshot_file(profile.name).string();
  plan.cache_root = profile.caches.root;
  plan.health_url = "http://" + local_address(profile.server.host) + ":" +
                    std::to_string(profile.server.port) + profile.server.health_path;
  plan.rendezvous = headless_rendezvous(profile, options);
  auto& env = plan.environment;

  // The toolkit first: FlashInfer and torch's cpp_extension take CUDA_HOME, then CUDA_PATH,
  // then `which nvcc`; pinning all three to one toolkit leaves them nothing to disagree on.
  std::vector<std::string> path;
  if (const auto& cuda_home = profile.toolkit.cuda_home) {
    env.emplace_back("CUDA_HOME", *cuda_home);
    env.emplace_back("CUDA_PATH", *cuda_home);
    path.push_back(*cuda_home + "/bin");
  }
  if (profile.engine.venv) {
    path.push_back(*profile.engine.venv + "/bin");
    env.emplace_back("VIRTUAL_ENV", *profile.engine.venv);
  } else if (profile.engine.python) {
    std::string bin = parent_directory(*profile.engine.python);
    if (std::string(kSystemPath).find(bin) == std::string::npos) path.push_back(bin);
  }
  path.emplace_back(kSystemPath);
  env.emplace_back("PATH", join(path, ":"));
  if (const auto& cuda_home = profile.toolkit.cuda_home)
    env.emplace_back("LD_LIBRARY_PATH", *cuda_home + "/lib64");

  plan.gpus = assigned_gpus(profile);
  // Indices as nvidia-smi numbers them; CUDA's default order is fastest-first.
  env.emplace_back("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
  env.emplace_back(std::string(kVisibleDevicesVariable), visible_devices_value(plan.gpus));
  if (const auto& arch_list = profile.toolkit.arch_list) {
    env.emplace_back("FLASHINFER_CUDA_ARCH_LIST", *arch_list);
    env.emplace_back("TORCH_CUDA_ARCH_LIST", *arch_list);
  }

  for (const auto& cache : jit_caches()) {
    auto override_it = profile.caches.overrides.find(std::string(cache.name));
    std::string directory = override_it != profile.caches.overrides.end()
                                ? override_it->second
                                : plan.cache_root + "/" + std::string(cache.directory);
    plan.caches.push_back({std::string(cache.name), directory, cache.keys_itself});
    for (const auto& variable : cache.variables)
      env.emplace_back(
          std::string(variable.name),
          variable.subpath.empty() ? directory : directory + "/" + std::string(variable.subpath));
  }

  // Nothing may fall back to a home directory the service does not own.
  env.emplace_back("HOME", plan.engine_home);
  env.emplace_back("XDG_CACHE_HOME", plan.cache_root + "/xdg");
  env.emplace_back("PYTHONNOUSERSITE", "1");
  env.emplace_back("PYTHONUNBUFFERED", "1");
  env.emplace_back("LANG", "C.UTF-8");

  for (const auto& [name, value] : profile.env) {
    auto existing = std::find_if(env.begin(), env.end(),
                                 [&](const auto& entry) { return entry.first == name; });
    if (existing != env.end())
      existing->second = value;  // HOME, LANG, ...: the profile wins
    else
      env.emplace_back(name, value);
  }
  return plan;
}

}  // namespace gl
