// SPDX-License-Identifier: Apache-2.0
#include "run/run_options.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace gl {

namespace {
// Without --progress-grace, loading progress pushes the ready deadline back by the ready
// timeout, at most this much.
constexpr Seconds kMaxDefaultProgressGrace{300};
}  // namespace

Result<BridgeOptions> bridge_options(const RunSettings& settings) {
  if (settings.ready == ReadyOn::generate && settings.probe_path.empty())
    return failf("{}=generate needs {}", kRunReadyOption, kRunLivenessProbeOption);
  BridgeOptions options;
  options.health_url = settings.health_url;
  options.argv = settings.engine_argv;
  options.probe_timeout = settings.health_timeout;
  options.drain_timeout = settings.drain_timeout;
  options.stop_timeout = options.drain_timeout + kStopKillGrace;
  options.readiness.ready_timeout = settings.ready_timeout;
  options.readiness.progress_grace =
      settings.progress_grace.count() > 0
          ? settings.progress_grace
          : std::min(kMaxDefaultProgressGrace, settings.ready_timeout);
  options.readiness.ready_on_generation = settings.ready == ReadyOn::generate;
  options.liveness.mode = settings.liveness;
  options.liveness.interval = settings.liveness_interval;
  options.liveness.timeout = settings.liveness_timeout;
  options.liveness.has_probe = !settings.probe_path.empty();
  options.liveness.has_metrics = !settings.metrics_path.empty() && !settings.tokens_metric.empty();
  options.probe_path = settings.probe_path;
  options.probe_body = settings.probe_body;
  options.metrics_path = settings.metrics_path;
  options.metrics_format = settings.metrics_format;
  options.in_flight_metric = settings.in_flight_metric;
  options.tokens_metric = settings.tokens_metric;
  options.stall_dump_grace = kStallDumpGrace;
  if (settings.rendezvous) {
    if (settings.rendezvous->host.empty())
      return failf("{} needs {}=HOST:PORT", kRunRendezvousAnyPortOption, kRunRendezvousOption);
    options.rendezvous = settings.rendezvous;
    options.readiness.headless = true;
  }
  return options;
}

}  // namespace gl
