// SPDX-License-Identifier: Apache-2.0
// `gpulaunch internal-man 1|5`: the build generates gpulaunch(1) and gpulaunch.toml(5) with it. The
// prose is roff in src/cli/doc/, a text file per command or topic compiled into the binary; this
// file computes what the prose cannot say itself, from the tables the code runs on, so the pages
// cannot drift from the subcommands CLI11 knows, the key table validation reads or the catalog.
// Hidden from --help: it is a build step, not something operators run.

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "catalog/discovery_places.hpp"
#include "catalog/engines.hpp"
#include "catalog/exit_codes.hpp"
#include "catalog/jit_caches.hpp"
#include "catalog/node_health.hpp"
#include "catalog/nvidia_devices.hpp"
#include "catalog/sandbox_allowances.hpp"
#include "cli/context.hpp"
#include "cli/embedded_text.hpp"
#include "cli/man_template.hpp"
#include "gpulaunch_version.hpp"
#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"
#include "profile/schema.hpp"
#include "profile/unsafe_directives.hpp"
#include "run/bridge.hpp"
#include "supervise/metrics.hpp"
#include "supervise/step_down.hpp"
#include "util/state_paths.hpp"

namespace gl {
namespace {

// Escapes text for roff. Hyphens in option-like words become \- so they render (and copy) as the
// ASCII hyphen-minus a shell needs; hyphens inside ordinary words stay typographic.
std::string roff(std::string_view text) {
  std::string out;
  bool option_word = false;
  bool word_start = true;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      option_word = false;
      word_start = true;
    } else if (word_start && c != '(' && c != '"') {
      option_word = c == '-';
      word_start = false;
    }
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-' && option_word) {
      out += "\\-";
    } else {
      out += c;
    }
  }
  // A line starting with . or ' would be read as a request.
  if (!out.empty() && (out.front() == '.' || out.front() == '\'')) out.insert(0, "\\&");
  return out;
}

// Names, keys and values: every hyphen is a literal one.
std::string literal(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  return out;
}

// Help strings are sentence fragments; the pages print them as sentences.
std::string sentence(std::string_view help) {
  std::string text = roff(help);
  if (!text.empty() && text.back() != '.') text += '.';
  return text;
}

// "--profiles-dir DIR" / "-h, --help" as roff, from CLI11's own description of the option.
std::string option_synopsis(const CLI::Option& option) {
  std::vector<std::string> names;
  for (const auto& name : option.get_snames()) names.push_back("\\fB\\-" + literal(name) + "\\fR");
  for (const auto& name : option.get_lnames())
    names.push_back("\\fB\\-\\-" + literal(name) + "\\fR");
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
  if (option.get_expected_max() > 0) {  // 0: a flag
    // "INT:INT in [0 - 1023]" -> "INT": the validator is described in the help text.
    std::string type = option.get_type_name();
    type = type.substr(0, type.find_first_of(": "));
    if (type.empty()) type = "VALUE";
    text += " \\fI" + literal(type) + "\\fR";
  }
  return text;
}

std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); });
}

// The catalog's fixes name the GPU as {gpu}; the page names none.
std::string any_gpu(std::string_view fix) {
  std::string text(fix);
  for (size_t at = text.find("{gpu}"); at != std::string::npos; at = text.find("{gpu}", at))
    text.replace(at, 5, "N");
  return text;
}

// The global options, from CLI11's own description of them.
std::string options_block(const CLI::App& app) {
  std::string page;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_positional() || !option->nonpositional()) continue;
    page += ".TP\n" + option_synopsis(*option) + "\n" + roff(option->get_description()) + "\n";
  }
  return page;
}

