// SPDX-License-Identifier: Apache-2.0
#include "plan/run_settings.hpp"

#include <algorithm>
#include <charconv>
#include <span>

#include <fmt/core.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "profile/profile_name.hpp"
#include "profile/service_user.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// The longest any of run's durations may be: a day.
constexpr long long kMaxSeconds = 86400;

Result<Seconds> read_seconds(const std::string& text) {
  long long number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc{} || end != text.data() + text.size() || number < 1 ||
      number > kMaxSeconds)
    return failf("expected whole seconds from 1 to {}, got '{}'", kMaxSeconds, text);
  return Seconds{number};
}

std::optional<std::string> seconds_text(Seconds value) {
  return std::to_string(value.count());
}

// One of run's settings: its option, how the unit writes it (nullopt: the unit passes none, and
// `run` assumes the field's default) and how `run` reads it back. A flag has no value: write
// returns "" where it is set, and read is given "".
struct Row {
  std::string_view option;
  std::string_view help;
  bool flag = false;
  bool required = false;
  std::optional<std::string> (*write)(const RunSettings&);
  Result<void> (*read)(RunSettings&, const std::string&);
};

// Assigns a string field that has no other rule.
template <std::string RunSettings::*field>
Result<void> read_text(RunSettings& settings, const std::string& text) {
  settings.*field = text;
  return {};
}
template <std::string RunSettings::*field>
std::optional<std::string> write_text_if_set(const RunSettings& settings) {
  if ((settings.*field).empty()) return std::nullopt;
  return settings.*field;
}
template <Seconds RunSettings::*field>
Result<void> read_duration(RunSettings& settings, const std::string& text) {
  GL_TRY(settings.*field, read_seconds(text));
  return {};
}

