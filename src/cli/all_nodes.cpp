// SPDX-License-Identifier: Apache-2.0
#include "cli/all_nodes.hpp"

#include <algorithm>
#include <optional>
#include <sstream>

#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "caches/cache_agreement.hpp"
#include "cli/context.hpp"
#include "engines/engine_argv.hpp"
#include "group/remote.hpp"
#include "group/rendezvous_probe.hpp"
#include "log/logger.hpp"
#include "plan/launch_plan.hpp"

namespace gl {
namespace {

constexpr auto kQuickTimeout = std::chrono::minutes(5);

std::string label(const RankResult& result) {
  return fmt::format("rank {} ({})", result.rank, result.host);
}

void print_indented(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) fmt::print("    {}\n", line);
}

std::string last_line(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  std::string last;
  while (std::getline(lines, line))
    if (!line.empty()) last = line;
  return last;
}

// Why a rank's command did not succeed, in one line.
std::string failure(const RankResult& result) {
  if (!result.error.empty()) return result.error;
  if (result.exit_code == 255)
    return fmt::format(
        "ssh could not run the command on {} (exit 255): unreachable, refused or "
        "host key not in known_hosts",
        result.host);
  return fmt::format("exit {}", result.exit_code);
}

bool has_nodes(const Profile& profile) {
  if (!profile.nodes.hosts.empty()) return true;
  report(
      Error{fmt::format("profile '{}' lists no hosts ('nodes.hosts', rank order): "
                        "--all-nodes needs them",
                        profile.name)});
  return false;
}

std::vector<std::vector<std::string>> same_for_every_rank(const Profile& profile,
                                                          const std::vector<std::string>& args) {
  return std::vector<std::vector<std::string>>(profile.nodes.hosts.size(), args);
}

// A rank's `--json` answer. ssh joins its stderr to stdout, so warnings may come before it: the
// document is the first one a line starts, read up to its end (what follows it is ignored).
std::optional<nlohmann::ordered_json> json_answer(const std::string& output) {
  for (size_t at = 0; at < output.size();) {
    const size_t end = output.find('\n', at);
    if (output[at] == '{' || output[at] == '[') {
      std::istringstream rest(output.substr(at));
      nlohmann::ordered_json answer;
      try {
        rest >> answer;
        return answer;
      } catch (const nlohmann::json::exception&) {
        // not this line: a log line that happens to start with a bracket
      }
    }
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return std::nullopt;
}

// Every rank's answer to `args_per_rank` (commands that print JSON), as {"rank", "host", ...}
// with the answer's own members (an object) or under "answer" (anything else), or "error" where
// a rank gave none. `answered` exit codes count as answers (e.g. 1: a refusal, still JSON).
struct RankAnswers {
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  bool all_answered = true;
};
RankAnswers json_from_every_rank(const Profile& profile, const AllNodesOptions& options,
                                 const std::vector<std::vector<std::string>>& args_per_rank,
                                 const std::vector<int>& answered) {
  RankAnswers answers;
  for (const auto& result :
       run_on_all_ranks(profile.nodes, options.ssh, args_per_rank, kQuickTimeout)) {
    nlohmann::ordered_json entry{{"rank", result.rank}, {"host", result.host}};
    std::optional<nlohmann::ordered_json> answer;
    if (result.error.empty() && std::ranges::find(answered, result.exit_code) != answered.end())
      answer = json_answer(result.output);
    if (!answer) {
      const std::string said = last_line(result.output);
      entry["error"] = said.empty() ? failure(result) : failure(result) + ": " + said;
      answers.all_answered = false;
    } else if (answer->is_object()) {
      for (const auto& [key, value] : answer->items()) entry[key] = value;
    } else {
      entry["answer"] = *answer;
    }
    answers.ranks.push_back(std::move(entry));
  }
  return answers;
}

int start_every_rank(const Profile& profile, const AllNodesOptions& options) {
  const auto ranks = profile.nodes.hosts.size();
  // Every rank at once: a multi-node engine serves only once all ranks have joined.
  std::vector<std::vector<std::string>> ups;
  for (size_t rank = 0; rank < ranks; ++rank) {
    std::vector<std::string> args{"up", profile.name, "--node-rank", std::to_string(rank)};
    if (options.force) args.push_back("--force");
    if (options.no_rollback) args.push_back("--no-rollback");
    ups.push_back(std::move(args));
  }
  fmt::print("starting '{}' on {} node(s), dist_init_addr {}\n", profile.name, ranks,
             profile.parallelism.dist_init_addr.value_or("(none)"));
  std::fflush(stdout);
  const auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(
      profile.server.ready_timeout + std::chrono::minutes(5));
  auto results = run_on_all_ranks(profile.nodes, options.ssh, ups, limit);
  size_t failed = 0;
  for (const auto& result : results) {
    if (result.ok()) {
      fmt::print("  {}: {}\n", label(result),
                 last_line(result.output).empty() ? std::string("up") : last_line(result.output));
      continue;
    }
    ++failed;
    fmt::print("  {}: FAILED: {}\n", label(result), failure(result));
    print_indented(result.output);
  }
  if (failed) {
    logging::error(fmt::format("Failed to bring up '{}': {} of {} node(s) failed (above).",
                               profile.name, failed, ranks));
    return 1;
  }
  // Each rank's `up` returned once its unit said READY=1: health 200 where the rank serves, its
  // rendezvous with rank 0 where it runs headless (engines/engine_argv rank_role).
  size_t headless = 0;
  for (size_t rank = 0; rank < ranks; ++rank)
    if (rank_role(profile, static_cast<long long>(rank)) == RankRole::headless) ++headless;
  if (headless == 0)
    fmt::print("ready: '{}' serves on all {} node(s)\n", profile.name, ranks);
  else
    fmt::print("ready: '{}' serves on rank 0 ({}); {} headless rank(s) joined it\n", profile.name,
               profile.nodes.hosts.front(), headless);
  return 0;
}

// How long a rank tries to reach rank 0's rendezvous (rendezvous-probe --within); the ssh
// call around it gets more.
constexpr int kReachSeconds = 10;
constexpr auto kReachCallLimit = std::chrono::seconds(kReachSeconds + 30);

// Every rank's TCP path to rank 0's rendezvous port, tested at once: rank 0 listens, the others
// connect. False (said why, naming the ranks) when one failed.
bool ranks_reach_rendezvous(const Profile& profile, const AllNodesOptions& options) {
  const auto rendezvous = group_rendezvous(profile);
  if (!rendezvous) return true;
  const auto ranks = profile.nodes.hosts.size();
  std::vector<std::vector<std::string>> probes;
  for (size_t rank = 0; rank < ranks; ++rank)
    probes.push_back({"rendezvous-probe", profile.name, "--node-rank", std::to_string(rank),
                      "--within", std::to_string(kReachSeconds)});
  const std::string address = rendezvous_text(*rendezvous);
  fmt::print("testing rank 0's rendezvous {} from every rank\n", address);
  std::fflush(stdout);
  auto results = run_on_all_ranks(profile.nodes, options.ssh, probes, kReachCallLimit);
  std::vector<std::string> failed;
  for (const auto& result : results) {
    const std::string said = last_line(result.output);
    if (result.ok()) {
      fmt::print("  {}: {}\n", label(result), said);
      continue;
    }
    failed.push_back(label(result));
    // The probe's own line when it ran; otherwise why it did not.
    fmt::print(
        "  {}: FAILED: {}\n", label(result),
        result.error.empty() && result.exit_code == 1 && !said.empty() ? said : failure(result));
    if (!(result.error.empty() && result.exit_code == 1)) print_indented(result.output);
  }
  std::fflush(stdout);
  if (failed.empty()) return true;
  if (!results.empty() && !results.front().ok())
    fmt::print(
        "  (a running group holds the port on rank 0 itself: `restart --all-nodes` stops every "
        "rank before it tests)\n");
  logging::error(
      fmt::format("Refusing to start '{}': {} did not pass the rendezvous test of {} "
                  "(above); the engines would wait for each other there until their "
                  "timeout.",
                  profile.name, fmt::join(failed, ", "), address));
  return false;
}

// The JSON document in a rank's `cache PROFILE --json` output (ssh joins stderr to it, so a
// warning may come first).
Result<std::vector<CacheDigest>> rank_digests(const std::string& output) {
  const auto start = output.find("\n{");
  const std::string text =
      output.starts_with("{") || start == std::string::npos ? output : output.substr(start + 1);
  auto json = nlohmann::ordered_json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object() || !json.contains("caches"))
    return failf("Failed to read its cache report: not the JSON of `cache --json`");
  return parse_cache_digests(json["caches"]);
}

// Each cache the same on every rank, or cleared on all of them: no rank starts with a cache
// another lacks (caches/cache_agreement). False (said why, naming the rank) when a rank could not
// be read or cleared.
bool ranks_agree_on_caches(const Profile& profile, const AllNodesOptions& options) {
  const auto ranks = profile.nodes.hosts.size();
  fmt::print("comparing the caches of '{}' on {} node(s)\n", profile.name, ranks);
  std::fflush(stdout);
  auto results = run_on_all_ranks(profile.nodes, options.ssh,
                                  same_for_every_rank(profile, {"cache", profile.name, "--json"}),
                                  kQuickTimeout);
  std::vector<RankCaches> reports;
  std::vector<std::string> unread;
  for (const auto& result : results) {
    auto digests = result.ok() ? rank_digests(result.output)
                               : Result<std::vector<CacheDigest>>(failf("{}", failure(result)));
    if (!digests) {
      unread.push_back(label(result));
      fmt::print("  {}: could not read its caches: {}\n", label(result), digests.error().message);
      print_indented(result.output);
      continue;
    }
    reports.push_back(RankCaches{result.rank, std::move(*digests)});
  }
  if (!unread.empty()) {
    logging::error(
        fmt::format("Refusing to start '{}': the caches of {} could not be read "
                    "(above), so the ranks may not start from the same caches.",
                    profile.name, fmt::join(unread, ", ")));
    return false;
  }
  auto verdicts = compare_rank_caches(reports);
  if (!verdicts) {
    logging::error(
        fmt::format("Refusing to start '{}': {}", profile.name, verdicts.error().message));
    return false;
  }
  std::vector<std::string> differing;
  for (const auto& verdict : *verdicts)
    if (verdict.clear) differing.push_back(verdict.name);
  // The caches no rank has a file in, on one line: most of them, on most starts.
  std::vector<std::string> empty;
  for (const auto& verdict : *verdicts)
    if (verdict.empty) empty.push_back(verdict.name);
  const auto print_empty = [&] {
    if (!empty.empty()) fmt::print("  {}: empty on all {} ranks\n", fmt::join(empty, ", "), ranks);
  };
  if (differing.empty()) {
    for (const auto& verdict : *verdicts)
      if (!verdict.empty) fmt::print("  {}: {}\n", verdict.name, verdict.why);
    print_empty();
    fmt::print("caches agree on all {} ranks: nothing cleared\n", ranks);
    std::fflush(stdout);
    return true;
  }
  std::vector<std::string> clear{"cache", "clear", profile.name};
  clear.insert(clear.end(), differing.begin(), differing.end());
  auto cleared = run_on_all_ranks(profile.nodes, options.ssh, same_for_every_rank(profile, clear),
                                  kQuickTimeout);
  std::vector<std::string> not_cleared;
  for (const auto& result : cleared)
    if (!result.ok()) not_cleared.push_back(label(result));
  for (const auto& verdict : *verdicts) {
    if (verdict.empty) continue;
    if (!verdict.clear)
      fmt::print("  {}: {}\n", verdict.name, verdict.why);
    else if (not_cleared.empty())
      fmt::print("  {}: {}; cleared on all {} ranks\n", verdict.name, verdict.why, ranks);
    else
      fmt::print("  {}: {}; NOT cleared on {}\n", verdict.name, verdict.why,
                 fmt::join(not_cleared, ", "));
  }
  print_empty();
  for (const auto& result : cleared)
    if (!result.ok()) {
      fmt::print("  {}: clearing failed: {}\n", label(result), failure(result));
      print_indented(result.output);
    }
  std::fflush(stdout);
  if (!not_cleared.empty()) {
    logging::error(
        fmt::format("Refusing to start '{}': the caches that differ could not be "
                    "cleared on {} (above).",
                    profile.name, fmt::join(not_cleared, ", ")));
    return false;
  }
  return true;
}

// What every rank must agree on before any starts: the rendezvous reachable from each, and the
// same caches on all.
bool ranks_agree(const Profile& profile, const AllNodesOptions& options) {
  return ranks_reach_rendezvous(profile, options) && ranks_agree_on_caches(profile, options);
}

}  // namespace