// Each visible subcommand with its arguments and options.
std::string commands_block(const CLI::App& app) {
  std::string page;
  for (const CLI::App* sub : visible_subcommands(app)) {
    std::string usage = "\\fB" + literal(sub->get_name()) + "\\fR";
    for (const CLI::Option* option : sub->get_options()) {
      if (!option->get_positional()) continue;
      std::string name = "\\fI" + literal(option->get_name(true)) + "\\fR";
      usage += option->get_required() ? " " + name : " [" + name + "]";
    }
    bool has_options = false;
    // Options in no group are hidden (tests' --state-root), as in --help.
    auto shown = [](const CLI::Option* option) {
      return !option->get_group().empty() &&
             option->get_lnames() != std::vector<std::string>{"help"};
    };
    for (const CLI::Option* option : sub->get_options())
      has_options = has_options || (option->nonpositional() && shown(option));
    if (has_options) usage += " [\\fIoptions\\fR]";
    page += ".TP\n" + usage + "\n" + roff(sub->get_description()) + "\n";
    for (const CLI::Option* option : sub->get_options()) {
      if (!shown(option)) continue;
      std::string label = option->nonpositional()
                              ? option_synopsis(*option)
                              : "\\fI" + literal(option->get_name(true)) + "\\fR";
      page += ".RS\n.TP\n" + label + "\n" + roff(option->get_description()) + "\n.RE\n";
    }
  }
  return page;
}

// What `check` and `up` hold each GPU to (rules/gpu_health), from catalog/node_health.
std::string health_thresholds_block() {
  std::string page;
  for (auto check : {HealthCheck::ecc_uncorrected_volatile, HealthCheck::row_remap_failure,
                     HealthCheck::row_remap_pending, HealthCheck::retired_pages_pending,
                     HealthCheck::persistence_off}) {
    const HealthThreshold& row = health_threshold(check);
    page += fmt::format(".TP\n\\fB{}\\fR ({})\n{}\n", literal(row.code),
                        row.blocks_start ? "error" : "warning",
                        roff(std::string(row.meaning) + ". Fix: " + any_gpu(row.fix)));
  }
  return page;
}

// The Xids `check` knows, from catalog/node_health.
std::string xid_rows_block() {
  std::string page;
  for (const XidRow& row : xid_rows())
    page += fmt::format(".TP\n\\fB{}\\fR {} ({})\n{}\n", row.xid, roff(row.name),
                        row.blocks_start ? "error" : "warning",
                        roff(std::string(row.meaning) + ". Fix: " + any_gpu(row.fix)));
  return page;
}

// What `gpulaunch metrics` prints, from supervise/metrics' own table.
std::string metric_families_block() {
  std::string page;
  for (const auto& family : metric_families())
    page += fmt::format(".TP\n\\fB{}\\fR ({})\n{}\n", literal(family.name), family.type,
                        sentence(family.help));
  return page;
}

// Every profile key, from the table validation reads (profile/schema).
std::string keys_block() {
  std::string page;
  bool top_level_open = false;
  for (const KeySpec& key : profile_schema()) {
    const bool is_table = key.type == KeyType::table || key.type == KeyType::free_table;
    const bool top_level = key.path.find('.') == std::string_view::npos;
    if (is_table && top_level) {
      page += fmt::format(".SS \"[{}]\"\n{}\n", literal(key.path),
                          key.type == KeyType::free_table ? roff(key.help) + "; its keys are free."
                                                          : sentence(key.help));
      continue;
    }
    if (top_level && !top_level_open) {
      page += ".SS \"Top level\"\n";
      top_level_open = true;
    }
    const std::string_view name = top_level ? key.path : key.path.substr(key.path.rfind('.') + 1);
    std::string type(key_type_name(key.type));
    if (key.type == KeyType::free_table) type += " of free keys";
    if (key.max_length > 0) type += fmt::format(", at most {} bytes", key.max_length);
    page += fmt::format(".TP\n\\fB{}\\fR \\(em {}\n{}\n", literal(name), roff(type),
                        sentence(key.help));
  }
  return page;
}

// Each sandbox allowance: when the unit carries it, why, and its cost (catalog/sandbox_allowances).
std::string sandbox_allowances_block() {
  std::string page;
  for (const auto& row : sandbox_allowances()) {
    std::string when;
    switch (row.when) {
      case AllowanceWhen::always:
        when = "every unit";
        break;
      case AllowanceWhen::node_has_device:
        when = fmt::format("when the node has {}, or service.allow names it", row.node_path);
        break;
      case AllowanceWhen::mps_daemon:
        when = fmt::format("when an MPS daemon's {} exists", row.node_path);
        break;
      case AllowanceWhen::engine_flag:
        when = fmt::format("when engine.args has {}, or service.allow names it", row.engine_flag);
        break;
      case AllowanceWhen::profile_allows:
        when = "only when service.allow names it";
        break;
    }
    page += fmt::format(".TP\n\\fB{}\\fR: \\fB{}={}\\fR ({})\n{}. Exposure: {}. Source: {}.\n",
                        literal(row.name), literal(row.directive), literal(row.value), roff(when),
                        roff(row.reason), roff(row.exposure), roff(row.source));
  }
  return page;
}

