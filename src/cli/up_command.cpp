// SPDX-License-Identifier: Apache-2.0
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>

#include <fmt/core.h>

#include "catalog/journal_messages.hpp"
#include "cli/all_nodes.hpp"
#include "cli/context.hpp"
#include "cli/command_preamble.hpp"
#include "cli/findings_report.hpp"
#include "cli/lifecycle.hpp"
#include "cli/locked.hpp"
#include "cli/metrics.hpp"
#include "cli/supervise.hpp"
#include "cli/unit_diff.hpp"
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
#include "supervise/rollback.hpp"
#include "supervise/start_phases.hpp"
#include "supervise/unit_transition.hpp"
#include "systemd/journal.hpp"
#include "util/atomic_file.hpp"
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

void print_journal_tail(const std::string& unit) {
  auto journal = open_journal();
  if (!journal) return;
  auto entries = (*journal)->tail(unit, 15);
  if (!entries || entries->empty()) return;
  logging::error(fmt::format("last lines of {}:", unit));
  for (const auto& entry : *entries) logging::error(fmt::format("  {}", entry.message));
}

// Progress on a terminal redraws one line; elsewhere each change is its own line.
class ProgressLine {
 public:
  ProgressLine() : tty_(::isatty(STDOUT_FILENO) == 1) {}
  ~ProgressLine() { finish(); }

  void show(const std::string& text, std::chrono::steady_clock::duration elapsed) {
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(elapsed).count();
    if (tty_) {
      fmt::print("\r\033[K[{:>4}s] {}", seconds, text);
      std::fflush(stdout);
      drawn_ = true;
    } else if (text != last_) {
      fmt::print("[{:>4}s] {}\n", seconds, text);
      std::fflush(stdout);
    }
    last_ = text;
  }

  void finish() {
    if (tty_ && drawn_) fmt::print("\n");
    drawn_ = false;
  }

 private:
  bool tty_;
  bool drawn_ = false;
  std::string last_;
};

// The merged profile for `run`, which cannot see the caller's search path.
Result<void> write_snapshot(const MergedProfile& merged, const LaunchPlan& plan) {
  const std::string text = snapshot_text(merged);
  const std::filesystem::path path = plan.snapshot_path;
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  if (error)
    return failf("Failed to create '{}': {}", path.parent_path().string(), error.message());
  return write_file_atomically(path, text);
}

void print_ready(const Profile& profile, const LaunchPlan& plan, std::chrono::milliseconds elapsed,
                 std::string_view what) {
  if (plan.rendezvous)
    fmt::print("{}: {} rank {} runs headless, joined rank 0 at {} after {:.1f}s\n", what,
               profile.name, plan.node_rank, rendezvous_text(*plan.rendezvous),
               elapsed.count() / 1000.0);
  else
    fmt::print("{}: {} serves at {} after {:.1f}s\n", what, profile.name,
               plan.health_url.substr(0, plan.health_url.rfind('/')), elapsed.count() / 1000.0);
}