int up_all_nodes(const Profile& profile, const AllNodesOptions& options) {
  if (!has_nodes(profile)) return 2;
  const auto ranks = profile.nodes.hosts.size();

  // 1. The check on every node, before anything starts anywhere.
  fmt::print("checking '{}' on {} node(s)\n", profile.name, ranks);
  std::fflush(stdout);
  auto checks =
      run_on_all_ranks(profile.nodes, options.ssh,
                       same_for_every_rank(profile, {"check", profile.name}), kQuickTimeout);
  bool check_errors = false;
  bool unchecked = false;
  for (const auto& check : checks) {
    if (check.ok()) {
      fmt::print("  {}: check OK\n", label(check));
      continue;
    }
    if (check.error.empty() && check.exit_code == 1) {
      check_errors = true;
      fmt::print("  {}: check FAILED, the start would fail there\n", label(check));
    } else {
      unchecked = true;
      fmt::print("  {}: could not check: {}\n", label(check), failure(check));
    }
    print_indented(check.output);
  }
  std::fflush(stdout);
  if (unchecked) {
    logging::error(
        fmt::format("Refusing to start '{}': not every node could be checked.", profile.name));
    return 1;
  }
  if (check_errors && !options.force) {
    logging::error(fmt::format(
        "Refusing to start '{}': the check found errors on a node above. Fix them, or pass "
        "--force to start anyway.",
        profile.name));
    return 1;
  }

  // 2. What each rank's `up` would do. A group that runs unchanged everywhere is left alone; one
  // that runs anywhere while a rank would change stops on every rank first, because a multi-node
  // engine cannot take a rank back into a running group (and rank 0's engine holds the
  // rendezvous port the probe below needs).
  std::vector<std::vector<std::string>> dry_runs;
  for (size_t rank = 0; rank < ranks; ++rank)
    dry_runs.push_back({"up", profile.name, "--node-rank", std::to_string(rank), "--dry-run",
                        "--json", "--force"});
  const auto plans = json_from_every_rank(profile, options, dry_runs, {0, 1});
  if (!plans.all_answered) {
    for (const auto& rank : plans.ranks)
      if (rank.contains("error"))
        fmt::print("  rank {} ({}): could not tell what up would do: {}\n",
                   rank["rank"].get<long long>(), rank["host"].get<std::string>(),
                   rank["error"].get<std::string>());
    logging::error(fmt::format("Refusing to start '{}': not every node answered.", profile.name));
    return 1;
  }
  const auto action_of = [](const nlohmann::ordered_json& rank) {
    return rank.value("action", std::string("start"));
  };
  const bool all_unchanged =
      std::ranges::all_of(plans.ranks, [&](const auto& rank) { return action_of(rank) == "none"; });
  if (all_unchanged) {
    fmt::print("'{}' runs unchanged on all {} node(s): nothing to do\n", profile.name, ranks);
    return 0;
  }
  const bool any_running = std::ranges::any_of(
      plans.ranks, [&](const auto& rank) { return action_of(rank) != "start"; });
  if (any_running) {
    fmt::print(
        "'{}' changed while it runs: the group restarts together, every rank stopped "
        "first\n",
        profile.name);
    std::fflush(stdout);
    if (int stopped = down_all_nodes(profile, AllNodesOptions{options.ssh, false, false});
        stopped != 0) {
      logging::error(
          fmt::format("Failed to bring up '{}': not every rank stopped (above).", profile.name));
      return stopped;
    }
  }

  // 3. The ranks agree (rendezvous reachable, same caches), before anything starts anywhere.
  if (!ranks_agree(profile, options)) return 1;

  return start_every_rank(profile, options);
}