// One entry per row of the engine table: how the kind starts, its defaults, its knobs' flags.
std::string engine_rows_block() {
  std::string page;
  for (const EngineRow& row : engine_rows()) {
    page += fmt::format(".TP\n\\fB{}\\fR \\(em {}\n", literal(row.name), roff(row.display));
    const std::string program = "\\fB" + literal(row.program) + "\\fR";
    switch (row.launch) {
      case Launch::python_module:
        page += "Runs \\fIPYTHON\\fR \\fB\\-m\\fR " + program +
                " from \\fBengine.venv\\fR or \\fBengine.python\\fR.";
        if (!row.serve_script.program.empty())
          page += fmt::format(
              " When the version installed in \\fBengine.venv\\fR is {} or later (read from its "
              "dist-info by \\fBup\\fR and \\fBlock\\fR, or given to \\fBrender "
              "\\-\\-engine\\-version\\fR), runs the venv's \\fB{} {}\\fR instead, the "
              "entry point it recommends; an unknown version keeps \\fB\\-m\\fR.",
              literal(row.serve_script.since), literal(row.serve_script.program),
              literal(row.serve_script.subcommand));
        break;
      case Launch::venv_program:
        page += "Runs " + program + " from \\fBengine.venv\\fR, or \\fBengine.executable\\fR.";
        break;
      case Launch::executable:
        page += "Runs \\fBengine.executable\\fR (" + program + "); no Python environment.";
        break;
      case Launch::argv:
        page += "Runs \\fBengine.argv\\fR as it is.";
        break;
    }
    if (row.model == ModelSource::local_file) page += " \\fBmodel.path\\fR is a local file.";
    page += fmt::format(" Port {} unless \\fBserver.port\\fR says otherwise; {}.", row.default_port,
                        roff(row.readiness));
    // Each knob as step_down treats it (supervise/step_down's knob_policies).
    std::vector<std::string> knobs;
    for (const KnobPolicy& policy : knob_policies(row.kind)) {
      std::string knob =
          policy.key == "context"
              ? fmt::format("the context is \\fB{}\\fR in \\fBengine.args\\fR",
                            literal(policy.flag))
              : fmt::format("\\fB{}\\fR is \\fB{}\\fR", literal(policy.key), literal(policy.flag));
      const char* after = policy.trigger == KnobTrigger::gpu_oom ? "a CUDA out-of-memory stop"
                                                                 : "a host out-of-memory kill";
      switch (policy.step) {
        case KnobStep::untouched:
          knob += ", which the supervisor leaves as it is";
          break;
        case KnobStep::from_default:
          knob += fmt::format(
              ", lowered after {} (from what the engine itself picks on the unit's GPUs when the "
              "profile leaves it unset)",
              after);
          break;
        case KnobStep::where_set:
          knob += fmt::format(
              ", lowered after {} only where the profile sets it (the engine sizes it itself)",
              after);
          break;
      }
      knobs.push_back(std::move(knob));
    }
    for (size_t i = 0; i < knobs.size(); ++i)
      page += (i == 0 ? " " : i + 1 == knobs.size() ? "; and " : "; ") + knobs[i];
    if (!knobs.empty()) page += ".";
    if (!row.cuda_graph_max_bs.short_flag.empty())
      page += fmt::format(
          " \\fB{}\\fR, the deprecated spelling of \\fB{}\\fR, is lowered "
          "as written where \\fBengine.args\\fR has it.",
          literal(row.cuda_graph_max_bs.short_flag), literal(row.cuda_graph_max_bs.flag));
    if (!row.speculative_methods.empty()) {
      std::string methods;
      for (const auto& method : row.speculative_methods)
        methods +=
            (methods.empty() ? "" : ", ") + std::string("\\fB") + literal(method.name) + "\\fR";
      page += " \\fBspeculative.algorithm\\fR is one of " + methods + " (in any case).";
    }
    std::vector<std::string_view> supports;
    if (row.multi_node) supports.push_back("several nodes");
    if (row.dp_attention) supports.push_back("parallelism.dp_attention");
    if (row.speculative) supports.push_back("[speculative]");
    for (size_t i = 0; i < supports.size(); ++i)
      page += std::string(i == 0                     ? " Supports "
                          : i + 1 == supports.size() ? " and "
                                                     : ", ") +
              "\\fB" + literal(supports[i]) + "\\fR" + (i + 1 == supports.size() ? "." : "");
    if (!row.splits_ranks) page += " " + sentence(row.no_ranks_hint);
    page += row.mig == MigSupport::one_instance
                ? " Runs on one MIG instance (a \\fBMIG\\-\\fR UUID alone in \\fBgpus.devices\\fR, "
                  "one rank)."
                : " Cannot run on a MIG instance: " + sentence(row.mig_source);
    if (row.health_answer.count() > 0)
      page += fmt::format(
          " Its health endpoint may take up to {} s to answer on a busy, healthy server{}.",
          row.health_answer.count(),
          row.health_answer_variable.empty()
              ? std::string()
              : fmt::format(" (\\fB{}\\fR in \\fB[env]\\fR changes it)",
                            literal(row.health_answer_variable)));
    if (const MultiNodeFlags* flags = row.multi_node_flags; flags && !flags->headless.empty()) {
      auto flag = [](std::string_view name) { return "\\fB" + literal(name) + "\\fR"; };
      page += fmt::format(
          " Over several nodes rank 0 serves and ranks 1 and up run {} (no HTTP server: their "
          "unit is ready, and its watchdog fed, while the engine holds a TCP connection to rank "
          "0). The tensor and pipeline ranks span the nodes with {}, {}, {} and {} from "
          "\\fBparallelism.dist_init_addr\\fR; with \\fBparallelism.dp\\fR above 1 each node "
          "runs whole replicas instead (\\fBdp\\fR a multiple of the node count) with {}, {} "
          "(ranks 1 and up), {} and {}.",
          flag(flags->headless), flag(flags->nnodes), flag(flags->node_rank),
          flag(flags->master_addr), flag(flags->master_port), flag(flags->dp_size_local),
          flag(flags->dp_start_rank), flag(flags->dp_address), flag(flags->dp_rpc_port));
    }
    page += "\n";
  }
  return page;
}

