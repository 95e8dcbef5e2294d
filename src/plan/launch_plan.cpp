// SPDX-License-Identifier: Apache-2.0
#include "plan/launch_plan.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <nlohmann/json.hpp>

#include "catalog/engines.hpp"
#include "catalog/jit_caches.hpp"
#include "catalog/node_requirements.hpp"
#include "catalog/torch_arch_list.hpp"
#include "facts/environment.hpp"
#include "plan/container_command.hpp"
#include "plan/gpu_assignment.hpp"
#include "plan/sandbox_plan.hpp"
#include "profile/api_key.hpp"
#include "util/state_paths.hpp"
#include "util/text_join.hpp"

namespace gl {
namespace {

std::string parent_directory(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string local_address(const std::string& host) {
  // A wildcard listener is probed on loopback.
  if (host == "0.0.0.0") return "127.0.0.1";
  if (host == "::" || host == "[::]") return "[::1]";
  if (host.find(':') != std::string::npos && host.front() != '[') return "[" + host + "]";
  return host;
}

// The value of the last `flag` in argv ("--flag VALUE" or "--flag=VALUE"); nullopt: none.
std::optional<std::string> flag_value(const std::vector<std::string>& argv, std::string_view flag) {
  std::optional<std::string> value;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == flag && i + 1 < argv.size()) value = argv[i + 1];
    if (argv[i].starts_with(std::string(flag) + "=")) value = argv[i].substr(flag.size() + 1);
  }
  return value;
}

// The name the engine serves the model under: the last --served-model-name in its argv (engine.args
// come last and win), else the model as passed (vLLM's default for the served name).
std::string served_model(const Profile& profile, const std::vector<std::string>& argv) {
  return flag_value(argv, "--served-model-name")
      .value_or(profile.model.served_name.value_or(profile.model.path));
}

bool has_flag(const std::vector<std::string>& argv, std::string_view flag) {
  return std::any_of(argv.begin(), argv.end(), [&](const std::string& word) {
    return word == flag || word.starts_with(std::string(flag) + "=");
  });
}

// The rank's liveness from server.liveness/server.ready and the row: a headless rank has no
// HTTP API (its rendezvous watches it), nor has a rank whose health server is a stub; the metrics
// signal is used where the endpoint is on (always, or by its flag, which "metrics" adds to the
// argv once, and "generate" too where a busy engine's probe waits in its queue) and readable with
// the key gpulaunch holds; the probe only where it can carry the key the engine wants.
LivenessPlan liveness_plan(const Profile& profile, long long node_rank, bool headless,
                           std::vector<std::string>& argv, LaunchPlan& launch) {
  LivenessPlan plan;
  if (headless) return plan;
  const LivenessFacts& facts = engine_row(profile.engine.kind).liveness;
  if (facts.ranks_stub_health && node_rank > 0) {
    // The stub still feeds the watchdog while the rank's process lives; nothing more it says.
    plan.mode = LivenessMode::health;
    plan.rank0_watches = true;
    return plan;
  }
  plan.mode = profile.server.liveness;
  plan.interval = profile.server.liveness_interval;
  plan.timeout = profile.server.liveness_timeout;
  plan.ready = profile.server.ready;
  const bool turn_on_metrics =
      plan.mode == LivenessMode::metrics ||
      (plan.mode == LivenessMode::generate && facts.metrics.busy_needs_metrics);
  if (turn_on_metrics && !facts.metrics.enable_flag.empty() &&
      !has_flag(argv, facts.metrics.enable_flag))
    argv.emplace_back(facts.metrics.enable_flag);
  // An options-file switch: the user's file where engine.args name one (the engine reads one
  // file; a second flag would replace theirs), gpulaunch's own otherwise.
  const auto& file_flags = facts.metrics.options_file_flags;
  if (turn_on_metrics && !file_flags.empty()) {
    for (const auto flag : file_flags)
      if (auto value = flag_value(argv, flag)) plan.user_options_file = *value;
    if (plan.user_options_file.empty()) {
      launch.engine_options_path =
          (std::filesystem::path(launch.engine_home) / facts.metrics.options_file_name).string();
      launch.engine_options_text = facts.metrics.options_file_text;
      argv.emplace_back(file_flags.front());
      argv.push_back(launch.engine_options_path);
    }
  }
  const ApiKeyUse key = find_api_key(facts.api_key, argv, profile);
  if (key.usable() && key.credential) {
    plan.key_credential = *key.credential;
    plan.key_variable = key.variable;
  }
  const bool metrics_on =
      !facts.metrics.path.empty() &&
      (facts.metrics.enable_flag.empty() || has_flag(argv, facts.metrics.enable_flag)) &&
      (!facts.api_key.guards_metrics || key.usable());
  if (plan.can_stall() && metrics_on) {
    plan.metrics_path = facts.metrics.path;
    plan.metrics_format = facts.metrics.format;
    plan.in_flight_metric = facts.metrics.in_flight;
    plan.tokens_metric = facts.metrics.tokens;
    // A gauge refreshed only every `refresh` may stand for that long while nothing runs.
    plan.timeout = std::max(plan.timeout, kLivenessRefreshTimes * facts.metrics.refresh);
  }
  // A probe without the key the engine wants would 401 every time (cross_rules refuses
  // server.ready = "generate" there): no probe then, the metrics alone watch the engine.
  if ((plan.mode == LivenessMode::generate || plan.ready == ReadyOn::generate) &&
      !facts.probe.path.empty() && key.usable()) {
    plan.probe_path = facts.probe.path;
    if (facts.probe.method == "POST") {
      // One token from a one-word prompt: the smallest generation the API serves.
      nlohmann::ordered_json body;
      if (facts.probe.names_model) body["model"] = served_model(profile, argv);
      body["prompt"] = "hi";
      body[std::string(facts.probe.one_token_field)] = 1;
      plan.probe_body = body.dump();
    }
  }
  return plan;
}

}  // namespace

