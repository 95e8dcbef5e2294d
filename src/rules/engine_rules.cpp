// SPDX-License-Identifier: Apache-2.0
// The engine's command line against the installed release: flags it lacks, its launcher.
#include "rules/check_rules.hpp"

#include "rules/check.hpp"

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
namespace {

// The flags gpulaunch adds against the installed release (catalog/engines' FlagVersions): one it
// lacks, with no older spelling, would make the engine exit "unrecognized arguments" at every
// start; an unknown release gets the conservative spellings, said as info.
void check_flag_versions(const Context& context, const LaunchPlan& plan,
                         std::vector<Finding>& findings) {
  const Profile& profile = context.profile;
  const EngineRow& engine = engine_row(profile.engine.kind);
  const auto version = installed_engine_version(context.facts, profile.engine.kind);
  LaunchOptions options;
  options.node_rank = plan.node_rank;
  options.engine_version = version;
  std::vector<std::string> conservative;
  std::vector<std::string> missing;
  std::string needs;
  for (const auto& fit : fitted_flags(profile, options)) {
    const FlagVersions* row = find_flag_versions(profile.engine.kind, fit.flag);
    auto read_without = row ? parse_version(row->last_without) : std::nullopt;
    auto installed = parse_version(version.value_or(""));
    if (fit.version_unknown) {
      if (fit.spelling != fit.flag)
        conservative.push_back(fmt::format("{} instead of {}", fit.spelling, fit.flag));
      else
        conservative.push_back(fmt::format("{} (since {})", fit.flag, fit.needs));
    } else if (fit.spelling.empty() && read_without && installed && *installed > *read_without) {
      // Between the newest release read without the flag and the first read with it: unknown.
      add(findings,
          {Severity::warning,
           "engine-flag-unverified",
           fmt::format("{} {} falls between the releases read for {}: {} lacks it, {} has it",
                       engine.display, *version, fit.flag, row->last_without, fit.needs),
           "the engine exits \"unrecognized arguments\" on a flag its release does not know",
           {{"installed", *version}, {"flag", fit.flag}, {"source", std::string(row->source)}},
           fmt::format("upgrade {} in engine.venv to {} or later, the first release read that "
                       "takes {}",
                       engine.pip_dist, fit.needs, fit.flag)});
    } else if (fit.spelling.empty()) {
      missing.push_back(fit.flag);
      // The newest first release among them is the one that has them all.
      auto have = parse_version(needs), want = parse_version(fit.needs);
      if (!have || (want && *have < *want)) needs = fit.needs;
    }
  }
  if (!missing.empty()) {
    const std::string flags = fmt::format("{}", fmt::join(missing, ", "));
    add(findings, {Severity::error,
                   "engine-flag-too-new",
                   fmt::format("{} {} has no {}, which this profile needs (from {} on)",
                               engine.display, *version, flags, needs),
                   "the engine exits \"unrecognized arguments\" on a flag its release does not "
                   "know, at every start",
                   {{"installed", *version}, {"flags", flags}, {"since", needs}},
                   fmt::format("upgrade {} in engine.venv to {} or later, or change the profile "
                               "so that it needs none of them",
                               engine.pip_dist, needs)});
  }
  if (!conservative.empty())
    add(findings, {Severity::info,
                   "engine-version-unknown",
                   fmt::format("the installed {} release is unknown: the command line uses {}",
                               engine.display, fmt::join(conservative, ", ")),
                   "gpulaunch spells the flags it adds as the installed release takes them",
                   {{"venv", profile.engine.venv.value_or("")}},
                   "install the engine with pip into engine.venv, so its dist-info names the "
                   "release"});
}

}  // namespace

void check_engine(const Context& context, const LaunchPlan& plan, std::vector<Finding>& findings) {
  const auto& facts = context.facts;
  const auto& profile = context.profile;
  if (!plan.argv.empty() && plan.argv.front().starts_with('/')) {
    const PathFact* launcher = facts.path(plan.argv.front());
    if (launcher && !launcher->executable)
      add(findings, {Severity::error,
                     "engine-executable-missing",
                     fmt::format("the engine's program '{}' {}", plan.argv.front(),
                                 launcher->exists ? "is not executable" : "does not exist"),
                     "the unit's ExecStart runs it",
                     {{"program", plan.argv.front()}},
                     "create the venv (engine.venv) or fix engine.python/engine.executable"});
  }
  const EngineRow& engine = engine_row(profile.engine.kind);
  const std::string_view module = engine.import_module;
  if (!module.empty() && facts.python) {
    auto found = facts.python->modules.find(std::string(module));
    if (found == facts.python->modules.end() || !found->second)
      add(findings, {Severity::error,
                     "engine-module-missing",
                     fmt::format("Python package '{}' is not installed in '{}'", module,
                                 facts.python->prefix),
                     fmt::format("engine.kind = \"{}\" runs the '{}' package", engine.name, module),
                     {{"venv", facts.python->prefix}, {"module", std::string(module)}},
                     fmt::format("install it into the venv: {}/bin/pip install {}",
                                 facts.python->prefix, engine.pip_dist)});
  }
  if (profile.model.is_local()) {
    const PathFact* model = facts.path(profile.model.path);
    if (model && !model->exists)
      add(findings, {Severity::error,
                     "model-path-missing",
                     fmt::format("model.path '{}' does not exist", profile.model.path),
                     "a local model path must exist before the start",
                     {{"model.path", profile.model.path}},
                     "download the model there or fix model.path"});
  }
  check_flag_versions(context, plan, findings);
  for (const auto& port : facts.ports)
    if (port.taken && port.port == profile.server.port && !port.held_by_service)
      add(findings, {Severity::error,
                     std::string(kPortTakenCode),
                     fmt::format("port {} on {} is already in use", port.port, port.host),
                     "the engine must be able to bind server.host:server.port",
                     {{"server.port", std::to_string(port.port)}, {"server.host", port.host}},
                     "stop whatever holds it (`ss -ltnp`) or choose another server.port"});
}

}  // namespace gl::check_rules
