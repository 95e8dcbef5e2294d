// SPDX-License-Identifier: Apache-2.0
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include <fmt/core.h>

#include "cli/context.hpp"
#include "cli/exit_status.hpp"
#include "cli/profile_lookup.hpp"
#include "cli/service_exec.hpp"
#include "engines/precompile_argv.hpp"
#include "plan/launch_plan.hpp"
#include "profile/profile_name.hpp"
#include "profile/validate.hpp"
#include "run/prefetch.hpp"
#include "run/prefetch_io.hpp"
#include "util/terminal_text.hpp"

namespace gl {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string progress_line(const PrefetchProgress& progress, double seconds) {
  return fmt::format(
      "warm: {} of {}, {}/{} file(s), {}/s", format_bytes(progress.bytes_done),
      format_bytes(progress.bytes_total), progress.files_done, progress.files_total,
      format_bytes(seconds > 0 ? static_cast<uint64_t>(progress.bytes_done / seconds) : 0));
}

// `warm --compile`: the engine's precompile step (catalog/precompile) as the service would run
// it, after root's cache upkeep, while the service is down.
int compile_in_service(const CliContext& context, const std::string& name_or_path,
                       std::optional<long long> timeout) {
  auto name = profile_name_of(name_or_path);
  if (!name) return report(name.error(), kServiceExecFailed);
  // An engine with no step, or a group, is refused from the profile as written, before anything
  // asks whether it is installed; the installed snapshot decides the command itself below.
  if (auto written = load_profile(context.profile_source(), name_or_path))
    if (auto step = precompile_argv(*written, {}, timeout); !step)
      return report(step.error(), kServiceExecFailed);
  ServiceExec request;
  request.what = "warm --compile";
  request.unit_word = "compile";
  request.command = [timeout](const Profile& profile, const LaunchOptions& options) {
    return precompile_argv(profile, options, timeout);
  };
  request.refuse_while_running = true;
  request.prepare_caches = true;
  return exec_in_service(*name, request);
}

}  // namespace

void add_warm_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "warm",
      "Read the model's weight files into the page cache, so the next start loads from memory; "
      "with --compile, build the engine's kernels into its caches instead");
  static std::string name;
  static unsigned threads = kPrefetchDefaultThreads;
  static bool compile = false;
  static std::optional<long long> compile_timeout;
  command->add_option("profile", name, "Profile name or path to a .toml file")
      ->required()
      ->check(profile_argument_check());
  auto* threads_option =
      command->add_option("--threads", threads, "Files (and pieces of large ones) read at once")
          ->check(CLI::Range(1U, kPrefetchMaxThreads));
  auto* compile_flag = command->add_flag(
      "--compile", compile,
      "Run the engine's precompile step (SGLang: sglang.compile_deep_gemm) as the installed "
      "service would, its user, sandbox and environment, while the service is down (root)");
  compile_flag->excludes(threads_option);
  command
      ->add_option("--compile-timeout", compile_timeout,
                   "Seconds the step waits for its own server (the engine's default otherwise)")
      ->check(CLI::Range(1LL, 7LL * 24 * 3600))
      ->needs(compile_flag);
  command->footer(
      "With --compile, the exit status is the step's, or 125 when gpulaunch could not run it.");
  command->callback([&context] {
    if (compile) {
      context.exit_code = compile_in_service(context, name, compile_timeout);
      return;
    }
    auto profile = load_profile_or_installed(context, name);
    if (!profile) {
      context.exit_code = report(profile.error(), kExitUsage);
      return;
    }
    // The hub cache the engine reads is the one in the unit's environment.
    const LaunchPlan plan = make_launch_plan(*profile);
    auto io = open_model_weights(profile->model.path, profile->model.revision, plan.environment);
    if (!io) {
      context.exit_code = report(io.error());
      return;
    }
    const PrefetchOptions options{threads, kPrefetchMemoryMargin};
    const PrefetchPlan decided = plan_prefetch(**io, options);
    const bool tty = ::isatty(STDERR_FILENO) == 1;
    const auto start = Clock::now();
    auto last = start;
    const PrefetchResult result =
        run_prefetch(**io, decided, options, [&](const PrefetchProgress& progress) {
          // Called once a piece (64 MiB): a line a second on a terminal, every 10 s otherwise.
          const auto now = Clock::now();
          if (now - last < (tty ? std::chrono::seconds{1} : std::chrono::seconds{10}) &&
              progress.files_done != progress.files_total)
            return;
          last = now;
          const std::string line = progress_line(progress, seconds_since(start));
          if (tty)
            fmt::print(stderr, "\r{}\033[K", line);
          else
            fmt::print(stderr, "{}\n", line);
          std::fflush(stderr);
        });
    if (tty && result.progress.files_total > 0) fmt::print(stderr, "\n");
    // Problems and the stop reason name the model's files: names its owner chose.
    for (const auto& problem : result.problems)
      fmt::print(stderr, "warning: {}\n", terminal_text(problem));
    if (auto stop = prefetch_stop_reason(**io, decided))
      fmt::print(stderr, "warm: {}\n", terminal_text(*stop));
    fmt::print("{}: {}\n", terminal_text(profile->model.path),
               prefetch_summary(result, seconds_since(start)));
  });
}

}  // namespace gl