// In the order the unit writes them (the goldens hold it).
const Row kRows[] = {
    {"--profile", "Profile this engine belongs to", false, true,
     [](const RunSettings& s) -> std::optional<std::string> { return s.profile; },
     [](RunSettings& s, const std::string& text) -> Result<void> {
       GL_TRY_VOID(check_profile_name(text));
       s.profile = text;
       return {};
     }},
    {"--snapshot", "The merged profile `up` wrote", false, false,
     write_text_if_set<&RunSettings::snapshot>, read_text<&RunSettings::snapshot>},
    {"--health-url", "URL answering 200 once serving", false, true,
     [](const RunSettings& s) -> std::optional<std::string> { return s.health_url; },
     read_text<&RunSettings::health_url>},
    {"--ready-timeout", "Seconds to wait for health 200", false, false,
     [](const RunSettings& s) { return seconds_text(s.ready_timeout); },
     read_duration<&RunSettings::ready_timeout>},
    {"--progress-grace",
     "Seconds by which loading progress pushes the ready deadline back (default: the ready "
     "timeout, at most 300)",
     false, false,
     [](const RunSettings& s) -> std::optional<std::string> {
       if (s.progress_grace.count() == 0) return std::nullopt;
       return seconds_text(s.progress_grace);
     },
     read_duration<&RunSettings::progress_grace>},
    {"--health-timeout", "Seconds one health answer may take (the engine's own bound and a margin)",
     false, false, [](const RunSettings& s) { return seconds_text(s.health_timeout); },
     read_duration<&RunSettings::health_timeout>},
    {kRunDrainTimeoutOption,
     "Seconds a stop lets the engine finish in-flight requests after SIGTERM", false, false,
     [](const RunSettings& s) { return seconds_text(s.drain_timeout); },
     read_duration<&RunSettings::drain_timeout>},
    {kRunEngineVersionOption, "The engine release the command line was built for", false, false,
     [](const RunSettings& s) { return s.engine_version; },
     [](RunSettings& s, const std::string& text) -> Result<void> {
       s.engine_version = text;
       return {};
     }},
    {kRunRendezvousOption,
     "A headless rank: HOST:PORT of rank 0 its engine connects to; ready and watched by that "
     "connection instead of --health-url",
     false, false,
     [](const RunSettings& s) -> std::optional<std::string> {
       if (!s.rendezvous) return std::nullopt;
       return rendezvous_text(*s.rendezvous);
     },
     [](RunSettings& s, const std::string& text) -> Result<void> {
       auto [host, port] = split_host_port(text);
       long long number = 0;
       const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
       if (host.empty() || error != std::errc{} || end != port.data() + port.size() || number < 1 ||
           number > 65535)
         return failf("invalid {} '{}': expected HOST:PORT", kRunRendezvousOption, text);
       const bool any_port = s.rendezvous && s.rendezvous->any_port;
       s.rendezvous = Rendezvous{host, number, any_port};
       return {};
     }},
    {kRunRendezvousAnyPortOption, "Any port on the rendezvous host counts", true, false,
     [](const RunSettings& s) -> std::optional<std::string> {
       if (!s.rendezvous || !s.rendezvous->any_port) return std::nullopt;
       return "";
     },
     [](RunSettings& s, const std::string&) -> Result<void> {
       // The rendezvous itself may come before or after this flag.
       if (!s.rendezvous) s.rendezvous = Rendezvous{};
       s.rendezvous->any_port = true;
       return {};
     }},
    {kRunLivenessOption,
     "How a serving engine proves forward progress: generate, metrics, health or off", false, false,
     [](const RunSettings& s) -> std::optional<std::string> {
       if (s.liveness == LivenessMode::health) return std::nullopt;
       return std::string(liveness_mode_name(s.liveness));
     },
     [](RunSettings& s, const std::string& text) -> Result<void> {
       auto mode = parse_liveness_mode(text);
       if (!mode)
         return failf("invalid {} '{}': expected one of {}", kRunLivenessOption, text,
                      fmt::join(liveness_mode_names(), ", "));
       s.liveness = *mode;
       return {};
     }},
    // The interval and timeout matter only where a stall can end the engine.
    {kRunLivenessIntervalOption, "Seconds between two liveness looks", false, false,
     [](const RunSettings& s) -> std::optional<std::string> {
       if (s.liveness != LivenessMode::generate && s.liveness != LivenessMode::metrics)
         return std::nullopt;
       return seconds_text(s.liveness_interval);
     },
     read_duration<&RunSettings::liveness_interval>},
    {kRunLivenessTimeoutOption, "Seconds without forward progress that make a stall", false, false,
     [](const RunSettings& s) -> std::optional<std::string> {
       if (s.liveness != LivenessMode::generate && s.liveness != LivenessMode::metrics)
         return std::nullopt;
       return seconds_text(s.liveness_timeout);
     },
     read_duration<&RunSettings::liveness_timeout>},
    {kRunLivenessProbeOption, "Path of the one-token generation probe (GET, or POST with the body)",
     false, false, write_text_if_set<&RunSettings::probe_path>,
     read_text<&RunSettings::probe_path>},
    {kRunLivenessProbeBodyOption, "JSON body of the generation probe: it is a POST", false, false,
     write_text_if_set<&RunSettings::probe_body>, read_text<&RunSettings::probe_body>},
    {kRunLivenessMetricsOption, "Path of the engine's metrics", false, false,
     write_text_if_set<&RunSettings::metrics_path>, read_text<&RunSettings::metrics_path>},
    {kRunLivenessMetricsFormatOption,
     "What the metrics path answers: prometheus or iteration-stats", false, false,
     [](const RunSettings& s) -> std::optional<std::string> {
       if (s.metrics_format == MetricsFormat::prometheus) return std::nullopt;
       return std::string(metrics_format_name(s.metrics_format));
     },
     [](RunSettings& s, const std::string& text) -> Result<void> {
       auto format = parse_metrics_format(text);
       if (!format)
         return failf("invalid {} '{}': expected prometheus or iteration-stats",
                      kRunLivenessMetricsFormatOption, text);
       s.metrics_format = *format;
       return {};
     }},
    {kRunLivenessInFlightOption,
     "Gauge of requests in flight (none: the metrics vouch for progress only)", false, false,
     write_text_if_set<&RunSettings::in_flight_metric>, read_text<&RunSettings::in_flight_metric>},
    {kRunLivenessTokensOption, "Counter that moves while tokens are generated", false, false,
     write_text_if_set<&RunSettings::tokens_metric>, read_text<&RunSettings::tokens_metric>},
    {kRunEngineOptionsFileOption, "The engine's options file, written before the engine starts",
     false, false, write_text_if_set<&RunSettings::engine_options_path>,
     read_text<&RunSettings::engine_options_path>},
    {kRunEngineOptionsTextOption, "What that file holds", false, false,
     [](const RunSettings& s) -> std::optional<std::string> {
       if (s.engine_options_path.empty()) return std::nullopt;
       return s.engine_options_text;
     },
     read_text<&RunSettings::engine_options_text>},
    {"--container-user",
     "The engine image's container runs as this account (engine.image: podman run's --user, "
     "resolved at start)",
     false, false, write_text_if_set<&RunSettings::container_user>,
     read_text<&RunSettings::container_user>},
    {kRunRank0WatchesOption,
     "This rank's health server is a stub: rank 0's liveness watches the group", true, false,
     [](const RunSettings& s) -> std::optional<std::string> {
       if (!s.rank0_watches) return std::nullopt;
       return "";
     },
     [](RunSettings& s, const std::string&) -> Result<void> {
       s.rank0_watches = true;
       return {};
     }},
    {kRunApiKeyCredentialOption,
     "Credential holding the engine's API key, sent with the probe and metrics", false, false,
     write_text_if_set<&RunSettings::api_key_credential>,
     read_text<&RunSettings::api_key_credential>},
    {kRunApiKeyVariableOption,
     "Environment variable the engine reads that key from; set for the engine", false, false,
     write_text_if_set<&RunSettings::api_key_variable>, read_text<&RunSettings::api_key_variable>},
    {kRunReadyOption, "READY=1 on health 200, or on the first generation: health or generate",
     false, false,
     [](const RunSettings& s) -> std::optional<std::string> {
       if (s.ready == ReadyOn::health) return std::nullopt;
       return "generate";
     },
     [](RunSettings& s, const std::string& text) -> Result<void> {
       if (text != "health" && text != "generate")
         return failf("invalid {} '{}': expected health or generate", kRunReadyOption, text);
       s.ready = text == "generate" ? ReadyOn::generate : ReadyOn::health;
       return {};
     }},
};

