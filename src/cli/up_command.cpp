// SPDX-License-Identifier: Apache-2.0
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <optional>

#include <fmt/core.h>

#include "cli/all_nodes.hpp"
#include "cli/command_preamble.hpp"
#include "cli/context.hpp"
#include "cli/exit_status.hpp"
#include "cli/findings_report.hpp"
#include "cli/lifecycle.hpp"
#include "cli/locked.hpp"
#include "cli/metrics.hpp"
#include "cli/supervise.hpp"
#include "cli/unit_diff.hpp"
#include "cli/up_output.hpp"
#include "cli/upgrade_gate.hpp"
#include "group/dry_run_answer.hpp"
#include "log/logger.hpp"
#include "plan/launch_plan.hpp"
#include "plan/node_launch.hpp"
#include "profile/secret_files.hpp"
#include "profile/service_user.hpp"
#include "profile/validate.hpp"
#include "rules/check.hpp"
#include "rules/node_probe.hpp"
#include "supervise/history.hpp"
#include "supervise/unit_transition.hpp"
#include "supervise/up_sequence.hpp"
#include "util/state_paths.hpp"
#include "util/system_users.hpp"
#include "util/timekeeper.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

struct UpOptions : ProfileArgs {
  bool runtime = false;
  bool user = false;
  bool force = false;
  std::string locked;        // --locked LOCK: refuse on any drift from it
  bool no_rollback = false;  // a changed unit that fails to start stays as it failed
  bool dry_run = false;      // decide, print, change nothing
  bool json = false;         // with --dry-run
};

