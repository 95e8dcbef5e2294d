// SPDX-License-Identifier: Apache-2.0
#include <fmt/core.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "caches/cache_digest.hpp"
#include "caches/cache_records.hpp"
#include "caches/cache_state.hpp"
#include "caches/fingerprint_facts.hpp"
#include "caches/prepare.hpp"
#include "cli/context.hpp"
#include "plan/launch_plan.hpp"
#include "profile/validate.hpp"
#include "rules/node_probe.hpp"
#include "util/state_paths.hpp"
#include "util/terminal_text.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

std::string human_size(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, kUnits[unit]);
}

Result<LaunchPlan> plan_for(const CliContext& context, const std::string& name, Profile* out) {
  GL_TRY(auto profile, load_profile(context.profile_source(), name));
  auto plan = make_launch_plan(profile);
  *out = std::move(profile);
  return plan;
}

// Where root's state is kept: state_paths' place, or a test's (hidden --state-root).
std::string state_root{state_paths::kStateRoot};

int list_caches(const CliContext& context, const std::string& name) {
  Profile profile;
  auto plan = plan_for(context, name, &profile);
  if (!plan) return report(plan.error());
  auto state = inspect_caches(
      *plan,
      fingerprint_inputs(profile, *plan,
                         probe_node_for(profile, *plan, ShellEnvironment::current())),
      cache_records_directory(profile.name, state_root));
  if (!state) return report(state.error());
  fmt::print("cache root  {}\n", state->root);
  fmt::print("fingerprint {}", state->fingerprint);
  if (!state->stamped)
    fmt::print(" (not stamped yet)\n");
  else if (*state->stamped == state->fingerprint)
    fmt::print(" (stamped)\n");
  else
    fmt::print(" (stamped {}: {})\n", *state->stamped, state->change);
  size_t name_width = 4, path_width = 4;
  for (const auto& cache : state->caches) {
    name_width = std::max(name_width, cache.name.size());
    path_width = std::max(path_width, cache.path.size());
  }
  fmt::print("{:<{}}  {:<{}}  {:>10}  {:<7}  {}\n", "NAME", name_width, "PATH", path_width, "SIZE",
             "STATE", "KEYS ITSELF");
  for (const auto& cache : state->caches)
    fmt::print(
        "{:<{}}  {:<{}}  {:>10}  {:<7}  {}\n", cache.name, name_width, cache.path, path_width,
        cache.usage.exists && cache.state != CacheState::foreign ? human_size(cache.usage.bytes)
                                                                 : "-",
        cache_state_name(cache.state),
        cache.keys_itself ? std::string("yes")
        : cache.stale_on.empty()
            ? std::string("no")
            : fmt::format("no (stale on {})", fmt::join(cache.stale_on, ", ")));
  for (const auto& cache : state->caches)
    for (const auto& copy : cache.quarantined)
      fmt::print(
          "{}: quarantined copy {} (a crash's traceback ran through it; inspect, then "
          "remove it by hand)\n",
          cache.name, terminal_text(copy));
  for (const auto& cache : state->caches)
    if (cache.state == CacheState::foreign)
      fmt::print(
          "{}: '{}' was not created by gpulaunch and is outside the cache root: starts and "
          "clears refuse it\n",
          cache.name, cache.path);
  return 0;
}

// What `up --all-nodes` compares between ranks (caches/cache_agreement): each cache's fingerprint
// and content digest on this node, as JSON.
int digest_caches(const CliContext& context, const std::string& name) {
  Profile profile;
  auto plan = plan_for(context, name, &profile);
  if (!plan) return report(plan.error());
  const auto inputs = fingerprint_inputs(
      profile, *plan, probe_node_for(profile, *plan, ShellEnvironment::current()));
  auto digests = cache_digests(*plan, inputs, cache_records_directory(profile.name, state_root));
  if (!digests) return report(digests.error());
  nlohmann::ordered_json json;
  json["profile"] = profile.name;
  json["cache_root"] = plan->cache_root;
  json["fingerprint"] = fingerprint_hex(fingerprint_hash(inputs));
  json["caches"] = cache_digests_json(*digests);
  fmt::print("{}\n", json.dump(2));
  return 0;
}

int clear(const CliContext& context, const std::string& name,
          const std::vector<std::string>& names) {
  Profile profile;
  auto plan = plan_for(context, name, &profile);
  if (!plan) return report(plan.error());
  size_t count = 0;
  auto records = cache_records_directory(profile.name, state_root);
  auto removals = clear_caches(*plan, names, records, [&](const Removal& removal) {
    ++count;
    fmt::print("removed {} ({}): {}\n", terminal_text(removal.what), human_size(removal.bytes),
               terminal_text(removal.why));
  });
  if (!removals) return report(removals.error());
  if (count == 0) fmt::print("nothing to clear\n");
  return 0;
}

}  // namespace

void add_cache_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "cache", "List a profile's JIT caches with size and state, or clear them (cache clear)");
  static std::string name;
  command->add_option("profile", name, "Profile name or path to a .toml file")
      ->check(profile_argument_check());
  command->add_option("--state-root", state_root, "Where root keeps its state (tests)")->group("");
  static bool json = false;
  command->add_flag("--json", json,
                    "Print each cache's fingerprint and content digest as JSON (reads every "
                    "file of the caches)");
  auto* clear_command = command->add_subcommand("clear", "Empty a profile's JIT caches now");
  static std::string clear_name;
  static std::vector<std::string> cache_names;
  clear_command->add_option("profile", clear_name, "Profile name or path to a .toml file")
      ->required()
      ->check(profile_argument_check());
  clear_command->add_option("names", cache_names, "Caches to clear (default: all)");
  clear_command->add_option("--state-root", state_root, "Where root keeps its state (tests)")
      ->group("");
  clear_command->callback(
      [&context] { context.exit_code = clear(context, clear_name, cache_names); });
  command->callback([&context, clear_command] {
    if (clear_command->parsed()) return;
    if (name.empty()) {
      context.exit_code = report(Error{"gpulaunch cache: a profile is required"}, 2);
      return;
    }
    context.exit_code = json ? digest_caches(context, name) : list_caches(context, name);
  });
}

}  // namespace gl