// server.liveness per engine, from the engines' liveness facts (catalog/engines).
std::string liveness_engines_block() {
  std::string page;
  for (const EngineRow& row : engine_rows()) {
    const LivenessFacts& facts = row.liveness;
    page += fmt::format(".TP\n\\fB{}\\fR\nDefault \\fB{}\\fR.", literal(row.name),
                        liveness_mode_name(facts.default_mode));
    if (!facts.probe.path.empty())
      page += fmt::format(
          " Probe: {} \\fB{}\\fR{} ({}).", facts.probe.method, literal(facts.probe.path),
          facts.probe.one_token_field.empty()
              ? std::string(", the engine's own one-token generation")
              : fmt::format(" with \\fB{}\\fR 1", literal(facts.probe.one_token_field)),
          literal(facts.probe.source));
    else
      page += " No generation API gpulaunch knows: \\fBhealth\\fR or \\fBoff\\fR only.";
    const MetricsInterface& metrics = facts.metrics;
    const std::string switch_text =
        !metrics.enable_flag.empty() ? fmt::format(", with \\fB{}\\fR (\\fBmetrics\\fR adds it)",
                                                   literal(metrics.enable_flag))
        : !metrics.options_file_flags.empty()
            ? fmt::format(
                  ", with \\fB{}\\fR in the \\fB{}\\fR file (gpulaunch passes its own "
                  "where engine.args name none)",
                  literal(
                      metrics.options_file_text.substr(0, metrics.options_file_text.find('\n'))),
                  literal(metrics.options_file_flags.front()))
            : std::string(", always on");
    if (!metrics.path.empty() && metrics.in_flight.empty())
      page += fmt::format(
          " Metrics: \\fB{}\\fR, {}, whose \\fB{}\\fR moving vouches for a probe that waits "
          "behind the queue; no in-flight gauge, so not \\fBmetrics\\fR{} ({}).",
          literal(metrics.path),
          metrics.format == MetricsFormat::iteration_stats ? "JSON iteration statistics"
                                                           : "Prometheus text",
          literal(metrics.tokens), switch_text, literal(metrics.source));
    else if (!metrics.path.empty())
      page += fmt::format(" Metrics: \\fB{}\\fR, \\fB{}\\fR and \\fB{}\\fR{} ({}).",
                          literal(metrics.path), literal(metrics.in_flight),
                          literal(metrics.tokens), switch_text, literal(metrics.source));
    else
      page += " No Prometheus metrics: not \\fBmetrics\\fR.";
    if (metrics.busy_needs_metrics && !metrics.enable_flag.empty())
      page += fmt::format(
          " \\fBgenerate\\fR adds \\fB{}\\fR too: the probe waits behind a "
          "saturated engine's queue, the token counter does not.",
          literal(metrics.enable_flag));
    if (facts.metrics.refresh.count() > 0)
      page +=
          fmt::format(" Its metrics refresh every {} s when idle.", facts.metrics.refresh.count());
    if (facts.health_generates) page += " Its health endpoint itself generates a token.";
    if (facts.ranks_stub_health)
      page += fmt::format(
          " A rank above 0 answers health with a stub: its liveness is \\fBhealth\\fR alone, "
          "rank 0's watches the group ({}).",
          literal(facts.ranks_source));
    std::string keys;
    const ApiKeyFacts& key = facts.api_key;
    for (const auto& ways : {key.flags, key.file_flags})
      for (std::string_view flag : ways) keys += (keys.empty() ? "" : ", ") + literal(flag);
    for (std::string_view variable : key.variables)
      keys += (keys.empty() ? "" : ", ") + literal(variable);
    if (!key.config_flag.empty())
      keys += fmt::format("{}{} (a file gpulaunch does not read)", keys.empty() ? "" : ", ",
                          literal(key.config_flag));
    if (!keys.empty())
      page +=
          fmt::format(" API key: {}{} ({}).", keys,
                      key.guards_metrics ? "; it guards the metrics too" : "", literal(key.source));
    page += "\n";
  }
  return page;
}