std::string read_existing(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// --locked: the drift table and the refusal, said; -1 when nothing drifted.
int refuse_drift(const std::string& lock, const MergedProfile& merged, const Profile& profile,
                 const LaunchPlan& plan, const Facts& facts) {
  auto rows = locked_drift(lock, merged, profile, plan, facts);
  if (!rows) return report(rows.error(), 2);
  if (rows->empty()) return -1;
  fmt::print("DRIFT: {} field(s) differ from {} (profile '{}')\n\n{}", rows->size(), lock,
             profile.name, drift_table(*rows));
  std::fflush(stdout);
  logging::error(
      fmt::format("Refusing to start {}: this node drifted from the lock {}. Re-lock with "
                  "`gpulaunch lock {} -o {}` if the change is intended.",
                  profile.unit_name(), lock, profile.name, lock));
  return 1;
}

// `up --dry-run`: the unit rendered, the transition decided and the check gate evaluated, as `up`
// would, then printed instead of done. Exit 1 where `up` would refuse on the check.
struct DryRun {
  const Profile& profile;
  std::string unit;
  std::string path;
  const std::string& installed;
  const std::string& rendered;
  UpTransition transition;
  CheckGate check;
};

int print_dry_run(const DryRun& dry, bool json) {
  const DryRunAnswer answer{
      .profile = dry.profile.name,
      .unit = dry.unit,
      .path = dry.path,
      .action = dry.transition.action,
      .unit_changed = dry.transition.install,
      .diff =
          dry.transition.install ? unit_diff(dry.installed, dry.rendered, dry.path) : std::string(),
      .check_errors = dry.check.errors,
      .check_warnings =
          std::ranges::count(dry.check.findings, Severity::warning, &Finding::severity),
      // An unchanged running unit is left alone: `up` does not consult the check then.
      .refuse = dry.check.refuse && dry.transition.action != UnitAction::none};
  const int code = answer.refuse ? 1 : 0;
  if (json) {
    // One line: `up --all-nodes --dry-run` finds it among a rank's stderr lines.
    fmt::print("{}\n", dry_run_json(answer).dump());
    return code;
  }
  fmt::print("dry run: nothing is changed\n");
  fmt::print("profile: {}\nunit: {}\npath: {}\naction: {}\nunit changed: {}\n", answer.profile,
             answer.unit, answer.path, unit_action_name(answer.action),
             answer.unit_changed ? "yes" : "no");
  fmt::print("check: {} error(s), {} warning(s){}\n", answer.check_errors, answer.check_warnings,
             answer.refuse ? "; up would refuse (pass --force to start anyway)" : "");
  if (!dry.check.findings.empty()) {
    print_findings(dry.check.findings);
    fmt::print("\n");
  }
  if (!answer.diff.empty()) fmt::print("{}", answer.diff);
  return code;
}

// The upgrade gate of a changed unit that became ready (supervise/gate_check decides), said.
GateCheck run_upgrade_gate(const Profile& profile, const LaunchPlan& plan) {
  auto engine = running_gate_engine(profile, plan, /*announce=*/true);
  GateCheck check = check_gate(profile.gate, GateRecordFile::of(profile.name), *engine);
  switch (check.outcome) {
    case GateOutcome::passed:
      fmt::print("gate: passed: answers as recorded, {:.1f} tok/s (floor {:.1f}){}\n",
                 check.measured->tokens_per_second, check.floor,
                 check.measured->retried > 0
                     ? fmt::format("; {} request(s) retried", check.measured->retried)
                     : std::string());
      break;
    case GateOutcome::no_record:
      fmt::print(
          "gate: no record for '{}' yet (`gpulaunch gate record {}` keeps this version's "
          "answers)\n",
          profile.name, profile.name);
      break;
    case GateOutcome::record_unreadable:
      logging::warning(fmt::format("warning: gate not run: {}", check.summary()));
      break;
    case GateOutcome::failed:
    case GateOutcome::unanswered:
      break;  // said with the rollback
  }
  return check;
}

// `up`'s actions, real: the node's check (probed once), root's history directory and the
// profile's own user, the upgrade gate over HTTP, the metrics file.
class NodeUpActions final : public UpActions {
 public:
  NodeUpActions(const Profile& profile, const LaunchPlan& plan, const UnitPlacement& placement,
                bool user, const std::function<const Facts&()>& node_facts,
                const ShellEnvironment& shell, SystemdManager& manager)
      : profile_(profile),
        plan_(plan),
        placement_(placement),
        user_(user),
        node_facts_(node_facts),
        shell_(shell),
        manager_(manager) {}

  std::vector<Finding> check() override { return evaluate(profile_, plan_, node_facts_(), shell_); }

  Result<void> prepare_state() override {
    if (placement_.scope != ManagerScope::system || ::geteuid() != 0) return {};
    GL_TRY_VOID(History(profile_.name).create());
    // The profile's own user, made before any unit names it (profile/service_user).
    if (!service_user_is_default(profile_)) return {};
    const std::string user = service_user(profile_);
    auto users = node_system_users();
    GL_TRY(const bool made, ensure_system_user(*users, user, "gpulaunch engine " + profile_.name,
                                               std::string(state_paths::kStateRoot)));
    if (made) fmt::print("created system user {} for {}\n", user, profile_.unit_name());
    return {};
  }

  std::optional<GateCheck> gate(bool unit_changed) override {
    // Where the profile has a gate and a record; rank 0 gates a multi-node group.
    const UpGate gates = up_gates(profile_, plan_, unit_changed, user_);
    if (!gates.run) {
      if (!gates.note.empty()) fmt::print("{}\n", gates.note);
      return std::nullopt;
    }
    return run_upgrade_gate(profile_, plan_);
  }

  void write_metrics() override {
    if (!user_) write_profile_metrics(profile_.name, &manager_);
  }

 private:
  const Profile& profile_;
  const LaunchPlan& plan_;
  const UnitPlacement& placement_;
  bool user_;
  const std::function<const Facts&()>& node_facts_;
  const ShellEnvironment& shell_;
  SystemdManager& manager_;
};

int up(const UpOptions& options, const CliContext& context) {
  auto source = context.profile_source();
  auto merged = load_merged(source, options.profile);
  if (!merged) return report(merged.error(), kExitUsage);
  auto profile = validate_profile(*merged);
  if (!profile) return report(profile.error(), kExitUsage);
  if (auto can_start =
          startable(*profile, options.user ? ManagerScope::user : ManagerScope::system);
      !can_start)
    return report(can_start.error());
  if (!options.all_nodes)
    if (auto secrets = check_secret_files(*profile); !secrets) return report(secrets.error());
  if (options.all_nodes && options.dry_run)
    return up_all_nodes_dry_run(*profile, AllNodesOptions{options.ssh, options.force, false},
                                options.json);
  if (options.all_nodes)
    return up_all_nodes(*profile,
                        AllNodesOptions{options.ssh, options.force, false, options.no_rollback});
  if (auto rank = check_node_rank(*profile, options.node_rank); !rank) return report(rank.error());

  const UnitPlacement placement{options.user ? ManagerScope::user : ManagerScope::system,
                                options.runtime};
  // One plan for everything below: the unit, the check, the lock's drift, the snapshot.
  // The engine release in the venv, InfiniBand, sandbox devices, the rendezvous' interface.
  const NodeLaunch node = node_launch_options(*profile, options.node_rank, NodeFs());
  for (const auto& warning : node.warnings) logging::warning(warning);
  const LaunchPlan plan = make_launch_plan(*profile, node.options);
  UpRequest request;
  request.unit = profile->unit_name();
  request.unit_file = placement.directory() / request.unit;
  request.snapshot = plan.snapshot_path;
  request.rendered = render_for_install(*profile, plan, placement.scope);
  request.installed = read_existing(request.unit_file);
  request.snapshot_text = snapshot_text(*merged);
  request.runtime = options.runtime;
  request.force = options.force;
  request.no_rollback = options.no_rollback;
  request.ready_window = profile->server.ready_timeout + std::chrono::minutes(2);
  request.stop_window = stop_timeout(*profile);
  logging::debug(fmt::format("unit {} at {}; engine version in the venv: {}; InfiniBand: {}",
                             request.unit, request.unit_file.string(),
                             node.options.engine_version.value_or("unknown"),
                             node.options.infiniband ? "yes" : "no"));

  const auto shell = ShellEnvironment::current();
  std::optional<Facts> probed;  // probed once, only when something needs the node's facts
  const std::function<const Facts&()> node_facts = [&]() -> const Facts& {
    if (!probed) probed = probe_node_for_start(*profile, plan, shell);
    return *probed;
  };
  // --locked: the node, profile, model and unit must be what the lock recorded; --force does not
  // override this (a lock is the operator's explicit promise of what runs).
  if (!options.locked.empty())
    if (const int refused = refuse_drift(options.locked, *merged, *profile, plan, node_facts());
        refused >= 0)
      return refused;

  auto manager = connect_systemd(placement.scope);
  if (!manager) return report(manager.error());
  auto before = (*manager)->status(request.unit);
  if (!before) return report(before.error());
  const UpTransition transition =
      decide_up(request.installed, request.rendered, *before, request.unit_file.string());
  if (options.dry_run)
    return print_dry_run(DryRun{*profile, request.unit, request.unit_file.string(),
                                request.installed, request.rendered, transition,
                                gate_on_check(evaluate(*profile, plan, node_facts(), shell),
                                              transition, options.force)},
                         options.json);

  NodeUpActions actions(*profile, plan, placement, options.user, node_facts, shell, **manager);
  PrintedUpOutput output(face_of(*profile, plan, request.unit_file.string(),
                                 options.user      ? " --user"
                                 : options.runtime ? " --runtime"
                                                   : ""));
  auto code = run_up(request, transition, **manager, system_timekeeper(), History(profile->name),
                     actions, output);
  if (!code) return report(code.error());
  return *code;
}

}  // namespace

