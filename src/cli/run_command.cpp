#include <algorithm>
#include <cstdio>

#include <fmt/core.h>

#include "cli/context.hpp"
#include "run/bridge.hpp"
#include "run/exit_status.hpp"
#include "util/duration.hpp"

namespace gl {

void add_run_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "run", "The service's main process (ExecStart=): start the engine, report readiness");
  command->group("");  // units call it; people use `up`
  static std::string profile, engine, health_url;
  static long long ready_timeout = 1200;
  static long long progress_grace = 0;
  static std::vector<std::string> argv;
  command->add_option("--profile", profile, "Profile this engine belongs to")->required();
  command->add_option("--engine", engine, "Engine kind");
  command->add_option("--health-url", health_url, "URL answering 200 once serving")->required();
  command->add_option("--ready-timeout", ready_timeout, "Seconds to wait for health 200")
      ->check(CLI::Range(1LL, 86400LL));
  command->add_option("--progress-grace", progress_grace,
                      "Seconds by which loading progress pushes the ready deadline back "
                      "(default: the ready timeout, at most 300)")
      ->check(CLI::Range(1LL, 86400LL));
  command->add_option("engine_argv", argv, "The engine's command line, after --")->required();
  command->callback([&context] {
    BridgeOptions options;
    options.health_url = health_url;
    options.readiness.ready_timeout = Seconds{ready_timeout};
    options.readiness.progress_grace =
        Seconds{progress_grace > 0 ? progress_grace : std::min(300LL, ready_timeout)};
    options.argv = argv;
    auto notifier = systemd_notifier();
    // Output goes to the journal through stdout; flush per line so lines keep their order.
    std::function<void(std::string_view)> print = [](std::string_view line) {
      fmt::print("{}\n", line);
      std::fflush(stdout);
    };
    context.exit_code = run_bridge(options, *notifier, print);
  });
}

}  // namespace gl