std::string served_model_name(const Profile& profile, const LaunchPlan& plan) {
  return served_model(profile, plan.argv);
}

bool hub_offline(const std::vector<std::pair<std::string, std::string>>& environment) {
  // huggingface_hub/constants.py: HF_HUB_OFFLINE, or TRANSFORMERS_OFFLINE when that is unset or
  // empty, upper-cased, one of 1, ON, YES, TRUE.
  auto value = lookup(environment, "HF_HUB_OFFLINE");
  if (!value || value->empty()) value = lookup(environment, "TRANSFORMERS_OFFLINE");
  if (!value) return false;
  std::string upper;
  for (char c : *value) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper == "1" || upper == "ON" || upper == "YES" || upper == "TRUE";
}

HealthTiming health_timing(const Profile& profile,
                           const std::vector<std::pair<std::string, std::string>>& environment) {
  const EngineRow& row = engine_row(profile.engine.kind);
  HealthTiming timing{row.health_answer, kMinHealthTimeout, Seconds{0}};
  // SGLang reads its variable with int(); a value it would refuse leaves the default here.
  if (!row.health_answer_variable.empty())
    if (auto value = lookup(environment, row.health_answer_variable)) {
      long long seconds = 0;
      auto [end, error] = std::from_chars(value->data(), value->data() + value->size(), seconds);
      if (error == std::errc() && end == value->data() + value->size() && seconds >= 0 &&
          seconds <= 86400)
        timing.answer = Seconds{seconds};
    }
  if (timing.answer.count() > 0)
    timing.timeout = std::max(kMinHealthTimeout, timing.answer + kHealthAnswerMargin);
  if (profile.server.watchdog.count() > 0)
    timing.watchdog = std::max(profile.server.watchdog, kWatchdogHealthTimeouts * timing.timeout);
  return timing;
}