void add_up_command(CLI::App& app, CliContext& context) {
  auto* command =
      app.add_subcommand("up", "Install the profile's unit, start it, wait until it serves");
  static UpOptions options;
  auto* all = add_profile_args(
      command, options,
      {.all_nodes = true,
       .all_nodes_help = "Check every node of 'nodes.hosts', then bring each rank up over ssh"});
  auto* runtime = command->add_flag("--runtime", options.runtime,
                                    "Install under /run/systemd/system (gone at reboot)");
  command->add_flag("--user", options.user, "Use the calling user's systemd manager")
      ->excludes(runtime);
  command->add_flag("--force", options.force, "Start even when the check finds errors");
  auto* locked =
      command
          ->add_option("--locked", options.locked,
                       "Refuse to start unless this node matches the lockfile (`gpulaunch verify`)")
          ->excludes(all);
  auto* dry = command->add_flag(
      "--dry-run", options.dry_run,
      "Decide (the unit, start or restart, the check) and print it; change nothing");
  command
      ->add_flag("--json", options.json,
                 "With --dry-run: one JSON object (with --all-nodes, one per rank)")
      ->needs(dry)
      ->excludes(locked);
  command->add_flag("--no-rollback", options.no_rollback,
                    "Keep a changed unit that does not become ready as it failed, for inspection "
                    "(default: roll back to the previous unit and restart it)");
  command->callback([&context] { context.exit_code = up(options, context); });
}

}  // namespace gl
