// SPDX-License-Identifier: Apache-2.0
#include "group/group_caches.hpp"

#include <algorithm>
#include <tuple>

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

// The commands that stream `caches` of `profile` from one rank into another: `cache export` to
// stdout there, `cache import` from stdin here, both the packaged gpulaunch run as root over ssh
// (nothing is written to disk between them, nothing in the archive is run).
std::vector<std::string> export_args(const Profile& profile,
                                     const std::vector<std::string>& caches) {
  std::vector<std::string> args{"cache", "export", profile.name};
  args.insert(args.end(), caches.begin(), caches.end());
  args.insert(args.end(), {"-o", "-"});
  return args;
}

// How long one rank may take to stream caches to another: gigabytes of kernels, over ssh.
constexpr auto kSeedCallLimit = std::chrono::minutes(30);

// One stream: the caches rank `from` seeds rank `to` with.
struct Seeding {
  long long from = 0;
  long long to = 0;
  std::vector<std::string> caches;
  bool ok = false;
};

std::string rank_text(const Profile& profile, long long rank) {
  return fmt::format("rank {} ({})", rank, profile.nodes.hosts.at(static_cast<size_t>(rank)));
}

// Each (source, target) pair's caches in one archive, pairs in rank order.
std::vector<Seeding> seedings(const std::vector<CacheVerdict>& verdicts) {
  std::vector<Seeding> all;
  for (const auto& verdict : verdicts) {
    if (!verdict.seed_from) continue;
    for (const auto to : verdict.seed_to) {
      auto same = std::ranges::find_if(
          all, [&](const Seeding& s) { return s.from == *verdict.seed_from && s.to == to; });
      if (same == all.end()) {
        all.push_back(Seeding{*verdict.seed_from, to, {}, false});
        same = all.end() - 1;
      }
      same->caches.push_back(verdict.name);
    }
  }
  std::ranges::sort(all, [](const Seeding& a, const Seeding& b) {
    return std::tie(a.from, a.to) < std::tie(b.from, b.to);
  });
  return all;
}

bool seeded(const std::vector<Seeding>& all, const CacheVerdict& verdict) {
  return std::ranges::all_of(all, [&](const Seeding& s) {
    return s.ok || std::ranges::find(s.caches, verdict.name) == s.caches.end();
  });
}

// "seeded rank 1 (b), rank 2 (c) from rank 0 (a)"
std::string seeded_text(const Profile& profile, const CacheVerdict& verdict) {
  std::vector<std::string> targets;
  for (const auto to : verdict.seed_to) targets.push_back(rank_text(profile, to));
  return fmt::format("seeded {} from {}", fmt::join(targets, ", "),
                     rank_text(profile, *verdict.seed_from));
}

// Every rank's caches, compared; nullopt (said why) when a rank's could not be read or a cache
// cannot be made to agree (a foreign one).
std::optional<std::vector<CacheVerdict>> read_rank_caches(const Profile& profile,
                                                          RankRunner& runner, GroupOutput& output) {
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
    return std::nullopt;
  }
  auto verdicts = compare_rank_caches(reports);
  if (!verdicts) {
    output.error(fmt::format("Refusing to start '{}': {}", profile.name, verdicts.error().message));
    return std::nullopt;
  }
  return std::move(*verdicts);
}

}  // namespace

bool ranks_agree_on_caches(const Profile& profile, RankRunner& runner, GroupOutput& output) {
  const auto ranks = profile.nodes.hosts.size();
  output.line(fmt::format("comparing the caches of '{}' on {} node(s)", profile.name, ranks));
  auto verdicts = read_rank_caches(profile, runner, output);
  if (!verdicts) return false;
  // The caches no rank has a file in, on one line: most of them, on most starts.
  std::vector<std::string> empty;
  for (const auto& verdict : *verdicts)
    if (verdict.empty) empty.push_back(verdict.name);
  const auto print_empty = [&] {
    if (!empty.empty())
      output.line(fmt::format("  {}: empty on all {} ranks", fmt::join(empty, ", "), ranks));
  };
  if (std::ranges::none_of(*verdicts,
                           [](const CacheVerdict& v) { return v.clear || v.seed_from; })) {
    for (const auto& verdict : *verdicts)
      if (!verdict.empty) output.line(fmt::format("  {}: {}", verdict.name, verdict.why));
    print_empty();
    output.line(fmt::format("caches agree on all {} ranks: nothing cleared", ranks));
    return true;
  }

  // 1. Seed: each target imports the source's archive, streamed over ssh. A target that cannot
  // be seeded (its import refused, ssh failed) leaves that cache differing: it is then cleared
  // on every rank below, as if no rank's had matched.
  auto streams = seedings(*verdicts);
  std::vector<std::string> seed_failures;
  for (auto& seeding : streams) {
    auto streamed = runner.stream(seeding.from, export_args(profile, seeding.caches), seeding.to,
                                  {"cache", "import", profile.name, "-"}, kSeedCallLimit);
    seeding.ok = streamed.ok();
    if (seeding.ok) continue;
    const RankResult& failed = streamed.source.ok() ? streamed.target : streamed.source;
    seed_failures.push_back(fmt::format(
        "  {} from {}: {} failed: {}", rank_label(streamed.target), rank_label(streamed.source),
        streamed.source.ok() ? "the import" : "the export", rank_failure(failed)));
    seed_failures.push_back(failed.output);
  }

  // 2. Clear, on every rank, what no rank's matched, and what could not be seeded.
  std::vector<std::string> differing;
  for (const auto& verdict : *verdicts)
    if (verdict.clear || (verdict.seed_from && !seeded(streams, verdict)))
      differing.push_back(verdict.name);
  std::vector<RankResult> cleared;
  std::vector<std::string> not_cleared;
  if (!differing.empty()) {
    std::vector<std::string> clear{"cache", "clear", profile.name};
    clear.insert(clear.end(), differing.begin(), differing.end());
    cleared = runner.run(same_for_every_rank(profile, clear), kRankCallLimit);
    for (const auto& result : cleared)
      if (!result.ok()) not_cleared.push_back(rank_label(result));
  }
  const std::string cleared_text =
      not_cleared.empty() ? fmt::format("cleared on all {} ranks", ranks)
                          : fmt::format("NOT cleared on {}", fmt::join(not_cleared, ", "));
  for (const auto& verdict : *verdicts) {
    if (verdict.empty) continue;
    if (verdict.seed_from && seeded(streams, verdict))
      output.line(
          fmt::format("  {}: {}; {}", verdict.name, verdict.why, seeded_text(profile, verdict)));
    else if (verdict.seed_from)
      output.line(fmt::format("  {}: {}; seeding from {} failed (below): {}", verdict.name,
                              verdict.why, rank_text(profile, *verdict.seed_from), cleared_text));
    else if (verdict.clear)
      output.line(fmt::format("  {}: {}; no rank's was compiled for facts every rank shares: {}",
                              verdict.name, verdict.why, cleared_text));
    else
      output.line(fmt::format("  {}: {}", verdict.name, verdict.why));
  }
  print_empty();
  for (size_t i = 0; i + 1 < seed_failures.size(); i += 2) {
    output.line(seed_failures[i]);
    print_indented(output, seed_failures[i + 1]);
  }
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