LaunchPlan make_launch_plan(const Profile& profile, const LaunchOptions& options) {
  LaunchPlan plan;
  plan.node_rank = options.node_rank;
  plan.argv = engine_argv(profile, options);
  plan.engine_home = options.engine_home.empty() ? state_paths::engine_home(profile.name).string()
                                                 : options.engine_home;
  plan.snapshot_path = state_paths::snapshot_file(profile.name).string();
  plan.cache_root = profile.caches.root;
  plan.health_url = "http://" + local_address(profile.server.host) + ":" +
                    std::to_string(profile.server.port) + profile.server.health_path;
  plan.rendezvous = headless_rendezvous(profile, options);
  plan.infiniband = options.infiniband;
  plan.engine_version = options.engine_version;
  plan.sandbox = sandbox_plan(profile, options.sandbox, plan.argv);
  plan.liveness =
      liveness_plan(profile, options.node_rank, plan.rendezvous.has_value(), plan.argv, plan);
  auto& env = plan.environment;

  // The toolkit first: FlashInfer and torch's cpp_extension take CUDA_HOME, then CUDA_PATH,
  // then `which nvcc`; pinning all three to one toolkit leaves them nothing to disagree on.
  std::vector<std::string> path;
  if (const auto& cuda_home = profile.toolkit.cuda_home) {
    env.emplace_back("CUDA_HOME", *cuda_home);
    env.emplace_back("CUDA_PATH", *cuda_home);
    path.push_back(*cuda_home + "/bin");
  }
  if (profile.engine.venv) {
    path.push_back(*profile.engine.venv + "/bin");
    env.emplace_back("VIRTUAL_ENV", *profile.engine.venv);
  } else if (profile.engine.python) {
    std::string bin = parent_directory(*profile.engine.python);
    if (std::string(kSystemPath).find(bin) == std::string::npos) path.push_back(bin);
  }
  path.emplace_back(kSystemPath);
  env.emplace_back("PATH", join(path, ":"));
  if (const auto& cuda_home = profile.toolkit.cuda_home)
    env.emplace_back("LD_LIBRARY_PATH", *cuda_home + "/lib64");

  plan.gpus = assigned_gpus(profile);
  // Indices as nvidia-smi numbers them; CUDA's default order is fastest-first.
  env.emplace_back("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
  env.emplace_back(std::string(kVisibleDevicesVariable), visible_devices_value(plan.gpus));
  if (const auto& arch_list = profile.toolkit.arch_list) {
    env.emplace_back("FLASHINFER_CUDA_ARCH_LIST", *arch_list);
    // torch's cpp_extension has its own grammar: "12.0f" would raise "Unknown CUDA arch".
    env.emplace_back("TORCH_CUDA_ARCH_LIST", torch_arch_list(*arch_list));
  }

  for (const auto& cache : jit_caches()) {
    auto override_it = profile.caches.overrides.find(std::string(cache.name));
    std::string directory = override_it != profile.caches.overrides.end()
                                ? override_it->second
                                : plan.cache_root + "/" + std::string(cache.directory);
    plan.caches.push_back({std::string(cache.name), directory, cache.keys_itself});
    for (const auto& variable : cache.variables)
      env.emplace_back(
          std::string(variable.name),
          variable.subpath.empty() ? directory : directory + "/" + std::string(variable.subpath));
  }

  // Nothing may fall back to a home directory the service does not own.
  env.emplace_back("HOME", plan.engine_home);
  env.emplace_back("XDG_CACHE_HOME", plan.cache_root + "/xdg");
  env.emplace_back("PYTHONNOUSERSITE", "1");
  env.emplace_back("PYTHONUNBUFFERED", "1");
  // A stall ends with SIGABRT to every engine process: with faulthandler on, each Python one
  // writes all its threads' stacks to stderr first, which is where it hung.
  if (plan.liveness.can_stall() && engine_row(profile.engine.kind).launch != Launch::executable)
    env.emplace_back(std::string(kPythonFaultHandlerVariable), "1");
  env.emplace_back("LANG", "C.UTF-8");

  for (const auto& [name, value] : profile.env) {
    auto existing = std::find_if(env.begin(), env.end(),
                                 [&](const auto& entry) { return entry.first == name; });
    if (existing != env.end())
      existing->second = value;  // HOME, LANG, ...: the profile wins
    else
      env.emplace_back(name, value);
  }
  // NCCL and Gloo on the interface that routes to rank 0, unless the profile chose one.
  if (profile.parallelism.nodes > 1 && options.socket_interface)
    for (auto variable : {kNcclSocketInterfaceVariable, kGlooSocketInterfaceVariable})
      if (!lookup(env, variable))
        env.emplace_back(std::string(variable), *options.socket_interface);
  // An offline node cannot fetch FlashInfer's cubins either. Without FLASHINFER_NO_DOWNLOAD,
  // FlashInfer tries each missing one 4 times with growing pauses before it fails
  // (jit/cubin_loader.py, download_file); with it, the first use fails at once, naming the file.
  if (hub_offline(env) && !lookup(env, kFlashinferNoDownload))
    env.emplace_back(std::string(kFlashinferNoDownload), "1");
  const HealthTiming health = health_timing(profile, env);
  plan.health_timeout = health.timeout;
  plan.watchdog = health.watchdog;
  // "off": nothing watches the serving engine, not even its health.
  if (plan.liveness.mode == LivenessMode::off) plan.watchdog = Seconds{0};
  if (plan.liveness.can_stall() && plan.watchdog.count() > 0) {
    const long long stall_tenths =
        kWatchdogLivenessTenths * (plan.liveness.timeout + kStallDumpGrace).count();
    plan.watchdog = std::max(plan.watchdog, Seconds{(stall_tenths + 9) / 10});
  }
  // An image's engine runs inside `podman run`, which takes the environment by name: last, once
  // the environment is whole.
  if (profile.engine.image) {
    auto command = container_command(profile, plan);
    plan.argv.insert(plan.argv.begin(), command.begin(), command.end());
  }
  return plan;
}

std::optional<CubinDirectory> flashinfer_cubin_directory(const LaunchPlan& plan) {
  if (auto chosen = lookup(plan.environment, kFlashinferCubinDirVariable))
    return CubinDirectory{*chosen, true};
  // The cubins sit below the workspace, the "flashinfer" cache's one variable.
  const JitCache* workspace = find_jit_cache("flashinfer");
  if (!workspace || workspace->variables.empty()) return std::nullopt;
  auto base = lookup(plan.environment, workspace->variables.front().name);
  if (!base) return std::nullopt;
  return CubinDirectory{*base + "/" + std::string(kFlashinferCubinSubpath), false};
}

}  // namespace gl
