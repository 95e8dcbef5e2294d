// SPDX-License-Identifier: Apache-2.0
// gpulaunch: run LLM inference servers as systemd services.

#include <exception>

#include <fmt/core.h>

#include "cli/all_nodes.hpp"
#include "cli/command_groups.hpp"
#include "cli/command_names.hpp"
#include "cli/context.hpp"
#include "cli/exit_status.hpp"
#include "cli/metrics.hpp"
#include "cli/supervise.hpp"
#include "gpulaunch_version.hpp"

int main(int argc, char** argv) {
  gl::CliContext context;
  CLI::App app{"gpulaunch: run LLM inference servers as hardened systemd services", "gpulaunch"};
  app.set_version_flag("--version", std::string("gpulaunch ") + GPULAUNCH_VERSION);
  app.add_option("-P,--profiles-dir", context.extra_profile_dirs,
                 "Directory searched for profiles before the default search path");
  static bool verbose = false, quiet = false;
  auto* verbose_flag =
      app.add_flag("-v,--verbose", verbose, "Also print debug lines of gpulaunch's own");
  app.add_flag("-q,--quiet", quiet, "Print only warnings and errors of gpulaunch's own")
      ->excludes(verbose_flag);
  // Before any command runs: its lines go through the log at this threshold.
  app.parse_complete_callback([&context] {
    context.log_threshold = verbose ? gl::logging::Level::debug
                            : quiet ? gl::logging::Level::warning
                                    : gl::logging::Level::info;
    gl::logging::configure({context.log_threshold, gl::logging::Stream::err, ""});
  });
  app.require_subcommand(1);
  // Registered in the order --help shows them (cli/command_groups: lifecycle, inspect, fleet).
  gl::add_up_command(app, context);
  gl::add_down_command(app, context);
  gl::add_status_command(app, context);
  gl::add_logs_command(app, context);
  gl::add_supervise_commands(app, context);
  gl::add_exec_command(app, context);
  gl::add_warm_command(app, context);
  gl::add_list_command(app, context);
  gl::add_show_command(app, context);
  gl::add_check_command(app, context);
  gl::add_render_command(app, context);
  gl::add_env_command(app, context);
  gl::add_facts_command(app, context);
  gl::add_diff_command(app, context);
  gl::add_verify_command(app, context);
  gl::add_lock_command(app, context);
  gl::add_init_command(app, context);
  gl::add_cache_command(app, context);
  gl::add_gate_command(app, context);
  gl::add_metrics_command(app, context);
  gl::add_run_command(app, context);
  gl::add_prepare_caches_command(app, context);
  gl::add_nvidia_devices_command(app, context);
  gl::add_group_commands(app, context);
  gl::add_release_gpus_command(app, context);
  gl::add_rendezvous_probe_command(app, context);
  gl::add_man_command(app, context);
  gl::add_catalog_command(app, context);
  gl::group_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help and --version: CLI11 prints them, and they succeed.
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(error);
    // A command word that names no command is named, with the closest one.
    if (auto unknown = gl::unknown_command(app, std::vector<std::string>(argv + 1, argv + argc))) {
      gl::logging::error(fmt::format("gpulaunch: {}", *unknown));
      return gl::kExitUsage;
    }
    // Every other parse error is a usage error, one line and exit 2 (not CLI11's 104-109): a
    // value no command can use (a profile name that is not one) as the check worded it, an
    // unknown option or a missing or bad value with where the usage is.
    if (dynamic_cast<const CLI::ValidationError*>(&error) != nullptr)
      gl::logging::error(error.what());
    else
      gl::logging::error(fmt::format("gpulaunch: {} (see 'gpulaunch --help')", error.what()));
    return gl::kExitUsage;
  } catch (const std::exception& error) {
    // Library code returns its errors; anything thrown is a bug, reported rather than a crash.
    gl::logging::error(fmt::format("gpulaunch: internal error: {}", error.what()));
    return gl::kExitInternal;
  }
  return context.exit_code;
}
