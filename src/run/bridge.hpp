// SPDX-License-Identifier: Apache-2.0
#pragma once
// `gpulaunch run`: the unit's main process. Starts the engine as its child with the environment
// systemd gave us (the unit pins it), passes the engine's output through, reports progress with
// STATUS=, says READY=1 only once the health endpoint answers 200, keeps the watchdog fed while it
// does, forwards stop signals, and exits with a status that says why the engine ended.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engines/engine_argv.hpp"
#include "log/logger.hpp"
#include "run/cache_meter.hpp"
#include "run/liveness.hpp"
#include "run/output_lines.hpp"
#include "run/readiness.hpp"
#include "systemd/notify.hpp"

namespace gl {

struct BridgeOptions {
  std::string health_url;  // http://host:port/path
  ReadinessConfig readiness;
  std::vector<std::string> argv;  // the engine
  std::chrono::milliseconds probe_interval{1000};
  // How long one health answer may take: the engine's own bound and a margin (the unit passes
  // plan/launch_plan's health_timing). A slower answer counts as none.
  std::chrono::milliseconds probe_timeout{5000};
  // A stop: the engine drains for drain_timeout after the forwarded SIGTERM (its own flag says
  // so where it has one); its process group gets SIGKILL at stop_timeout.
  std::chrono::seconds drain_timeout{80};
  std::chrono::seconds stop_timeout{90};
  // Called once the engine has served for `stable_after`; returns a line to log (or empty).
  std::chrono::seconds stable_after{0};
  std::function<std::string()> on_stable;
  // A headless rank: ready and watched by its engine's connection to rank 0 (run/rendezvous)
  // instead of health_url, which nothing answers there.
  std::optional<Rendezvous> rendezvous;
  // server.liveness (run/liveness decides; the paths are on health_url's host and port). The
  // probe is a GET, or a POST of probe_body (JSON) where that is set; it is also the first
  // generation READY=1 waits for with readiness.ready_on_generation.
  LivenessConfig liveness;
  std::string probe_path;
  std::string probe_body;
  std::string metrics_path;
  MetricsFormat metrics_format = MetricsFormat::prometheus;
  std::string in_flight_metric;  // empty: none (the metrics vouch for progress only)
  std::string tokens_metric;
  // The engine's API key (plan/launch_plan's key_credential, read by `run`): sent as
  // "Authorization: Bearer KEY" with the probe and the metrics reads; empty: none.
  std::string api_key;
  // After a stall's SIGABRT, how long the engine's processes get to write their stacks.
  std::chrono::seconds stall_dump_grace{5};
  // The compiling JIT caches, measured at the engine's start and every cache_interval until it
  // is ready (run/readiness reads growth as progress); null: none watched.
  std::shared_ptr<CacheMeter> cache_meter;
  std::chrono::milliseconds cache_interval{5000};
  // Where the stop signals come from. -1: the bridge takes SIGTERM, SIGINT and SIGHUP itself (a
  // unit's main process). Otherwise a pipe's read end, each byte the number of one such signal,
  // written by the caller's own handler, which outlives each engine (`run --foreground` between
  // starts): no signal is missed while no bridge runs.
  int stop_signal_fd = -1;
};

// One of the bridge's own lines ("gpulaunch: ..."), with its level and journal fields.
using BridgeLog =
    std::function<void(logging::Level, std::string_view line, const logging::Fields& fields)>;

// Runs until the engine has ended; returns the process exit status (supervise/exit_status.hpp).
// `print` receives the engine's output lines, and the bridge's own where `log` is empty; `log`
// receives the bridge's own (`run` hands them to log/logger: the journal with their fields).
int run_bridge(const BridgeOptions& options, Notifier& notifier,
               const std::function<void(std::string_view)>& print, const BridgeLog& log = {});

}  // namespace gl