int up_all_nodes_dry_run(const Profile& profile, const AllNodesOptions& options, bool json) {
  if (!has_nodes(profile)) return 2;
  std::vector<std::vector<std::string>> args;
  for (size_t rank = 0; rank < profile.nodes.hosts.size(); ++rank) {
    args.push_back(
        {"up", profile.name, "--node-rank", std::to_string(rank), "--dry-run", "--json"});
    if (options.force) args.back().push_back("--force");
  }
  // Exit 1 is a rank whose check would refuse: it still answers.
  const auto answers = json_from_every_rank(profile, options, args, {0, 1});
  bool changed = false;
  bool refused = false;
  for (const auto& rank : answers.ranks) {
    if (rank.contains("error")) continue;
    changed = changed || rank.value("action", "none") != "none";
    refused = refused || rank.value("/check/refuse"_json_pointer, false);
  }
  if (json) {
    const nlohmann::ordered_json answer{
        {"profile", profile.name}, {"ranks", answers.ranks}, {"changed", changed}};
    fmt::print("{}\n", answer.dump(2));
  } else {
    fmt::print("dry run: nothing is changed on any of {} node(s)\n", answers.ranks.size());
    for (const auto& rank : answers.ranks) {
      const std::string where = fmt::format("rank {} ({})", rank["rank"].get<long long>(),
                                            rank["host"].get<std::string>());
      if (rank.contains("error")) {
        fmt::print("  {}: FAILED: {}\n", where, rank["error"].get<std::string>());
        continue;
      }
      fmt::print("  {}: action {}, unit {}, check {} error(s), {} warning(s){}\n", where,
                 rank.value("action", "?"),
                 rank.value("unit_changed", false) ? "changed" : "unchanged",
                 rank.value("/check/errors"_json_pointer, 0LL),
                 rank.value("/check/warnings"_json_pointer, 0LL),
                 rank.value("/check/refuse"_json_pointer, false) ? "; up would refuse" : "");
    }
  }
  if (!answers.all_answered) return 2;
  return refused ? 1 : 0;
}