// A stop per engine, from the engines' drain facts (catalog/engines).
std::string drain_engines_block() {
  std::string page;
  for (const EngineRow& row : engine_rows()) {
    const DrainFacts& drain = row.drain;
    page += fmt::format(".TP\n\\fB{}\\fR\n{}.", literal(row.name), literal(drain.behaviour));
    if (!drain.flag.empty())
      page += fmt::format(
          " \\fB{}\\fR from release {} on, where \\fBup\\fR read the installed "
          "version, unless \\fBengine.args\\fR sets it.",
          literal(drain.flag), literal(spell_flag(row.kind, drain.flag, std::nullopt).needs));
    if (!drain.source.empty()) page += fmt::format(" ({})", literal(drain.source));
    page += "\n";
  }
  return page;
}

// The caches the unit pins, from the one table (catalog/jit_caches).
std::string cache_rows_block() {
  std::string page;
  for (const JitCache& cache : jit_caches()) {
    std::string variables;
    for (const auto& variable : cache.variables)
      variables +=
          (variables.empty() ? "" : ", ") + std::string("\\fB") + literal(variable.name) + "\\fR";
    std::string stale = cache.keys_itself        ? "never cleared for a changed node"
                        : cache.stale_on.empty() ? "cleared when any of these facts changes"
                                                 : "cleared when one of these changes: ";
    for (size_t i = 0; !cache.keys_itself && i < cache.stale_on.size(); ++i)
      stale += (i == 0 ? "" : ", ") + std::string(cache.stale_on[i]);
    page += fmt::format(".TP\n\\fB{}\\fR \\(em {}\n{}; {}.\n", literal(cache.name), variables,
                        roff(cache.note), roff(stale));
  }
  return page;
}

// What service.extra may not set, from the one table (profile/unsafe_directives.hpp).
std::string unsafe_directives_block() {
  std::string names;
  for (const auto& directive : unsafe_directives())
    names += (names.empty() ? "" : ", ") + std::string(directive.name) +
             (directive.prefix ? "*" : "") + "=";
  return roff(names) + "\n";
}