// supervise/rollback, said: the error line first (with its journal id), then how it ended.
// Always exit 1: what the operator asked for did not happen.
// `why`: what the changed unit did ("did not become ready", "failed its upgrade gate").
int roll_back_and_say(SystemdManager& manager, Timekeeper& clock, const Profile& profile,
                      const LaunchPlan& plan, const std::filesystem::path& path,
                      const PreviousUnit& previous, std::chrono::seconds limit,
                      std::string_view why = "did not become ready") {
  const std::string unit = profile.unit_name();
  logging::error(
      fmt::format("Rolling back {}: the changed unit {}; restoring the previous unit and profile "
                  "snapshot (pass --no-rollback to keep the failed state for inspection).",
                  unit, why),
      logging::Fields{.kind = kRolledBackMessage});
  auto rolled = roll_back(manager, clock, History(profile.name),
                          RollbackPlaces{unit, path, plan.snapshot_path}, previous, limit);
  if (!rolled) {
    logging::error(fmt::format("Failed to roll back {}: {}", unit, rolled.error().message));
    return 1;
  }
  for (const auto& warning : rolled->warnings)
    logging::warning(fmt::format("warning: {}", warning));
  if (rolled->restarted)
    fmt::print("rolled back: {} runs its previous unit again, ready after {:.1f}s\n", unit,
               rolled->ready_after.count() / 1000.0);
  else
    fmt::print("rolled back: {} has its previous unit again and is stopped, as it was before\n",
               unit);
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

int up(const UpOptions& options, const CliContext& context) {
  auto source = context.profile_source();
  auto merged = load_merged(source, options.profile);
  if (!merged) return report(merged.error());
  auto profile = validate_profile(*merged);
  if (!profile) return report(profile.error());
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
  const std::string unit = profile->unit_name();
  const auto path = placement.directory() / unit;
  // One plan for everything below: the unit, the check, the lock's drift, the snapshot.
  // The engine release in the venv, InfiniBand, sandbox devices, the rendezvous' interface.
  const NodeLaunch node = node_launch_options(*profile, options.node_rank, NodeFs());
  for (const auto& warning : node.warnings) logging::warning(warning);
  const LaunchOptions& launch = node.options;
  const LaunchPlan plan = make_launch_plan(*profile, launch);
  const std::string text = render_for_install(*profile, plan, placement.scope);
  const std::string existing = read_existing(path);
  logging::debug(fmt::format("unit {} at {}; engine version in the venv: {}; InfiniBand: {}", unit,
                             path.string(), launch.engine_version.value_or("unknown"),
                             launch.infiniband ? "yes" : "no"));

  // --locked: the node, profile, model and unit must be what the lock recorded; --force does not
  // override this (a lock is the operator's explicit promise of what runs).
  const auto shell = ShellEnvironment::current();
  std::optional<Facts> probed;  // probed once, only when something needs the node's facts
  auto node_facts = [&]() -> const Facts& {
    if (!probed) probed = probe_node_for_start(*profile, plan, shell);
    return *probed;
  };
  if (!options.locked.empty()) {
    auto rows = locked_drift(options.locked, *merged, *profile, plan, node_facts());
    if (!rows) return report(rows.error(), 2);
    if (!rows->empty()) {
      fmt::print("DRIFT: {} field(s) differ from {} (profile '{}')\n\n{}", rows->size(),
                 options.locked, profile->name, drift_table(*rows));
      std::fflush(stdout);
      logging::error(
          fmt::format("Refusing to start {}: this node drifted from the lock {}. Re-lock with "
                      "`gpulaunch lock {} -o {}` if the change is intended.",
                      unit, options.locked, profile->name, options.locked));
      return 1;
    }
  }

  auto manager = connect_systemd(placement.scope);
  if (!manager) return report(manager.error());
  auto before = (*manager)->status(unit);
  if (!before) return report(before.error());
  const UpTransition transition = decide_up(existing, text, *before, path.string());
  if (options.dry_run)
    return print_dry_run(DryRun{*profile, unit, path.string(), existing, text, transition,
                                gate_on_check(evaluate(*profile, plan, node_facts(), shell),
                                              transition, options.force)},
                         options.json);

  // `up` means up after a reboot too: the unit's [Install] links, made where the unit lives.
  auto enable = [&]() -> Result<bool> {
    GL_TRY(const auto changed, start_at_boot(**manager, unit, true, placement.runtime));
    for (const auto& line : changed) fmt::print("{}\n", line);
    return !changed.empty();
  };
  if (transition.action == UnitAction::none) {
    // An installation made before `up` enabled its unit gets its links now.
    auto enabled = enable();
    if (!enabled) return report(enabled.error());
    if (*enabled)
      if (auto reloaded = (*manager)->reload(); !reloaded) return report(reloaded.error());
    fmt::print("{} is running and unchanged: nothing to do.\n", unit);
    if (plan.rendezvous)
      fmt::print("headless rank {}: no endpoint; joins rank 0 at {}\n", plan.node_rank,
                 rendezvous_text(*plan.rendezvous));
    else
      fmt::print("endpoint: {}\n", plan.health_url.substr(0, plan.health_url.rfind('/')));
    return 0;
  }
  // The check, before anything changes.
  const CheckGate check =
      gate_on_check(evaluate(*profile, plan, node_facts(), shell), transition, options.force);
  if (!check.findings.empty()) {
    fmt::print("gpulaunch check: {} error(s), {} warning(s) for '{}' on this node", check.errors,
               std::ranges::count(check.findings, Severity::warning, &Finding::severity),
               profile->name);
    print_findings(check.findings);
    fmt::print("\n");
  }
  std::fflush(stdout);
  if (check.refuse) {
    logging::error(
        fmt::format("Refusing to start {}: the check found {} error(s) above. Fix them, or "
                    "pass --force to start anyway.",
                    unit, check.errors));
    return 1;
  }
  if (check.errors > 0)
    logging::warning(
        fmt::format("WARNING: --force: starting {} DESPITE {} CHECK ERROR(S); expect the "
                    "failures they predict.",
                    unit, check.errors));

  if (transition.changed) {
    fmt::print("{} changed:\n{}", path.string(), unit_diff(existing, text, path.string()));
  }
  // Root's state before a unit names it: the history's directory, the profile's own user.
  if (placement.scope == ManagerScope::system && ::geteuid() == 0) {
    if (auto created = History(profile->name).create(); !created) return report(created.error());
    // The profile's own user, made before any unit names it (profile/service_user).
    if (service_user_is_default(*profile)) {
      const std::string user = service_user(*profile);
      auto users = node_system_users();
      auto made = ensure_system_user(*users, user, "gpulaunch engine " + profile->name,
                                     std::string(state_paths::kStateRoot));
      if (!made) return report(made.error());
      if (*made) fmt::print("created system user {} for {}\n", user, unit);
    }
  }
  PreviousUnit previous{existing, read_existing(plan.snapshot_path), transition.running, ""};
  if (auto written = write_snapshot(*merged, plan); !written) return report(written.error());
  if (transition.install) {
    std::error_code ignored;
    std::filesystem::create_directories(placement.directory(), ignored);
    if (auto written = write_file_atomically(path, text); !written) return report(written.error());
  }
  auto enabled = enable();
  if (!enabled) return report(enabled.error());
  if (transition.install || *enabled)
    if (auto reloaded = (*manager)->reload(); !reloaded) return report(reloaded.error());

  // Starting by hand is the operator's word: an earlier crash loop no longer holds it down.
  Timekeeper& clock = system_timekeeper();
  if (auto reset = reset_crash_loop(History(profile->name), "gpulaunch up", clock); !reset)
    logging::warning(fmt::format("warning: {}", reset.error().message));
  fmt::print("{} {} ({})\n", transition.action == UnitAction::restart ? "restarting" : "starting",
             unit, path.string());
  const auto started = clock.steady_now();
  const int64_t started_usec = clock.now_usec();
  auto job = (*manager)->enqueue(job_method(transition.action), unit);
  if (!job) return report(job.error());

  // Type=notify: the start job completes only when `run` has seen the health endpoint answer 200.
  // A restart first stops the running engine, which drains.
  const auto limit =
      profile->server.ready_timeout + std::chrono::minutes(2) +
      (transition.action == UnitAction::restart ? stop_timeout(*profile) : Seconds{0});
  ProgressLine progress;
  auto watched =
      watch_start(**manager, clock, *job, unit, limit,
                  [&](const std::string& phase, std::chrono::steady_clock::duration elapsed) {
                    progress.show(phase, elapsed);
                  });
  progress.finish();
  // A ready start's metrics were written by record-start (ExecStartPost=, before the job ended);
  // a failed one's are written here. Not again on success: reading the caches' sizes cost up
  // ~50 ms after the engine was already serving (bench/up_ready_bench.sh).
  const bool started_ok = watched && watched->job_result == "done";
  if (!options.user && !started_ok) write_profile_metrics(profile->name, manager->get());
  if (!watched) return report(watched.error());
  if (watched->job_result != "done") {
    previous.failure =
        watched->job_result
            ? fmt::format("job {}; {}", *watched->job_result, describe_state(watched->last))
            : fmt::format("no progress for {}",
                          format_duration(std::chrono::duration_cast<Seconds>(limit)));
    logging::error(fmt::format("Failed to start {}: {}", unit, previous.failure));
    print_journal_tail(unit);
    if (!transition.changed) return 1;
    if (options.no_rollback) {
      logging::error(fmt::format(
          "--no-rollback: {} keeps the changed unit, as it failed; `gpulaunch up` of the previous "
          "profile puts the previous version back.",
          unit));
      return 1;
    }
    return roll_back_and_say(**manager, clock, *profile, plan, path, previous, limit);
  }
  auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock.steady_now() - started);
  print_ready(*profile, plan, elapsed, "ready");
  // A changed unit that serves must still answer as recorded (the upgrade gate), where the
  // profile has a gate and a record; rank 0 gates a multi-node group.
  if (const UpGate gates = up_gates(*profile, plan, transition.changed, options.user); gates.run) {
    const GateCheck check = run_upgrade_gate(*profile, plan);
    if (gate_rolls_back(check)) {
      previous.failure = check.summary();
      logging::error(fmt::format("Failed the upgrade gate of {}: {}", unit, previous.failure),
                     logging::Fields{.kind = kGateFailedMessage});
      if (options.no_rollback) {
        logging::error(fmt::format(
            "--no-rollback: {} keeps the changed unit, which failed its gate; `gpulaunch up` of "
            "the previous profile puts the previous version back.",
            unit));
        return 1;
      }
      const int code = roll_back_and_say(**manager, clock, *profile, plan, path, previous, limit,
                                         "failed its upgrade gate");
      write_profile_metrics(profile->name, manager->get());
      return code;
    }
  } else if (!gates.note.empty()) {
    fmt::print("{}\n", gates.note);
  }
  // The start's phases, as record-start (ExecStartPost=, done before the job) kept them.
  if (auto recorded = History(profile->name).state();
      recorded && recorded->last_start && recorded->last_start->process_start_usec >= started_usec)
    fmt::print("{}\n", describe_start(*recorded->last_start));
  const std::string where = options.user ? " --user" : options.runtime ? " --runtime" : "";
  fmt::print(
      "status: gpulaunch status {0}   logs: gpulaunch logs {0} -f   stop: gpulaunch down {0}{1}\n",
      profile->name, where);
  return 0;
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
