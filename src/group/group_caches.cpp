// SPDX-License-Identifier: Apache-2.0
#include "group/group_caches.hpp"

#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "caches/cache_agreement.hpp"
#include "group/group_steps.hpp"
#include "group/rank_answers.hpp"

namespace gl {
namespace {

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

}  // namespace

bool ranks_agree_on_caches(const Profile& profile, RankRunner& runner, GroupOutput& output) {
  const auto ranks = profile.nodes.hosts.size();
  output.line(fmt::format("comparing the caches of '{}' on {} node(s)", profile.name, ranks));
  auto results =
      runner.run(same_for_every_rank(profile, {"cache", profile.name, "--json"}), kRankCallLimit);
  std::vector<RankCaches> reports;
  std::vector<std::string> unread;
  for (const auto& result : results) {
    auto digests = result.ok()
                       ? rank_digests(result.output)
                       : Result<std::vector<CacheDigest>>(failf("{}", rank_failure(result)));
    if (!digests) {
      unread.push_back(rank_label(result));
      output.line(fmt::format("  {}: could not read its caches: {}", rank_label(result),
                              digests.error().message));
      print_indented(output, result.output);
      continue;
    }
    reports.push_back(RankCaches{result.rank, std::move(*digests)});
  }
  if (!unread.empty()) {
    output.error(
        fmt::format("Refusing to start '{}': the caches of {} could not be read "
                    "(above), so the ranks may not start from the same caches.",
                    profile.name, fmt::join(unread, ", ")));
    return false;
  }
  auto verdicts = compare_rank_caches(reports);
  if (!verdicts) {
    output.error(fmt::format("Refusing to start '{}': {}", profile.name, verdicts.error().message));
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
    if (!empty.empty())
      output.line(fmt::format("  {}: empty on all {} ranks", fmt::join(empty, ", "), ranks));
  };
  if (differing.empty()) {
    for (const auto& verdict : *verdicts)
      if (!verdict.empty) output.line(fmt::format("  {}: {}", verdict.name, verdict.why));
    print_empty();
    output.line(fmt::format("caches agree on all {} ranks: nothing cleared", ranks));
    return true;
  }
  std::vector<std::string> clear{"cache", "clear", profile.name};
  clear.insert(clear.end(), differing.begin(), differing.end());
  auto cleared = runner.run(same_for_every_rank(profile, clear), kRankCallLimit);
  std::vector<std::string> not_cleared;
  for (const auto& result : cleared)
    if (!result.ok()) not_cleared.push_back(rank_label(result));
  for (const auto& verdict : *verdicts) {
    if (verdict.empty) continue;
    if (!verdict.clear)
      output.line(fmt::format("  {}: {}", verdict.name, verdict.why));
    else if (not_cleared.empty())
      output.line(
          fmt::format("  {}: {}; cleared on all {} ranks", verdict.name, verdict.why, ranks));
    else
      output.line(fmt::format("  {}: {}; NOT cleared on {}", verdict.name, verdict.why,
                              fmt::join(not_cleared, ", ")));
  }
  print_empty();
  for (const auto& result : cleared)
    if (!result.ok()) {
      output.line(
          fmt::format("  {}: clearing failed: {}", rank_label(result), rank_failure(result)));
      print_indented(output, result.output);
    }
  if (!not_cleared.empty()) {
    output.error(
        fmt::format("Refusing to start '{}': the caches that differ could not be "
                    "cleared on {} (above).",
                    profile.name, fmt::join(not_cleared, ", ")));
    return false;
  }
  return true;
}

}  // namespace gl
