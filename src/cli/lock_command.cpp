// SPDX-License-Identifier: Apache-2.0
// `gpulaunch lock PROFILE`, `gpulaunch verify LOCK`, and the drift check `up --locked` shares.

#include <algorithm>
#include <optional>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "caches/cache_digest.hpp"
#include "caches/fingerprint_facts.hpp"
#include "cli/command_preamble.hpp"
#include "cli/context.hpp"
#include "cli/locked.hpp"
#include "cli/profile_lookup.hpp"
#include "cli/upgrade_gate.hpp"
#include "facts/gather.hpp"
#include "facts/python_env.hpp"
#include "lock/drift.hpp"
#include "log/logger.hpp"
#include "profile/validate.hpp"
#include "rules/check.hpp"
#include "util/atomic_file.hpp"
#include "util/state_paths.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

constexpr int kVerifyOk = 0;
constexpr int kVerifyDrift = 1;
constexpr int kVerifyCouldNotRun = 2;

struct NodeOptions {
  std::string root = "/";
  std::string facts_file;
};

void add_node_options(CLI::App* command, NodeOptions& options) {
  command->add_option(
      "--root", options.root,
      "Probe the filesystem (toolkits, venv, model) under this directory instead of /");
  command->add_option("--facts", options.facts_file,
                      "Node facts recorded by `gpulaunch facts --json` instead of probing");
}

Result<Facts> node_facts(const Profile& profile, const LaunchPlan& plan,
                         const NodeOptions& options) {
  if (!options.facts_file.empty()) return load_facts_file(options.facts_file);
  auto request = facts_request(profile, plan, ShellEnvironment::current());
  request.probe_ports = false;  // a lock does not record ports
  return gather_facts(NodeFs(options.root), request);
}

// The caches' fingerprints and content digests, when the lock describes this node (not another
// root or another node's facts, whose caches are not here). Reads every cache file (as root,
// confined: caches/cache_digest).
Result<void> add_caches(LockBuild& build, const Profile& profile, const LaunchPlan& plan,
                        const Facts& facts, const NodeOptions& options) {
  if (options.root != "/" || !options.facts_file.empty()) return {};
  GL_TRY(auto digests, cache_digests(plan, fingerprint_inputs(profile, plan, facts),
                                     state_paths::cache_stamp_directory(profile.name)));
  build.lock["caches"] = cache_digests_json(digests);
  // The upgrade gate's record, where `gate record` made one: what the deployment answered.
  GL_TRY(auto gate, GateRecordFile::of(profile.name).load());
  if (gate) build.lock["gate"] = gate_record_json(*gate);
  return {};
}

struct LoadedProfile {
  MergedProfile merged;
  Profile profile;
};

Result<LoadedProfile> load(const CliContext& context, const std::string& name_or_path) {
  GL_TRY(auto merged, load_merged_or_installed(context, name_or_path));
  GL_TRY(auto profile, validate_profile(merged));
  return LoadedProfile{std::move(merged), std::move(profile)};
}