// Units rendered by earlier versions pass --engine=KIND; `run` reads the kind from the snapshot.
// Accepted and ignored, so that a package upgrade does not break an installed unit before its
// next `up`.
constexpr std::string_view kIgnoredEngineOption = "--engine";

}  // namespace

RunSettings run_settings(const Profile& profile, const LaunchPlan& plan) {
  const LivenessPlan& liveness = plan.liveness;
  RunSettings settings;
  settings.profile = profile.name;
  settings.snapshot = plan.snapshot_path;
  settings.health_url = plan.health_url;
  settings.ready_timeout = profile.server.ready_timeout;
  settings.health_timeout = plan.health_timeout;
  settings.drain_timeout = profile.server.drain_timeout;
  settings.engine_version = plan.engine_version;
  settings.rendezvous = plan.rendezvous;
  settings.liveness = liveness.mode;
  // Where no stall can end the engine, `run` never reads them: they stay at its defaults.
  if (liveness.can_stall()) {
    settings.liveness_interval = liveness.interval;
    settings.liveness_timeout = liveness.timeout;
  }
  settings.probe_path = liveness.probe_path;
  settings.probe_body = liveness.probe_path.empty() ? "" : liveness.probe_body;
  if (!liveness.metrics_path.empty()) {
    settings.metrics_path = liveness.metrics_path;
    settings.metrics_format = liveness.metrics_format;
    settings.in_flight_metric = liveness.in_flight_metric;
    settings.tokens_metric = liveness.tokens_metric;
  }
  if (!plan.engine_options_path.empty()) {
    settings.engine_options_path = plan.engine_options_path;
    settings.engine_options_text = plan.engine_options_text;
  }
  settings.rank0_watches = liveness.rank0_watches;
  settings.api_key_credential = liveness.key_credential;
  if (!liveness.key_credential.empty()) settings.api_key_variable = liveness.key_variable;
  settings.ready = liveness.ready;
  if (profile.engine.image) settings.container_user = service_user(profile);
  settings.engine_argv = plan.argv;
  return settings;
}

std::vector<std::string> run_settings_argv(const RunSettings& settings) {
  std::vector<std::string> arguments;
  for (const Row& row : kRows) {
    auto value = row.write(settings);
    if (!value) continue;
    arguments.push_back(row.flag ? std::string(row.option)
                                 : fmt::format("{}={}", row.option, *value));
  }
  arguments.emplace_back("--");
  arguments.insert(arguments.end(), settings.engine_argv.begin(), settings.engine_argv.end());
  return arguments;
}

void add_run_settings_options(CLI::App& command, RunSettings& settings) {
  for (const Row& row : kRows) {
    const std::string name(row.option);
    const auto read = [&settings, reader = row.read, name](const std::string& text) {
      // CLI11 reports a throw from an option's callback as that option's parse error.
      if (auto done = reader(settings, text); !done)
        throw CLI::ValidationError(name, done.error().message);
    };
    CLI::Option* option =
        row.flag ? command.add_flag_callback(
                       name, [read] { read(""); }, std::string(row.help))
                 : command.add_option_function<std::string>(name, read, std::string(row.help));
    if (row.required) option->required();
  }
  command.add_option(std::string(kIgnoredEngineOption))->group("");
  command.add_option("engine_argv", settings.engine_argv, "The engine's command line, after --")
      ->required();
}

Result<RunSettings> parse_run_settings(const std::vector<std::string>& arguments) {
  RunSettings settings;
  CLI::App app("gpulaunch run");
  add_run_settings_options(app, settings);
  // CLI11 takes the arguments last first.
  std::vector<std::string> reversed(arguments.rbegin(), arguments.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& error) {
    return failf("Failed to read run's options: {}", error.what());
  }
  return settings;
}

}  // namespace gl