// Where `init` looks for venvs and models (catalog/discovery_places), one place a line.
std::string discovery_places_block(std::span<const DiscoveryPlace> places) {
  std::string page;
  for (const auto& place : places)
    page += fmt::format(".TP\n{}\n{}\n", literal(place.directory), roff(place.why));
  return page;
}

// Every {{name}} the texts in src/cli/doc/ may use besides another text.
ManValues man_values(const CLI::App& app, std::string_view date) {
  auto number = [](auto value) { return fmt::format("{}", value); };
  return {
      {"date", std::string(date)},
      {"version", GPULAUNCH_VERSION},
      {"options", options_block(app)},
      {"commands", commands_block(app)},
      {"health-thresholds", health_thresholds_block()},
      {"xid-rows", xid_rows_block()},
      {"fabric-manager-unit", literal(kFabricManagerUnit)},
      {"nvml-version-mismatch-text", roff(kNvmlVersionMismatchText)},
      {"cuda-system-not-ready-error", number(kCudaErrorSystemNotReady)},
      {"cuda-system-not-ready-text", roff(kCudaSystemNotReadyText)},
      {"metric-families", metric_families_block()},
      {"metrics-file", literal(state_paths::metrics_file_name("PROFILE"))},
      {"textfile-directory", literal(state_paths::kTextfileDirectory)},
      {"keys", keys_block()},
      {"init-venv-places", discovery_places_block(venv_places())},
      {"init-model-places", discovery_places_block(model_places())},
      {"engine-rows", engine_rows_block()},
      {"max-output-line-kib", number(kMaxOutputLine / 1024)},
      {"health-answer-margin", number(kHealthAnswerMargin.count())},
      {"min-health-timeout", number(kMinHealthTimeout.count())},
      {"watchdog-health-timeouts", number(kWatchdogHealthTimeouts)},
      {"liveness-interval", number(kDefaultLivenessInterval.count())},
      {"liveness-timeout", number(kDefaultLivenessTimeout.count())},
      {"watchdog-liveness-factor",
       fmt::format("{}.{}", kWatchdogLivenessTenths / 10, kWatchdogLivenessTenths % 10)},
      {"stall-dump-grace", number(kStallDumpGrace.count())},
      {"faulthandler-variable", literal(kPythonFaultHandlerVariable)},
      {"exit-stalled", number(kExitStalled)},
      {"waiting-for-generation-status", std::string(kWaitingForGenerationStatus)},
      {"liveness-looks-per-hour", number(3600 / kDefaultLivenessInterval.count())},
      {"liveness-engines", liveness_engines_block()},
      {"liveness-refresh-times", number(kLivenessRefreshTimes)},
      {"drain-timeout", number(kDefaultDrainTimeout.count())},
      {"stop-kill-grace", number(kStopKillGrace.count())},
      {"stop-timeout", number((kStopKillGrace + kStopTimeoutMargin).count())},
      {"drain-engines", drain_engines_block()},
      {"cache-rows", cache_rows_block()},
      {"flashinfer-no-download", literal(kFlashinferNoDownload)},
      {"unsafe-directives", unsafe_directives_block()},
      {"nvidia-devices-unit", literal(kNvidiaDevicesUnit)},
      {"sandbox-allowances", sandbox_allowances_block()},
  };
}

}  // namespace

void add_man_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("internal-man", "Print a manual page as roff (build step)");
  command->group("");  // hidden
  static std::string section;
  static std::string date = "1970-01-01";
  command->add_option("section", section, "1: gpulaunch(1), 5: gpulaunch.toml(5)")
      ->required()
      ->check(CLI::IsMember({"1", "5"}));
  command->add_option("--date", date, "Date in the page footer (reproducible builds pass one)");
  command->callback([&app, &context] {
    auto page = expand_man_text(section == "1" ? "gpulaunch.1.roff" : "gpulaunch.toml.5.roff",
                                man_texts(), man_values(app, date));
    if (!page) {
      context.exit_code = report(Error{"Failed to generate the manual: " + page.error().message});
      return;
    }
    fmt::print("{}", *page);
    context.exit_code = 0;
  });
}

}  // namespace gl
