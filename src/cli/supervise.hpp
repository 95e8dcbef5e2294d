// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `run`, `restart` and `status` share with the supervision commands.

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "profile/profile.hpp"
#include "supervise/start_timeline.hpp"
#include "util/error.hpp"

namespace gl {

struct CliContext;

struct SupervisedProfile {
  RestartSettings restart;  // defaults when there is no snapshot
  EngineKind kind = EngineKind::command;
  NodesSettings nodes;              // hosts in rank order when the profile spans several nodes
  ParallelismSettings parallelism;  // the engine's defaults depend on tp and pp
  bool loaded = false;
};

int64_t now_usec();
// What the supervisor reads from the installed profile (profile/installed_snapshot); defaults
// when there is none (nullptr).
SupervisedProfile supervised_of(const Profile* installed);
// load_installed_profile(name), then supervised_of: defaults when it is missing or refused.
SupervisedProfile load_supervised(const std::string& name);
void add_supervise_commands(CLI::App& app, CliContext& context);
// A start's phases as `status --json` and `events --json` show them.
nlohmann::ordered_json start_timeline_json(const StartTimeline& timeline);
// `peer-failed`: what a rank does when another rank of its group failed (cli/group_restart.cpp).
void add_group_commands(CLI::App& app, CliContext& context);

}  // namespace gl