int lock(const CliContext& context, const std::string& name, const std::string& output,
         long long node_rank, const NodeOptions& options, const std::string& cache_archive) {
  auto loaded = load(context, name);
  if (!loaded) return report(loaded.error(), 2);
  if (auto rank = check_node_rank(loaded->profile, node_rank); !rank)
    return report(rank.error(), 2);
  auto facts = node_facts(loaded->profile, make_launch_plan(loaded->profile), options);
  if (!facts) return report(facts.error(), 2);
  // The launcher follows the engine version the facts hold, which the lock records too.
  const LaunchPlan plan = make_launch_plan(
      loaded->profile,
      LaunchOptions{node_rank, installed_engine_version(*facts, loaded->profile.engine.kind),
                    facts->has_infiniband(), facts->sandbox_node(), facts->socket_interface()});
  auto build = make_lock(loaded->merged, loaded->profile, plan, *facts, NodeFs(options.root));
  if (auto added = add_caches(build, loaded->profile, plan, *facts, options); !added)
    return report(added.error(), 2);
  if (!cache_archive.empty())
    if (auto added = add_cache_archive(build.lock, cache_archive); !added)
      return report(added.error(), 2);
  if (!build.problems.empty()) {
    for (const auto& problem : build.problems) logging::error(problem);
    logging::error(fmt::format("Refusing to write a lock for '{}': it would not pin the above.",
                               loaded->profile.name));
    return 2;
  }
  const std::string text = lock_text(build.lock);
  if (output.empty() || output == "-") {
    fmt::print("{}", text);
    return 0;
  }
  if (auto written = write_file_atomically(output, text); !written)
    return report(written.error(), 2);
  fmt::print("locked '{}' on {} into {}\n", loaded->profile.name,
             options.facts_file.empty() ? "root " + options.root : "facts " + options.facts_file,
             output);
  return 0;
}

// `verify --json`: one object, the drift rows under the names `drift_table` gives its columns.
void print_verify_json(const std::string& lock_path, const std::string& profile,
                       const std::vector<FieldRow>& rows, const std::vector<KeyChange>& keys,
                       const std::vector<std::string>& notes,
                       const std::optional<GateCheck>& gate) {
  auto drifted = nlohmann::ordered_json::array();
  for (const auto& row : rows)
    drifted.push_back({{"field", row.key}, {"locked", row.a}, {"node", row.b}, {"why", row.why}});
  nlohmann::ordered_json answer{{"lock", lock_path},
                                {"profile", profile},
                                {"ok", rows.empty()},
                                {"drift", drifted},
                                {"profile_keys", key_changes_json(keys)},
                                {"notes", rows.empty() ? std::vector<std::string>{} : notes}};
  if (gate) answer["gate"] = gate_check_json(*gate);
  fmt::print("{}\n", answer.dump(2));
}

// `verify --gate`: the node against the lock, then the running engine against its gate record
// (the operator's asking: the gate's load reaches a serving engine only so).
int verify(const CliContext& context, const std::string& lock_path,
           const std::string& profile_override, const NodeOptions& options, bool json,
           const std::string& cache_archive, bool gate) {
  auto locked = load_lock_file(lock_path);
  if (!locked) return report(locked.error(), kVerifyCouldNotRun);
  std::string name = profile_override;
  if (name.empty()) {
    const auto& section = (*locked)["profile"];
    const std::string file = section.value("file", "");
    std::error_code error;
    name = !file.empty() && std::filesystem::is_regular_file(file, error)
               ? file
               : section.value("name", "");
  }
  auto loaded = load(context, name);
  if (!loaded) return report(loaded.error(), kVerifyCouldNotRun);
  const long long rank = (*locked)["unit"].value("node_rank", 0LL);
  auto facts = node_facts(loaded->profile, make_launch_plan(loaded->profile), options);
  if (!facts) return report(facts.error(), kVerifyCouldNotRun);
  const LaunchPlan plan = make_launch_plan(
      loaded->profile,
      LaunchOptions{rank, installed_engine_version(*facts, loaded->profile.engine.kind),
                    facts->has_infiniband(), facts->sandbox_node(), facts->socket_interface()});
  auto live = make_lock(loaded->merged, loaded->profile, plan, *facts, NodeFs(options.root));
  if (auto added = add_caches(live, loaded->profile, plan, *facts, options); !added)
    return report(added.error(), kVerifyCouldNotRun);
  if (!cache_archive.empty())
    if (auto added = add_cache_archive(live.lock, cache_archive); !added)
      return report(added.error(), kVerifyCouldNotRun);
  auto rows = drift(*locked, live.lock);
  const auto keys = profile_key_changes(*locked, live.lock);
  // The gate's outcome: printed first in text, a member of the answer in JSON.
  std::optional<GateCheck> gate_check;
  int gated = kVerifyOk;
  if (gate) {
    if (auto checked = check_running_gate(loaded->profile, plan); !checked) {
      gated = report(checked.error(), kVerifyCouldNotRun);
    } else {
      gate_check = std::move(*checked);
      gated = json ? gate_exit_code(*gate_check) : say_gate_check(loaded->profile, *gate_check);
    }
  }
  const auto notes = cache_notes(*locked, live.lock);
  const auto print_notes = [&notes] {
    for (const auto& note : notes)
      fmt::print("note: {} changed since the lock: {} -> {} ({})\n", note.key, note.a, note.b,
                 note.why);
  };
  if (json) {
    auto all_notes = live.problems;
    for (const auto& note : notes)
      all_notes.push_back(fmt::format("{} changed since the lock: {} -> {} ({})", note.key, note.a,
                                      note.b, note.why));
    print_verify_json(lock_path, loaded->profile.name, rows, keys, all_notes, gate_check);
    return std::max(gated, rows.empty() ? kVerifyOk : kVerifyDrift);
  }
  if (rows.empty()) {
    fmt::print("OK: this node matches {} (profile '{}')\n", lock_path, loaded->profile.name);
    print_notes();
    return gated;
  }
  fmt::print("DRIFT: {} field(s) differ from {} (profile '{}')\n\n{}", rows.size(), lock_path,
             loaded->profile.name, drift_table(rows));
  if (!keys.empty())
    fmt::print("\nprofile keys that differ (locked -> live):\n{}", key_changes_table(keys));
  for (const auto& problem : live.problems) fmt::print("note: {}\n", problem);
  print_notes();
  return std::max(gated, kVerifyDrift);
}

}  // namespace

