// SPDX-License-Identifier: Apache-2.0
#include "group/group_steps.hpp"

#include <algorithm>

#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engines/engine_argv.hpp"
#include "group/dry_run_answer.hpp"
#include "group/group_caches.hpp"
#include "group/rank_answers.hpp"
#include "group/rendezvous_probe.hpp"
#include "plan/launch_plan.hpp"

namespace gl {
namespace {

int start_every_rank(const Profile& profile, const GroupOptions& options, RankRunner& runner,
                     GroupOutput& output) {
  const auto ranks = profile.nodes.hosts.size();
  // Every rank at once: a multi-node engine serves only once all ranks have joined.
  std::vector<std::vector<std::string>> ups;
  for (size_t rank = 0; rank < ranks; ++rank) {
    std::vector<std::string> args{"up", profile.name, "--node-rank", std::to_string(rank)};
    if (options.force) args.push_back("--force");
    if (options.no_rollback) args.push_back("--no-rollback");
    ups.push_back(std::move(args));
  }
  output.line(fmt::format("starting '{}' on {} node(s), dist_init_addr {}", profile.name, ranks,
                          profile.parallelism.dist_init_addr.value_or("(none)")));
  const auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(
      profile.server.ready_timeout + std::chrono::minutes(5));
  auto results = runner.run(ups, limit);
  size_t failed = 0;
  for (const auto& result : results) {
    if (result.ok()) {
      const std::string said = last_line(result.output);
      output.line(fmt::format("  {}: {}", rank_label(result), said.empty() ? "up" : said));
      continue;
    }
    ++failed;
    output.line(fmt::format("  {}: FAILED: {}", rank_label(result), rank_failure(result)));
    print_indented(output, result.output);
  }
  if (failed) {
    output.error(fmt::format("Failed to bring up '{}': {} of {} node(s) failed (above).",
                             profile.name, failed, ranks));
    return 1;
  }
  // Each rank's `up` returned once its unit said READY=1: health 200 where the rank serves, its
  // rendezvous with rank 0 where it runs headless (engines/engine_argv rank_role).
  size_t headless = 0;
  for (size_t rank = 0; rank < ranks; ++rank)
    if (rank_role(profile, static_cast<long long>(rank)) == RankRole::headless) ++headless;
  if (headless == 0)
    output.line(fmt::format("ready: '{}' serves on all {} node(s)", profile.name, ranks));
  else
    output.line(fmt::format("ready: '{}' serves on rank 0 ({}); {} headless rank(s) joined it",
                            profile.name, profile.nodes.hosts.front(), headless));
  return 0;
}

// How long a rank tries to reach rank 0's rendezvous (rendezvous-probe --within); the ssh
// call around it gets more.
constexpr int kReachSeconds = 10;
constexpr auto kReachCallLimit = std::chrono::seconds(kReachSeconds + 30);

// Every rank's TCP path to rank 0's rendezvous port, tested at once: rank 0 listens, the others
// connect. False (said why, naming the ranks) when one failed.
bool ranks_reach_rendezvous(const Profile& profile, RankRunner& runner, GroupOutput& output) {
  const auto rendezvous = group_rendezvous(profile);
  if (!rendezvous) return true;
  const auto ranks = profile.nodes.hosts.size();
  std::vector<std::vector<std::string>> probes;
  for (size_t rank = 0; rank < ranks; ++rank)
    probes.push_back({"rendezvous-probe", profile.name, "--node-rank", std::to_string(rank),
                      "--within", std::to_string(kReachSeconds)});
  const std::string address = rendezvous_text(*rendezvous);
  output.line(fmt::format("testing rank 0's rendezvous {} from every rank", address));
  auto results = runner.run(probes, kReachCallLimit);
  std::vector<std::string> failed;
  for (const auto& result : results) {
    const std::string said = last_line(result.output);
    if (result.ok()) {
      output.line(fmt::format("  {}: {}", rank_label(result), said));
      continue;
    }
    failed.push_back(rank_label(result));
    // The probe's own line when it ran (exit 1); otherwise why it did not.
    const bool probe_said = result.error.empty() && result.exit_code == 1;
    output.line(fmt::format("  {}: FAILED: {}", rank_label(result),
                            probe_said && !said.empty() ? said : rank_failure(result)));
    if (!probe_said) print_indented(output, result.output);
  }
  if (failed.empty()) return true;
  if (!results.empty() && !results.front().ok())
    output.line(
        "  (a running group holds the port on rank 0 itself: `restart --all-nodes` stops every "
        "rank before it tests)");
  output.error(
      fmt::format("Refusing to start '{}': {} did not pass the rendezvous test of {} "
                  "(above); the engines would wait for each other there until their "
                  "timeout.",
                  profile.name, fmt::join(failed, ", "), address));
  return false;
}

// What every rank must agree on before any starts: the rendezvous reachable from each, and the
// same caches on all.
bool ranks_agree(const Profile& profile, RankRunner& runner, GroupOutput& output) {
  return ranks_reach_rendezvous(profile, runner, output) &&
         ranks_agree_on_caches(profile, runner, output);
}

// Step 1 of `up`: the check on every node, before anything starts anywhere. False (said why)
// when a node could not be checked, or found errors and there is no --force.
bool every_rank_checked(const Profile& profile, const GroupOptions& options, RankRunner& runner,
                        GroupOutput& output) {
  output.line(fmt::format("checking '{}' on {} node(s)", profile.name, profile.nodes.hosts.size()));
  auto checks = runner.run(same_for_every_rank(profile, {"check", profile.name}), kRankCallLimit);
  bool check_errors = false;
  bool unchecked = false;
  for (const auto& check : checks) {
    if (check.ok()) {
      output.line(fmt::format("  {}: check OK", rank_label(check)));
      continue;
    }
    if (check.error.empty() && check.exit_code == 1) {
      check_errors = true;
      output.line(fmt::format("  {}: check FAILED, the start would fail there", rank_label(check)));
    } else {
      unchecked = true;
      output.line(fmt::format("  {}: could not check: {}", rank_label(check), rank_failure(check)));
    }
    print_indented(output, check.output);
  }
  if (unchecked) {
    output.error(
        fmt::format("Refusing to start '{}': not every node could be checked.", profile.name));
    return false;
  }
  if (check_errors && !options.force) {
    output.error(fmt::format(
        "Refusing to start '{}': the check found errors on a node above. Fix them, or pass "
        "--force to start anyway.",
        profile.name));
    return false;
  }
  return true;
}

// Every rank's dry run, read: nullopt (said why) when a rank did not answer or answered
// something else than a dry run.
std::optional<std::vector<DryRunAnswer>> every_rank_plan(const Profile& profile,
                                                         const std::vector<std::string>& extra,
                                                         RankRunner& runner, GroupOutput& output) {
  std::vector<std::vector<std::string>> dry_runs;
  for (size_t rank = 0; rank < profile.nodes.hosts.size(); ++rank) {
    dry_runs.push_back(
        {"up", profile.name, "--node-rank", std::to_string(rank), "--dry-run", "--json"});
    dry_runs.back().insert(dry_runs.back().end(), extra.begin(), extra.end());
  }
  // Exit 1 is a rank whose check would refuse: it still answers.
  const auto answers = json_from_every_rank(runner, dry_runs, {0, 1}, kRankCallLimit);
  std::vector<DryRunAnswer> plans;
  bool all_read = answers.all_answered;
  for (const auto& rank : answers.ranks) {
    const std::string where =
        fmt::format("rank {} ({})", rank["rank"].get<long long>(), rank["host"].get<std::string>());
    if (rank.contains("error")) {
      output.line(fmt::format("  {}: could not tell what up would do: {}", where,
                              rank["error"].get<std::string>()));
      continue;
    }
    auto plan = read_dry_run_answer(rank);
    if (!plan) {
      all_read = false;
      output.line(
          fmt::format("  {}: could not tell what up would do: {}", where, plan.error().message));
      continue;
    }
    plans.push_back(std::move(*plan));
  }
  if (!all_read) return std::nullopt;
  return plans;
}

}  // namespace

std::vector<std::vector<std::string>> same_for_every_rank(const Profile& profile,
                                                          const std::vector<std::string>& args) {
  return std::vector<std::vector<std::string>>(profile.nodes.hosts.size(), args);
}

int up_group(const Profile& profile, const GroupOptions& options, RankRunner& runner,
             GroupOutput& output) {
  const auto ranks = profile.nodes.hosts.size();
  // 1. The check on every node, before anything starts anywhere.
  if (!every_rank_checked(profile, options, runner, output)) return 1;

  // 2. What each rank's `up` would do. A group that runs unchanged everywhere is left alone; one
  // that runs anywhere while a rank would change stops on every rank first, because a multi-node
  // engine cannot take a rank back into a running group (and rank 0's engine holds the
  // rendezvous port the probe below needs).
  const auto plans = every_rank_plan(profile, {"--force"}, runner, output);
  if (!plans) {
    output.error(fmt::format("Refusing to start '{}': not every node answered.", profile.name));
    return 1;
  }
  if (std::ranges::all_of(*plans,
                          [](const auto& plan) { return plan.action == UnitAction::none; })) {
    output.line(
        fmt::format("'{}' runs unchanged on all {} node(s): nothing to do", profile.name, ranks));
    return 0;
  }
  if (std::ranges::any_of(*plans,
                          [](const auto& plan) { return plan.action != UnitAction::start; })) {
    output.line(fmt::format(
        "'{}' changed while it runs: the group restarts together, every rank stopped first",
        profile.name));
    if (int stopped = down_group(profile, GroupOptions{}, runner, output); stopped != 0) {
      output.error(
          fmt::format("Failed to bring up '{}': not every rank stopped (above).", profile.name));
      return stopped;
    }
  }

  // 3. The ranks agree (rendezvous reachable, same caches), before anything starts anywhere.
  if (!ranks_agree(profile, runner, output)) return 1;
  return start_every_rank(profile, options, runner, output);
}

int up_group_dry_run(const Profile& profile, const GroupOptions& options, bool json,
                     RankRunner& runner, GroupOutput& output) {
  std::vector<std::vector<std::string>> args;
  for (size_t rank = 0; rank < profile.nodes.hosts.size(); ++rank) {
    args.push_back(
        {"up", profile.name, "--node-rank", std::to_string(rank), "--dry-run", "--json"});
    if (options.force) args.back().push_back("--force");
  }
  // Exit 1 is a rank whose check would refuse: it still answers.
  auto answers = json_from_every_rank(runner, args, {0, 1}, kRankCallLimit);
  bool changed = false;
  bool refused = false;
  for (auto& rank : answers.ranks) {
    if (rank.contains("error")) continue;
    auto plan = read_dry_run_answer(rank);
    if (!plan) {
      rank["error"] = plan.error().message;
      answers.all_answered = false;
      continue;
    }
    changed = changed || plan->action != UnitAction::none;
    refused = refused || plan->refuse;
  }
  if (json) {
    const nlohmann::ordered_json answer{
        {"profile", profile.name}, {"ranks", answers.ranks}, {"changed", changed}};
    output.line(answer.dump(2));
  } else {
    output.line(
        fmt::format("dry run: nothing is changed on any of {} node(s)", answers.ranks.size()));
    for (const auto& rank : answers.ranks) {
      const std::string where = fmt::format("rank {} ({})", rank["rank"].get<long long>(),
                                            rank["host"].get<std::string>());
      if (rank.contains("error")) {
        output.line(fmt::format("  {}: FAILED: {}", where, rank["error"].get<std::string>()));
        continue;
      }
      const DryRunAnswer plan = *read_dry_run_answer(rank);
      output.line(fmt::format("  {}: action {}, unit {}, check {} error(s), {} warning(s){}", where,
                              unit_action_name(plan.action),
                              plan.unit_changed ? "changed" : "unchanged", plan.check_errors,
                              plan.check_warnings, plan.refuse ? "; up would refuse" : ""));
    }
  }
  if (!answers.all_answered) return 2;
  return refused ? 1 : 0;
}

int status_group_json(const Profile& profile, RankRunner& runner, GroupOutput& output) {
  // Exit 3: not installed there (an empty list).
  auto answers =
      json_from_every_rank(runner, same_for_every_rank(profile, {"status", profile.name, "--json"}),
                           {0, 3}, kRankCallLimit);
  for (auto& rank : answers.ranks) {
    // `status --json` answers a list: this profile's unit, or none when it is not installed.
    if (!rank.contains("answer")) continue;
    const auto list = rank["answer"];
    rank.erase("answer");
    rank["installed"] = !list.empty();
    if (!list.empty() && list.front().is_object())
      for (const auto& [key, value] : list.front().items()) rank[key] = value;
  }
  const nlohmann::ordered_json answer{{"profile", profile.name}, {"ranks", answers.ranks}};
  output.line(answer.dump(2));
  return answers.all_answered ? 0 : 1;
}

int status_group(const Profile& profile, RankRunner& runner, GroupOutput& output) {
  auto results = runner.run(same_for_every_rank(profile, {"status", profile.name}), kRankCallLimit);
  int code = 0;
  for (const auto& result : results) {
    output.line(fmt::format("{}:{}", rank_label(result),
                            result.ok() ? std::string() : " FAILED: " + rank_failure(result)));
    print_indented(output, result.output);
    if (!result.ok()) code = 1;
  }
  return code;
}

int down_group(const Profile& profile, const GroupOptions& options, RankRunner& runner,
               GroupOutput& output) {
  std::vector<std::string> args{"down", profile.name};
  if (options.purge) args.push_back("--purge");
  // Headless ranks first: a headless engine ends (a failure) as soon as rank 0 is gone, so
  // stopping rank 0 first would leave them failed, not stopped. Serving ranks all at once after.
  std::vector<std::vector<std::string>> headless(profile.nodes.hosts.size());
  std::vector<std::vector<std::string>> serving(profile.nodes.hosts.size());
  bool any_headless = false;
  for (size_t rank = 0; rank < headless.size(); ++rank) {
    const bool is_headless = rank_role(profile, static_cast<long long>(rank)) == RankRole::headless;
    (is_headless ? headless : serving)[rank] = args;
    any_headless = any_headless || is_headless;
  }
  std::vector<RankResult> results;
  // Each rank's engine drains before it stops (server.drain_timeout).
  const auto limit =
      std::chrono::duration_cast<std::chrono::milliseconds>(kRankCallLimit + stop_timeout(profile));
  if (any_headless) results = runner.run(headless, limit);
  auto rest = runner.run(serving, limit);
  if (results.empty()) results = rest;
  for (size_t rank = 0; rank < results.size() && rank < rest.size(); ++rank)
    if (!rest[rank].skipped) results[rank] = rest[rank];
  int code = 0;
  for (const auto& result : results) {
    output.line(
        fmt::format("  {}: {}", rank_label(result),
                    result.ok() ? last_line(result.output) : "FAILED: " + rank_failure(result)));
    if (!result.ok()) {
      print_indented(output, result.output);
      code = 1;
    }
  }
  return code;
}

int restart_group(const Profile& profile, RankRunner& runner, GroupOutput& output) {
  output.line(fmt::format("stopping every rank of '{}'", profile.name));
  if (int stopped = down_group(profile, GroupOptions{}, runner, output); stopped != 0) {
    output.error(
        fmt::format("Failed to restart '{}': not every rank stopped (above).", profile.name));
    return stopped;
  }
  if (!ranks_agree(profile, runner, output)) return 1;
  return start_every_rank(profile, GroupOptions{}, runner, output);
}

}  // namespace gl
