// SPDX-License-Identifier: Apache-2.0
#pragma once
// What every subcommand shares: where profiles are looked up. The CLI layer is the only one that
// prints; library calls return errors, the commands print them once.

#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "log/logger.hpp"
#include "profile/loader.hpp"

namespace gl {

struct CliContext {
  std::vector<std::string> extra_profile_dirs;  // --profiles-dir, searched first
  int exit_code = 0;
  // -v / -q: the threshold of gpulaunch's own lines (log/logger), for commands that set up
  // their own log (run, record-exit).
  logging::Level log_threshold = logging::Level::info;

  DirectorySource profile_source() const;
};

void add_list_command(CLI::App& app, CliContext& context);
void add_show_command(CLI::App& app, CliContext& context);
void add_render_command(CLI::App& app, CliContext& context);
// `env PROFILE`: the unit's environment (unit/unit_environment) as shell exports.
void add_env_command(CLI::App& app, CliContext& context);
// `warm PROFILE`: the model's weight files into the page cache (run/prefetch).
void add_warm_command(CLI::App& app, CliContext& context);
void add_run_command(CLI::App& app, CliContext& context);
void add_prepare_caches_command(CLI::App& app, CliContext& context);
void add_nvidia_devices_command(CLI::App& app, CliContext& context);
void add_up_command(CLI::App& app, CliContext& context);
void add_down_command(CLI::App& app, CliContext& context);
void add_status_command(CLI::App& app, CliContext& context);
void add_logs_command(CLI::App& app, CliContext& context);
void add_facts_command(CLI::App& app, CliContext& context);
void add_check_command(CLI::App& app, CliContext& context);
void add_release_gpus_command(CLI::App& app, CliContext& context);
void add_init_command(CLI::App& app, CliContext& context);
void add_cache_command(CLI::App& app, CliContext& context);
void add_lock_command(CLI::App& app, CliContext& context);
void add_verify_command(CLI::App& app, CliContext& context);
void add_gate_command(CLI::App& app, CliContext& context);
void add_diff_command(CLI::App& app, CliContext& context);
void add_exec_command(CLI::App& app, CliContext& context);
// Hidden build step: prints gpulaunch(1), read from every subcommand on `app`, or
// gpulaunch.toml(5).
void add_man_command(CLI::App& app, CliContext& context);
// Hidden build step: prints the journal catalog (catalog/journal_messages).
void add_catalog_command(CLI::App& app, CliContext& context);

// Checks on profile arguments, run while the command line is parsed (profile/profile_name.hpp's
// rule), so no command builds a unit name or a state path from an unchecked one. main() turns a
// failed check into one line on stderr and exit 2.
// A name only: commands that only look up a unit, its journal or its state.
const CLI::Validator& profile_name_check();
// A name, or a path to a NAME.toml file: commands that may read the profile.
const CLI::Validator& profile_argument_check();

// Logs an error line (stderr, or the journal where stderr is) and returns the exit code for it.
int report(const Error& error, int exit_code = 1);

}  // namespace gl
