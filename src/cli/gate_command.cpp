// SPDX-License-Identifier: Apache-2.0
// `gpulaunch gate record NAME` and `gpulaunch gate check NAME`: the upgrade gate of the running
// engine, recorded as what a later change must still answer, or asked again now.

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/command_preamble.hpp"
#include "cli/context.hpp"
#include "cli/profile_lookup.hpp"
#include "cli/upgrade_gate.hpp"
#include "facts/node_fs.hpp"
#include "log/logger.hpp"
#include "plan/node_launch.hpp"
#include "profile/validate.hpp"
#include "supervise/upgrade_gate.hpp"
#include "util/timekeeper.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

struct GateOptions : ProfileArgs {
  bool json = false;
};

struct Loaded {
  Profile profile;
  LaunchPlan plan;
  std::optional<std::string> engine_version;
};

Result<Loaded> load(const CliContext& context, const GateOptions& options) {
  GL_TRY(auto merged, load_merged_or_installed(context, options.profile));
  GL_TRY(auto profile, validate_profile(merged));
  GL_TRY_VOID(check_node_rank(profile, options.node_rank));
  // The plan of the unit that serves (plan/node_launch), as `up` rendered it.
  NodePlan node = node_launch_plan(profile, options.node_rank, NodeFs());
  for (const auto& warning : node.launch.warnings) logging::warning(warning);
  auto engine_version = node.launch.options.engine_version;
  return Loaded{std::move(profile), std::move(node.plan), std::move(engine_version)};
}

int record(const CliContext& context, const GateOptions& options) {
  auto loaded = load(context, options);
  if (!loaded) return report(loaded.error(), 2);
  if (auto applies = gate_applies(loaded->profile, loaded->plan); !applies)
    return report(applies.error(), 2);
  auto engine = running_gate_engine(loaded->profile, loaded->plan);
  GateRecordFile records = GateRecordFile::of(loaded->profile.name);
  auto recorded = record_gate(loaded->profile.gate, records, *engine,
                              system_timekeeper().now_usec(), loaded->engine_version.value_or(""));
  if (!recorded) return report(recorded.error(), 2);
  if (options.json) {
    fmt::print("{}\n", nlohmann::ordered_json{{"profile", loaded->profile.name},
                                              {"file", records.path().string()},
                                              {"record", gate_record_json(*recorded)}}
                           .dump(2));
    return 0;
  }
  print_measurement(recorded->measured);
  fmt::print("recorded the gate of '{}' into {}\n", loaded->profile.name, records.path().string());
  return 0;
}

int check(const CliContext& context, const GateOptions& options) {
  auto loaded = load(context, options);
  if (!loaded) return report(loaded.error(), 2);
  auto checked = check_running_gate(loaded->profile, loaded->plan);
  if (!checked) return report(checked.error(), 2);
  if (options.json) {
    nlohmann::ordered_json out{{"profile", loaded->profile.name}};
    out.update(gate_check_json(*checked));
    fmt::print("{}\n", out.dump(2));
    return gate_exit_code(*checked);
  }
  return say_gate_check(loaded->profile, *checked);
}

}  // namespace

void add_gate_command(CLI::App& app, CliContext& context) {
  auto* gate = app.add_subcommand(
      "gate", "Upgrade gate: record the running engine's answers and throughput, or check them");
  gate->require_subcommand(1);
  static GateOptions options;
  auto add = [&](CLI::App* command) {
    add_profile_args(
        command, options,
        {.node_rank_help = "Rank of this node (a multi-node group gates through rank 0)"});
    command->add_flag("--json", options.json, "Machine-readable output");
  };
  auto* record_command = gate->add_subcommand(
      "record", "Ask the running engine the [gate] prompts and load; keep it as the record");
  add(record_command);
  record_command->callback([&context] { context.exit_code = record(context, options); });
  auto* check_command = gate->add_subcommand(
      "check", "Ask the running engine again; exit 1 when it differs from the record");
  add(check_command);
  check_command->callback([&context] { context.exit_code = check(context, options); });
}

}  // namespace gl
