#pragma once
// What every subcommand shares: where profiles are looked up. The CLI layer is the only one that
// prints; library calls return errors, the commands print them once.

#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "profile/loader.hpp"

namespace gl {

struct CliContext {
  std::vector<std::string> extra_profile_dirs;  // --profiles-dir, searched first
  int exit_code = 0;

  DirectorySource profile_source() const;
};

void add_list_command(CLI::App& app, CliContext& context);
void add_show_command(CLI::App& app, CliContext& context);
void add_render_command(CLI::App& app, CliContext& context);
void add_run_command(CLI::App& app, CliContext& context);
void add_up_command(CLI::App& app, CliContext& context);
void add_down_command(CLI::App& app, CliContext& context);
void add_status_command(CLI::App& app, CliContext& context);
void add_logs_command(CLI::App& app, CliContext& context);
void add_facts_command(CLI::App& app, CliContext& context);
void add_check_command(CLI::App& app, CliContext& context);
void add_cache_command(CLI::App& app, CliContext& context);
void add_prepare_caches_command(CLI::App& app, CliContext& context);
void add_lock_command(CLI::App& app, CliContext& context);
void add_verify_command(CLI::App& app, CliContext& context);
void add_diff_command(CLI::App& app, CliContext& context);
// Hidden build step: prints gpulaunch(1), read from every subcommand on `app`, or
// gpulaunch.toml(5).
void add_man_command(CLI::App& app, CliContext& context);

// Prints an error line to stderr and returns the exit code for it.
int report(const Error& error, int exit_code = 1);

}  // namespace gl
