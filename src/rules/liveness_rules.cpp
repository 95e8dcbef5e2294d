// SPDX-License-Identifier: Apache-2.0
// Liveness on what the engine allows: a key the probe cannot send, an options file that is the
// user's own.
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

// server.liveness on a keyed engine: a probe or metrics read without the key the engine wants
// would answer 401 every time, so the plan sends none; say which signal remains.
void check_liveness_key(const Profile& profile, const LaunchPlan& plan,
                        std::vector<Finding>& findings) {
  const EngineRow& row = engine_row(profile.engine.kind);
  const LivenessPlan& liveness = plan.liveness;
  if (!liveness.can_stall()) return;
  const ApiKeyUse key = find_api_key(row.liveness.api_key, plan.argv, profile);
  if (key.usable()) return;
  const bool probe_dropped =
      liveness.mode == LivenessMode::generate && !row.liveness.probe.path.empty();
  const bool metrics_dropped =
      row.liveness.api_key.guards_metrics && !row.liveness.metrics.path.empty();
  if (!probe_dropped && !metrics_dropped) return;
  const std::string remains =
      !liveness.metrics_path.empty()
          ? fmt::format("metrics: {}{} from {}", liveness.in_flight_metric,
                        liveness.in_flight_metric.empty() ? liveness.tokens_metric
                                                          : " and " + liveness.tokens_metric,
                        liveness.metrics_path)
          : "none: health answers alone feed the watchdog, a wedged engine that answers health "
            "is never stopped";
  findings.push_back(
      {liveness.metrics_path.empty() ? Severity::warning : Severity::info,
       "liveness-key-unusable",
       fmt::format("liveness sends no {} to {}: it needs the API key ({})",
                   probe_dropped && metrics_dropped ? "probe and no metrics read"
                   : probe_dropped                  ? "probe"
                                                    : "metrics read",
                   row.display, key.where),
       "gpulaunch sends an engine's API key only from [secrets], read by `run` from the unit's "
       "credentials; a request without it answers 401 every time",
       {{"signal left", remains}},
       row.liveness.api_key.variables.empty()
           ? std::string()
           : fmt::format("put the key in [secrets] as {} and drop the other ways it is given",
                         row.liveness.api_key.variables.front())});
}

// An options-file metrics switch (trtllm-serve's iteration statistics) where engine.args name
// their own file: gpulaunch passes no second one, so the switch must be in theirs.
void check_liveness_options_file(const Profile& profile, const LaunchPlan& plan,
                                 std::vector<Finding>& findings) {
  const LivenessPlan& liveness = plan.liveness;
  if (!liveness.can_stall() || liveness.user_options_file.empty()) return;
  const MetricsInterface& metrics = engine_row(profile.engine.kind).liveness.metrics;
  std::string text(metrics.options_file_text);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  findings.push_back(
      {Severity::info,
       "liveness-options-file",
       fmt::format("{} reads its options from '{}': liveness counts its iterations only where "
                   "that file holds '{}'",
                   engine_row(profile.engine.kind).display, liveness.user_options_file, text),
       fmt::format("without it {} answers '[]' and only the probe, which waits behind the "
                   "queue, watches the engine: a queue busy for longer than {}s is taken for a "
                   "stall",
                   metrics.path, liveness.timeout.count()),
       {{"file", liveness.user_options_file}},
       fmt::format("add the line '{}' to '{}', or drop {} from engine.args and gpulaunch passes "
                   "a file of its own",
                   text, liveness.user_options_file, metrics.options_file_flags.front())});
}

}  // namespace gl::check_rules