Result<std::vector<FieldRow>> locked_drift(const std::string& lock_path,
                                           const MergedProfile& merged, const Profile& profile,
                                           const LaunchPlan& plan, const Facts& facts) {
  GL_TRY(auto locked, load_lock_file(lock_path));
  auto live = make_lock(merged, profile, plan, facts, NodeFs("/"));
  return drift(locked, live.lock);
}

void add_lock_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "lock", "Write a lockfile: merged profile, node facts, model identity, unit hash");
  static ProfileArgs args;
  static std::string output;
  static NodeOptions options;
  add_profile_args(command, args, {});
  command->add_option("-o,--output", output, "Write the lock to this file (default: stdout)");
  add_node_options(command, options);
  static std::string cache_archive;
  command->add_option("--cache-archive", cache_archive,
                      "Record the SHA-256 of this archive from `cache export`, the caches the "
                      "deployment is seeded from");
  command->callback([&context] {
    context.exit_code = lock(context, args.profile, output, args.node_rank, options, cache_archive);
  });
}

void add_verify_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "verify",
      "Compare this node with a lockfile: the fields that drifted and the profile's keys that "
      "changed; exit 1 on drift, 2 when it could not run");
  static std::string lock_path;
  static std::string profile;
  static NodeOptions options;
  static bool json = false;
  command->add_option("lock", lock_path, "Lockfile written by `gpulaunch lock`")->required();
  command->add_flag(
      "--json", json,
      "Machine-readable output: ok, the drift rows and the profile keys that changed");
  command
      ->add_option("--profile", profile,
                   "Profile to compare (default: the lock's file if present, else its name)")
      ->check(profile_argument_check());
  add_node_options(command, options);
  static std::string cache_archive;
  command->add_option("--cache-archive", cache_archive,
                      "Compare this cache archive with the one the lock names (drift when it is "
                      "another)");
  static bool gate = false;
  command->add_flag("--gate", gate,
                    "Also ask the running engine the profile's [gate] prompts and load, against "
                    "its gate record (exit 1 when it differs)");
  command->callback([&context] {
    context.exit_code = verify(context, lock_path, profile, options, json, cache_archive, gate);
  });
}

}  // namespace gl
