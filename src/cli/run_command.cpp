#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <fmt/core.h>

#include "caches/fingerprint_facts.hpp"
#include "caches/prepare.hpp"
#include "cli/context.hpp"
#include "plan/launch_plan.hpp"
#include "profile/validate.hpp"
#include "rules/node_probe.hpp"
#include "run/bridge.hpp"
#include "run/exit_status.hpp"
#include "util/duration.hpp"

namespace gl {
namespace {

void say(const std::string& line) {
  fmt::print("gpulaunch: {}\n", line);
  std::fflush(stdout);
}

// Clears the JIT caches whose contents the node's current facts made stale, logging each removal
// with what and why, before the engine can load a stale kernel.
Result<void> prepare_jit_caches(const std::string& snapshot, Notifier& notifier) {
  if (snapshot.empty() || !std::filesystem::exists(snapshot)) {
    say(fmt::format("no profile snapshot at '{}': JIT caches not checked (install with "
                    "`gpulaunch up`)", snapshot));
    return {};
  }
  notifier.notify("STATUS=checking JIT caches");
  auto profile = load_profile(DirectorySource({}), snapshot);
  if (!profile) return std::unexpected(profile.error());
  const LaunchPlan plan = make_launch_plan(*profile);
  const Facts facts = probe_node_for(*profile, ShellEnvironment::current());
  auto report = prepare_caches(plan, fingerprint_inputs(*profile, facts), [](const Removal& removal) {
    say(fmt::format("removed {} ({} bytes): {}", removal.what, removal.bytes, removal.why));
  });
  if (!report) return std::unexpected(report.error());
  if (!report->change.empty()) say(fmt::format("JIT caches were stale: {}", report->change));
  else say(fmt::format("JIT caches current (fingerprint {})", report->fingerprint));
  for (const auto& kept : report->kept) say("kept " + kept);
  for (const auto& held : report->held_locks) say("lock still held, left in place: " + held);
  return {};
}

}  // namespace

void add_run_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "run", "The service's main process (ExecStart=): start the engine, report readiness");
  command->group("");  // units call it; people use `up`
  static std::string profile, engine, health_url, snapshot;
  static long long ready_timeout = 1200;
  static long long progress_grace = 0;
  static std::vector<std::string> argv;
  command->add_option("--profile", profile, "Profile this engine belongs to")->required();
  command->add_option("--engine", engine, "Engine kind");
  command->add_option("--snapshot", snapshot, "The merged profile `up` wrote, for the JIT caches");
  command->add_option("--health-url", health_url, "URL answering 200 once serving")->required();
  command->add_option("--ready-timeout", ready_timeout, "Seconds to wait for health 200")
      ->check(CLI::Range(1LL, 86400LL));
  command->add_option("--progress-grace", progress_grace,
                      "Seconds by which loading progress pushes the ready deadline back "
                      "(default: the ready timeout, at most 300)")
      ->check(CLI::Range(1LL, 86400LL));
  command->add_option("engine_argv", argv, "The engine's command line, after --")->required();
  command->callback([&context] {
    BridgeOptions options;
    options.health_url = health_url;
    options.readiness.ready_timeout = Seconds{ready_timeout};
    options.readiness.progress_grace =
        Seconds{progress_grace > 0 ? progress_grace : std::min(300LL, ready_timeout)};
    options.argv = argv;
    auto notifier = systemd_notifier();
    if (auto prepared = prepare_jit_caches(snapshot, *notifier); !prepared) {
      fmt::print("gpulaunch: {}\n", prepared.error().message);
      context.exit_code = kExitConfig;
      return;
    }
    // Output goes to the journal through stdout; flush per line so lines keep their order.
    std::function<void(std::string_view)> print = [](std::string_view line) {
      fmt::print("{}\n", line);
      std::fflush(stdout);
    };
    context.exit_code = run_bridge(options, *notifier, print);
  });
}

}  // namespace gl
