// SPDX-License-Identifier: Apache-2.0
#pragma once
// The contract between the unit and its main process: what `gpulaunch run` is told on its
// command line. One type, one writer (the unit's ExecStart=, unit/render) and one reader (`run`'s
// options, cli/run_command, and `status` reading an installed unit back), both driven by one
// table of settings in run_settings.cpp: a new setting is a field here and a row there.

#include <optional>
#include <string>
#include <vector>

#include "plan/launch_plan.hpp"
#include "util/error.hpp"

namespace CLI {
class App;
}

namespace gl {

struct RunSettings {
  std::string profile;
  std::string snapshot;    // the merged profile `up` wrote
  std::string health_url;  // answers 200 once serving
  Seconds ready_timeout{1200};
  // By how much loading progress pushes the ready deadline back; 0: the ready timeout, at most
  // 300 s (units pass none).
  Seconds progress_grace{0};
  // One health answer's bound (plan's health_timing); units rendered before it: the shortest.
  Seconds health_timeout{kMinHealthTimeout};
  // How long a stop lets the engine drain (server.drain_timeout); units rendered before it: 80 s,
  // which with kStopKillGrace stays within those units' TimeoutStopSec=2min.
  Seconds drain_timeout{kRunDefaultDrainTimeout};
  // The release the argv's flags were fitted to: step-down spells its knobs for it.
  std::optional<std::string> engine_version;
  // A headless rank: ready and watched by its engine's connection to rank 0.
  std::optional<Rendezvous> rendezvous;
  // Liveness (plan's LivenessPlan); absent options: "health", as units had before them.
  LivenessMode liveness = LivenessMode::health;
  Seconds liveness_interval{kDefaultLivenessInterval};
  Seconds liveness_timeout{kDefaultLivenessTimeout};
  std::string probe_path;
  std::string probe_body;  // non-empty: the probe is a POST of this JSON
  std::string metrics_path;
  MetricsFormat metrics_format = MetricsFormat::prometheus;
  std::string in_flight_metric;
  std::string tokens_metric;
  // The file `run` writes in the engine's home before each start, and what it holds.
  std::string engine_options_path;
  std::string engine_options_text;
  bool rank0_watches = false;
  // The [secrets] credential holding the engine's API key, and the variable the engine reads it
  // from (empty: the engine reads the credential's file itself).
  std::string api_key_credential;
  std::string api_key_variable;
  ReadyOn ready = ReadyOn::health;
  // engine.image: the account the container runs as; `run` puts its uid:gid into the podman
  // command (plan/container_command) at start.
  std::string container_user;
  std::vector<std::string> engine_argv;  // after "--"

  bool operator==(const RunSettings&) const = default;
};

// What the unit tells `run` for this plan of the profile.
RunSettings run_settings(const Profile& profile, const LaunchPlan& plan);

// The arguments after "run", in the table's order: a setting at the value `run` assumes when it
// is absent is left out (the always-written ones excepted), then "--" and the engine's argv.
std::vector<std::string> run_settings_argv(const RunSettings& settings);

// `run`'s options, bound to `settings`: every row of the table (and, accepted and ignored, the
// --engine=KIND units rendered by earlier versions pass).
void add_run_settings_options(CLI::App& command, RunSettings& settings);

// The same options read from the arguments after "run" (an installed unit's ExecStart=).
Result<RunSettings> parse_run_settings(const std::vector<std::string>& arguments);

}  // namespace gl
