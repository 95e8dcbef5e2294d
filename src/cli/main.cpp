// SPDX-License-Identifier: Apache-2.0
// gpulaunch: run LLM inference servers as systemd services.

#include <exception>

#include <fmt/core.h>

#include "cli/all_nodes.hpp"
#include "cli/context.hpp"
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
  gl::add_list_command(app, context);
  gl::add_show_command(app, context);
  gl::add_render_command(app, context);
  gl::add_env_command(app, context);
  gl::add_warm_command(app, context);
  gl::add_up_command(app, context);
  gl::add_down_command(app, context);
  gl::add_status_command(app, context);
  gl::add_logs_command(app, context);
  gl::add_run_command(app, context);
  gl::add_prepare_caches_command(app, context);
  gl::add_nvidia_devices_command(app, context);
  gl::add_supervise_commands(app, context);
  gl::add_group_commands(app, context);
  gl::add_facts_command(app, context);
  gl::add_check_command(app, context);
  gl::add_init_command(app, context);
  gl::add_cache_command(app, context);
  gl::add_rendezvous_probe_command(app, context);
  gl::add_lock_command(app, context);
  gl::add_verify_command(app, context);
  gl::add_gate_command(app, context);
  gl::add_diff_command(app, context);
  gl::add_metrics_command(app, context);
  gl::add_exec_command(app, context);
  gl::add_man_command(app, context);
  gl::add_catalog_command(app, context);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ValidationError& error) {
    // A value no command can use (a profile name that is not one): one line, "could not run".
    gl::logging::error(error.what());
    return 2;
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const std::exception& error) {
    // Library code returns its errors; anything thrown is a bug, reported rather than a crash.
    gl::logging::error(fmt::format("gpulaunch: internal error: {}", error.what()));
    return 70;
  }
  return context.exit_code;
}