int status_all_nodes_json(const Profile& profile, const AllNodesOptions& options) {
  if (!has_nodes(profile)) return 2;
  // Exit 3: not installed there (an empty list).
  auto answers = json_from_every_rank(
      profile, options, same_for_every_rank(profile, {"status", profile.name, "--json"}), {0, 3});
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
  fmt::print("{}\n", answer.dump(2));
  return answers.all_answered ? 0 : 1;
}

int status_all_nodes(const Profile& profile, const AllNodesOptions& options) {
  if (!has_nodes(profile)) return 2;
  auto results =
      run_on_all_ranks(profile.nodes, options.ssh,
                       same_for_every_rank(profile, {"status", profile.name}), kQuickTimeout);
  int code = 0;
  for (const auto& result : results) {
    fmt::print("{}:{}\n", label(result),
               result.ok() ? std::string() : " FAILED: " + failure(result));
    print_indented(result.output);
    if (!result.ok()) code = 1;
  }
  return code;
}

int down_all_nodes(const Profile& profile, const AllNodesOptions& options) {
  if (!has_nodes(profile)) return 2;
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
      std::chrono::duration_cast<std::chrono::milliseconds>(kQuickTimeout + stop_timeout(profile));
  if (any_headless) results = run_on_all_ranks(profile.nodes, options.ssh, headless, limit);
  auto rest = run_on_all_ranks(profile.nodes, options.ssh, serving, limit);
  if (results.empty()) results = rest;
  for (size_t rank = 0; rank < results.size() && rank < rest.size(); ++rank)
    if (!rest[rank].skipped) results[rank] = rest[rank];
  int code = 0;
  for (const auto& result : results) {
    fmt::print("  {}: {}\n", label(result),
               result.ok() ? last_line(result.output) : "FAILED: " + failure(result));
    if (!result.ok()) {
      print_indented(result.output);
      code = 1;
    }
  }
  return code;
}

int restart_all_nodes(const Profile& profile, const AllNodesOptions& options) {
  if (!has_nodes(profile)) return 2;
  fmt::print("stopping every rank of '{}'\n", profile.name);
  std::fflush(stdout);
  if (int stopped = down_all_nodes(profile, AllNodesOptions{options.ssh, false, false});
      stopped != 0) {
    logging::error(
        fmt::format("Failed to restart '{}': not every rank stopped (above).", profile.name));
    return stopped;
  }
  if (!ranks_agree(profile, options)) return 1;
  return start_every_rank(profile, AllNodesOptions{options.ssh, false, false});
}

}  // namespace gl
