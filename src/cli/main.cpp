// SPDX-License-Identifier: Apache-2.0
// gpulaunch: run LLM inference servers as systemd services.

#include <algorithm>
#include <array>
#include <exception>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "cli/all_nodes.hpp"
#include "cli/command_groups.hpp"
#include "cli/command_names.hpp"
#include "cli/context.hpp"
#include "cli/exit_status.hpp"
#include "cli/metrics.hpp"
#include "cli/supervise.hpp"
#include "gpulaunch_version.hpp"
#include "group/peer_notice.hpp"

namespace gl {
namespace {

using AddCommand = void (*)(CLI::App&, CliContext&);

struct CommandEntry {
  std::array<std::string_view, 3> words;  // the top-level words `add` creates; empty ones unused
  AddCommand add;
};

// Every top-level command, in the order --help shows them (cli/command_groups: lifecycle, inspect,
// fleet), with the words each adds.
const std::array kCommandTable{
    CommandEntry{{"up"}, add_up_command},
    CommandEntry{{"down", "restart"}, add_down_command},
    CommandEntry{{"status"}, add_status_command},
    CommandEntry{{"logs"}, add_logs_command},
    CommandEntry{{"record-exit", "record-start", "events"}, add_supervise_commands},
    CommandEntry{{"exec"}, add_exec_command},
    CommandEntry{{"warm"}, add_warm_command},
    CommandEntry{{"list"}, add_list_command},
    CommandEntry{{"show"}, add_show_command},
    CommandEntry{{"check"}, add_check_command},
    CommandEntry{{"render"}, add_render_command},
    CommandEntry{{"env"}, add_env_command},
    CommandEntry{{"facts"}, add_facts_command},
    CommandEntry{{"diff"}, add_diff_command},
    CommandEntry{{"verify"}, add_verify_command},
    CommandEntry{{"lock"}, add_lock_command},
    CommandEntry{{"init"}, add_init_command},
    CommandEntry{{"cache"}, add_cache_command},
    CommandEntry{{"gate"}, add_gate_command},
    CommandEntry{{"metrics"}, add_metrics_command},
    CommandEntry{{"run"}, add_run_command},
    CommandEntry{{"prepare-caches"}, add_prepare_caches_command},
    CommandEntry{{"nvidia-devices"}, add_nvidia_devices_command},
    CommandEntry{{kPeerFailedCommand}, add_group_commands},
    CommandEntry{{"release-gpus"}, add_release_gpus_command},
    CommandEntry{{"rendezvous-probe"}, add_rendezvous_probe_command},
    CommandEntry{{}, add_man_command},  // internal-man walks every command: built with them all
    CommandEntry{{"internal-catalog"}, add_catalog_command},
};

// The command word of a command line: the first word that is neither an option of gpulaunch's
// own nor the value of -P/--profiles-dir. Empty where there is none, or where --help or --version
// comes first (the overview lists every command).
std::string_view command_word(const std::vector<std::string_view>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "-P" || arg == "--profiles-dir") {
      ++i;
      continue;
    }
    if (arg == "--" || arg == "-h" || arg == "--help" || arg == "--version") return {};
    if (arg.size() > 1 && arg[0] == '-') continue;
    return arg;
  }
  return {};
}

bool has_subcommand(CLI::App& app, std::string_view word) {
  return !app.get_subcommands(
                 [word](const CLI::App* sub) { return sub->check_name(std::string(word)); })
              .empty();
}

// Only the command a command line names is built: CLI11 builds each command's options,
// validators and callbacks on the heap, and building all of them was about 400 KB of heap and a
// tenth of `check`'s time (bench/README.md, where check's time goes). --help, a word that names
// no command (did-you-mean needs them all) and internal-man build every command.
void add_commands(CLI::App& app, CliContext& context, const std::vector<std::string_view>& args) {
  // --version before any command word prints the version and needs no command at all.
  const auto version = std::find(args.begin(), args.end(), "--version");
  if (version != args.end() && command_word({args.begin(), version}).empty()) return;
  const std::string_view word = command_word(args);
  if (!word.empty()) {
    for (const CommandEntry& entry : kCommandTable) {
      if (std::find(entry.words.begin(), entry.words.end(), word) == entry.words.end()) continue;
      entry.add(app, context);
      if (has_subcommand(app, word)) {
        group_commands(app);
        return;
      }
      // A table that has drifted from what its function adds is only slower, never wrong.
      for (CLI::App* sub : app.get_subcommands({})) app.remove_subcommand(sub);
      break;
    }
  }
  for (const CommandEntry& entry : kCommandTable) entry.add(app, context);
  group_commands(app);
}

}  // namespace
}  // namespace gl

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
  gl::add_commands(app, context, std::vector<std::string_view>(argv + 1, argv + argc));
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
