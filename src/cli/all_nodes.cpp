// SPDX-License-Identifier: Apache-2.0
#include "cli/all_nodes.hpp"

#include <algorithm>
#include <optional>
#include <sstream>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/context.hpp"
#include "engines/engine_argv.hpp"
#include "group/remote.hpp"
#include "log/logger.hpp"

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
  if (any_headless) results = run_on_all_ranks(profile.nodes, options.ssh, headless, kQuickTimeout);
  auto rest = run_on_all_ranks(profile.nodes, options.ssh, serving, kQuickTimeout);
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
  return start_every_rank(profile, AllNodesOptions{options.ssh, false, false});
}

}  // namespace gl
