// SPDX-License-Identifier: Apache-2.0
#include "engines/precompile_argv.hpp"

#include "catalog/precompile.hpp"

namespace gl {

Result<std::vector<std::string>> precompile_argv(const Profile& profile,
                                                 const LaunchOptions& options,
                                                 std::optional<long long> timeout_seconds) {
  const std::string_view kind = engine_kind_name(profile.engine.kind);
  const PrecompileStep* step = precompile_step(profile.engine.kind);
  if (!step)
    return failf("Profile '{}' has no precompile step ({}): {}", profile.name, kind,
                 no_precompile_reason(profile.engine.kind));
  if (profile.engine.image)
    return failf("Profile '{}' runs {} from an image, which gpulaunch does not start yet",
                 profile.name, kind);
  if (!profile.engine.venv && !profile.engine.python)
    return failf("Profile '{}' names no Python to run {} with (engine.venv or engine.python)",
                 profile.name, step->module);
  if (profile.parallelism.nodes > 1)
    return failf(
        "Profile '{}' spans {} nodes: {} must run on every rank at once against rank 0's "
        "rendezvous, which `warm --compile` does not do; start the group once with `gpulaunch up "
        "{} --all-nodes` and seed new nodes with `gpulaunch cache export` and `cache import`",
        profile.name, profile.parallelism.nodes, step->module, profile.name);
  // The service's flags are what follows its launcher (`python -m sglang.launch_server` or the
  // release's serve script): the step parses the same server arguments.
  const std::vector<std::string> service = engine_argv(profile, options);
  const size_t launcher = engine_launcher(profile, options).size();
  std::vector<std::string> argv{venv_program(profile, "python"), "-m", std::string(step->module)};
  argv.insert(argv.end(), service.begin() + static_cast<std::ptrdiff_t>(launcher), service.end());
  if (timeout_seconds) {
    argv.emplace_back(step->timeout_flag);
    argv.push_back(std::to_string(*timeout_seconds));
  }
  return argv;
}

}  // namespace gl
