// SPDX-License-Identifier: Apache-2.0
#include "rules/check.hpp"

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
#include "plan/container_command.hpp"
#include "plan/gpu_assignment.hpp"
#include "plan/launch_plan.hpp"
#include "profile/api_key.hpp"
#include "profile/service_user.hpp"
#include "rules/gpu_health.hpp"
#include "rules/installed_profiles.hpp"
#include "rules/jit_toolkit.hpp"
#include "rules/node_checks.hpp"
#include "util/version.hpp"

namespace gl {

using namespace check_rules;

FactsRequest facts_request(const Profile& profile, const LaunchPlan& plan,
                           const ShellEnvironment& shell) {
  FactsRequest request;
  request.environments.push_back({"unit", plan.environment});
  request.environments.push_back({"shell", shell.variables});
  request.cuda_home = profile.toolkit.cuda_home;
  request.service_user = profile.service.user;
  request.probe_gpulaunch_binary = true;
  request.image = profile.engine.image;
  if (profile.engine.image) request.mount_sources = container_mount_sources(plan.argv);
  if (profile.engine.venv) {
    request.python_prefix = *profile.engine.venv;
    request.python_interpreter = *profile.engine.venv + "/bin/python";
  } else if (profile.engine.python) {
    request.python_prefix = parent_path(parent_path(*profile.engine.python));
    request.python_interpreter = *profile.engine.python;
  }
  if (!plan.argv.empty() && plan.argv.front().starts_with('/'))
    request.paths.push_back(plan.argv.front());
  if (profile.model.is_local()) request.paths.push_back(profile.model.path);
  // Where the unit's shell would find the programs FlashInfer's JIT runs.
  for (std::string_view variable : {"FLASHINFER_NVCC", "FLASHINFER_NVCC_LAUNCHER"})
    if (auto value = lookup(plan.environment, variable))
      for (const auto& candidate : program_candidates(plan.environment, first_word(*value)))
        if (candidate.starts_with('/')) request.paths.push_back(normal_path(candidate));
  // Offline, the cubins FlashInfer needs must already be there (check_cubins).
  if (lookup(plan.environment, kFlashinferNoDownload))
    if (auto cubins = flashinfer_cubin_directory(plan)) request.paths.push_back(cubins->path);
  if (profile.server.port > 0) request.ports.emplace_back(profile.server.host, profile.server.port);
  // Node preflight, OS side (rules/node_checks): the model's size, the other installed profiles.
  if (profile.model.is_local()) request.model_directory = profile.model.path;
  if (profile.parallelism.nodes > 1 && profile.parallelism.dist_init_addr)
    request.rendezvous_host = split_host_port(*profile.parallelism.dist_init_addr).first;
  request.installed_profiles = probe_installed_profiles;
  return request;
}

std::vector<Finding> evaluate(const Profile& profile, const LaunchPlan& plan, const Facts& facts,
                              const ShellEnvironment& shell) {
  auto context = make_context(profile, facts, plan);
  std::vector<Finding> findings;
  check_gpus(context, findings);
  check_toolkit(context, plan, shell, findings);
  check_engine(context, plan, findings);
  check_flashinfer_packages(context, plan, findings);
  check_cubins(context, plan, findings);
  check_image(context, plan, findings);
  check_trust(context, findings);
  check_node_os(profile, plan, facts, findings);
  check_node_health(plan, facts, findings);
  check_liveness_key(profile, plan, findings);
  check_liveness_options_file(profile, plan, findings);
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity < b.severity; });
  return findings;
}

}  // namespace gl
