// SPDX-License-Identifier: Apache-2.0
// Who could take over what the unit runs, as root or as the engine.
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
#include "plan/gpu_assignment.hpp"
#include "plan/launch_plan.hpp"
#include "profile/api_key.hpp"
#include "profile/service_user.hpp"
#include "rules/gpu_health.hpp"
#include "rules/installed_profiles.hpp"
#include "rules/jit_toolkit.hpp"
#include "rules/node_checks.hpp"
#include "util/version.hpp"

namespace gl::check_rules {

// The unit runs the engine and gpulaunch's own helpers; who could take them over.
void check_trust(const Context& context, std::vector<Finding>& findings) {
  // Unset, the engine runs as the profile's own user (profile/service_user); root only by name.
  const auto& user = context.profile.service.user;
  if (user && *user == "root")
    add(findings,
        {Severity::warning,
         "engine-runs-as-root",
         "the engine would run as root: service.user is root",
         "the engine runs third-party wheels and model code (--trust-remote-code); as root, any "
         "of it owns the node",
         {{"service.user", *user}},
         fmt::format("remove service.user: the engine then runs as its own system user {}, "
                     "which `up` creates",
                     default_service_user(context.profile.name))});
  for (const ProgramFact& program : context.facts.root_programs) {
    if (!program.exists)
      add(findings, {Severity::warning,
                     std::string(kProgramMissingCode),
                     fmt::format("the unit would run '{}' as root (ExecStartPost=), and it is not "
                                 "an executable file",
                                 program.path),
                     "without it no start's phases reach the history, `status` or `events`",
                     {{"program", program.path}},
                     "install gpulaunch from its package (or `cmake --install`): it installs "
                     "gpulaunch-record-start beside gpulaunch"});
    else if (program.user_writable)
      add(findings, {Severity::warning,
                     "gpulaunch-binary-user-writable",
                     fmt::format("the unit would run '{}' as root, and a non-root user can "
                                 "replace it",
                                 program.path),
                     "every program a root unit runs must be writable by root only (sudo's and "
                     "ssh's StrictModes rule)",
                     {{"gpulaunch", program.path}, {"writable", *program.user_writable}},
                     "install gpulaunch (the Debian package, or `cmake --install` to /usr/local) "
                     "and run `up` from there, not from a build tree"});
  }
}

}  // namespace gl::check_rules
