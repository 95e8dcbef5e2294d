// Hidden `prepare-caches` (ExecStartPre=+, as root, clean environment): clears the JIT caches the
// node's current facts made stale before the engine can load a stale kernel. What `run` did
// before it ran as the service user.

#include <cstdio>
#include <filesystem>

#include <fmt/core.h>

#include "caches/fingerprint_facts.hpp"
#include "caches/prepare.hpp"
#include "cli/context.hpp"
#include "plan/launch_plan.hpp"
#include "profile/validate.hpp"
#include "rules/node_probe.hpp"
#include "supervise/exit_status.hpp"

namespace gl {
namespace {

void say(const std::string& line) {
  fmt::print("gpulaunch: {}\n", line);
  std::fflush(stdout);
}

Result<void> prepare_jit_caches(const std::string& snapshot) {
  if (snapshot.empty() || !std::filesystem::exists(snapshot)) {
    say(fmt::format(
        "no profile snapshot at '{}': JIT caches not checked (install with `gpulaunch up`)",
        snapshot));
    return {};
  }
  auto profile = load_profile(DirectorySource({}), snapshot);
  if (!profile) return std::unexpected(profile.error());
  const LaunchPlan plan = make_launch_plan(*profile);
  // The toolkit the engine finds is the one its pinned environment names, not this one's.
  const Facts facts = probe_node_for(*profile, ShellEnvironment{plan.environment});
  auto report =
      prepare_caches(plan, fingerprint_inputs(*profile, facts), [](const Removal& removal) {
        say(fmt::format("removed {} ({} bytes): {}", removal.what, removal.bytes, removal.why));
      });
  if (!report) return std::unexpected(report.error());
  if (!report->change.empty())
    say(fmt::format("JIT caches were stale: {}", report->change));
  else
    say(fmt::format("JIT caches current (fingerprint {})", report->fingerprint));
  for (const auto& kept : report->kept) say("kept " + kept);
  for (const auto& held : report->held_locks) say("lock still held, left in place: " + held);
  return {};
}

}  // namespace

void add_prepare_caches_command(CLI::App& app, CliContext& context) {
  auto* command =
      app.add_subcommand("prepare-caches", "ExecStartPre=: clear JIT caches made stale");
  command->group("");  // units call it
  static std::string profile, snapshot;
  command->add_option("--profile", profile, "Profile name")->required();
  command->add_option("--snapshot", snapshot, "The merged profile `up` wrote");
  command->callback([&context] {
    if (auto prepared = prepare_jit_caches(snapshot); !prepared) {
      fmt::print("gpulaunch: {}\n", prepared.error().message);
      context.exit_code = kExitConfig;
    }
  });
}

}  // namespace gl
