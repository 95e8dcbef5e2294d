// SPDX-License-Identifier: Apache-2.0
#include "profile/section_readers.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include "catalog/engine_knobs.hpp"
#include "catalog/engines.hpp"
#include "catalog/jit_caches.hpp"
#include "catalog/pinned_variables.hpp"
#include "catalog/system_directories.hpp"
#include "profile/shapes.hpp"
#include "util/did_you_mean.hpp"
#include "util/state_paths.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

Result<void> read_top(const ValueReader& r, Profile& profile) {
  profile.description = r.string_at("description").value_or("");
  return {};
}

Result<void> read_engine(const ValueReader& r, Profile& profile) {
  auto& engine = profile.engine;
  auto kind = r.string_at("engine.kind");
  if (!kind) return fail_at(r.where("engine.kind"), "missing required key 'engine.kind'");
  auto parsed = parse_engine_kind(*kind);
  if (!parsed)
    return fail_at(r.where("engine.kind"), "'engine.kind' must be {}, got '{}'{}",
                   engine_kinds_where([](const EngineRow&) { return true; }, "or"), *kind,
                   did_you_mean_suffix(*kind, engine_kind_names()));
  engine.kind = *parsed;

  engine.venv = r.string_at("engine.venv");
  engine.python = r.string_at("engine.python");
  engine.image = r.string_at("engine.image");
  engine.executable = r.string_at("engine.executable");
  engine.args = r.strings_at("engine.args");
  engine.argv = r.strings_at("engine.argv");
  for (const EngineKnobKey& knob : engine_knob_keys()) {
    auto value =
        knob.value == KnobValue::integer
            ? r.integer_at(knob.key).transform([](long long v) { return static_cast<double>(v); })
            : r.number_at(knob.key);
    if (value) engine.knobs.emplace(knob.key, *value);
  }
  return {};
}

Result<void> read_model(const ValueReader& r, Profile& profile) {
  auto path = r.string_at("model.path");
  if (!path) return {};  // required or not: cross_rules
  profile.model.path = *path;
  profile.model.served_name = r.string_at("model.served_name");
  profile.model.revision = r.string_at("model.revision");
  profile.model.prefetch = r.boolean_at("model.prefetch").value_or(profile.model.prefetch);
  return {};
}

Result<void> read_parallelism(const ValueReader& r, Profile& profile) {
  auto& p = profile.parallelism;
  for (auto [key, target] : {std::pair{"parallelism.tp", &p.tp}, std::pair{"parallelism.pp", &p.pp},
                             std::pair{"parallelism.ep", &p.ep}, std::pair{"parallelism.dp", &p.dp},
                             std::pair{"parallelism.nodes", &p.nodes}})
    *target = r.integer_at(key).value_or(*target);
  p.dp_attention = r.boolean_at("parallelism.dp_attention").value_or(p.dp_attention);
  p.dist_init_addr = r.string_at("parallelism.dist_init_addr");
  return {};
}

// [nodes]: the hosts in rank order (parallelism.nodes follows them: cross_rules).
Result<void> read_nodes(const ValueReader& r, Profile& profile) {
  auto& nodes = profile.nodes;
  nodes.hosts = r.strings_at("nodes.hosts");
  for (size_t i = 0; i < nodes.hosts.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (nodes.hosts[j] == nodes.hosts[i])
        return fail_at(r.where("nodes.hosts"), "'nodes.hosts' lists '{}' twice (ranks {} and {})",
                       nodes.hosts[i], j, i);
  if (nodes.hosts.empty() && r.node_at("nodes"))
    return fail_at(r.where("nodes"), "'nodes' needs 'nodes.hosts', the hosts in rank order");
  nodes.ssh_user = r.string_at("nodes.ssh_user");
  nodes.ssh_port = r.integer_at("nodes.ssh_port").value_or(nodes.ssh_port);
  nodes.dist_init_port = r.integer_at("nodes.dist_init_port").value_or(nodes.dist_init_port);
  nodes.ssh_identity = r.string_at("nodes.ssh_identity");
  nodes.ssh_known_hosts = r.string_at("nodes.ssh_known_hosts");
  nodes.gpulaunch = r.string_at("nodes.gpulaunch").value_or(nodes.gpulaunch);
  return {};
}

Result<void> read_speculative(const ValueReader& r, Profile& profile) {
  if (!r.node_at("speculative")) return {};
  SpeculativeSettings spec;
  auto algorithm = r.string_at("speculative.algorithm");
  if (!algorithm)
    return fail_at(r.where("speculative"), "missing required key 'speculative.algorithm'");
  spec.algorithm = *algorithm;
  spec.draft_model = r.string_at("speculative.draft_model");
  spec.num_steps = r.integer_at("speculative.num_steps");
  spec.eagle_topk = r.integer_at("speculative.eagle_topk");
  spec.num_draft_tokens = r.integer_at("speculative.num_draft_tokens");
  profile.speculative = std::move(spec);
  return {};
}

Result<void> read_toolkit(const ValueReader& r, Profile& profile) {
  profile.toolkit.cuda_home = r.string_at("toolkit.cuda_home");
  profile.toolkit.min_version = r.string_at("toolkit.min_version");
  profile.toolkit.arch_list = r.string_at("toolkit.arch_list");
  return {};
}

Result<void> read_gpus(const ValueReader& r, Profile& profile) {
  auto& gpus = profile.gpus;
  if (const toml::node* node = r.node_at("gpus.devices")) {
    std::set<std::string> seen;
    for (auto&& item : *node->as_array()) {
      std::string device =
          item.is_integer() ? std::to_string(*item.value<int64_t>()) : *item.value<std::string>();
      if (!seen.insert(device).second)
        return fail_at(r.location(item), "'gpus.devices' lists GPU {} twice", device);
      gpus.devices.push_back(device);
    }
    if (gpus.devices.empty())
      return fail_at(r.where("gpus.devices"), "'gpus.devices' must not be empty");
  }
  gpus.count = r.integer_at("gpus.count");
  gpus.arch = r.string_at("gpus.arch");
  return {};
}

// As the system_directories table spells paths: lexically normal, no trailing '/'.
std::string normal_directory(const std::string& path) {
  std::string text = std::filesystem::path(path).lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

Result<void> read_caches(const ValueReader& r, Profile& profile) {
  auto root = r.string_at("caches.root");
  profile.caches.root = root.value_or(state_paths::default_cache_root(profile.name).string());
  if (root)
    if (auto reason = system_directory_reason(normal_directory(*root)))
      return fail_at(r.where("caches.root"), "'caches.root' must not be '{}': {}", *root, *reason);
  if (const toml::node* node = r.node_at("caches.paths")) {
    std::vector<std::string> names;
    for (const auto& cache : jit_caches()) names.emplace_back(cache.name);
    for (auto&& [key, value] : *node->as_table()) {
      const std::string path = "caches.paths." + std::string(key.str());
      if (!find_jit_cache(key.str()))
        return fail_at(r.key_location(key, value), "unknown cache '{}'{}", key.str(),
                       did_you_mean_suffix(key.str(), names));
      auto directory = value.value<std::string>();
      if (!value.is_string() || !has_shape(Shape::absolute_path, *directory))
        return fail_at(r.location(value), "'{}' must be an absolute path", path);
      // A clear empties the directory: none that holds the system's or another owner's data.
      if (auto reason = system_directory_reason(normal_directory(*directory)))
        return fail_at(r.location(value), "'{}' must not be '{}': {}", path, *directory, *reason);
      profile.caches.overrides[std::string(key.str())] = *directory;
    }
  }
  return {};
}

Result<void> read_server(const ValueReader& r, Profile& profile) {
  auto& server = profile.server;
  server.host = r.string_at("server.host").value_or(server.host);
  const EngineRow& row = engine_row(profile.engine.kind);
  server.port = r.integer_at("server.port").value_or(row.default_port);
  server.health_path = r.string_at("server.health_path").value_or(std::string(row.health_path));
  server.ready_timeout = r.duration_at("server.ready_timeout").value_or(server.ready_timeout);
  server.watchdog = r.duration_at("server.watchdog").value_or(server.watchdog);
  server.drain_timeout = r.duration_at("server.drain_timeout").value_or(server.drain_timeout);
  server.liveness = row.liveness.default_mode;
  if (auto mode = r.string_at("server.liveness")) {
    auto parsed = parse_liveness_mode(*mode);
    if (!parsed)
      return fail_at(r.where("server.liveness"),
                     "'server.liveness' must be generate, metrics, health or off, got '{}'{}",
                     *mode, did_you_mean_suffix(*mode, liveness_mode_names()));
    server.liveness = *parsed;
  }
  server.liveness_interval =
      r.duration_at("server.liveness_interval").value_or(server.liveness_interval);
  server.liveness_timeout =
      r.duration_at("server.liveness_timeout").value_or(server.liveness_timeout);
  if (auto ready = r.string_at("server.ready")) {
    static const std::vector<std::string> kReady{"health", "generate"};
    if (std::find(kReady.begin(), kReady.end(), *ready) == kReady.end())
      return fail_at(r.where("server.ready"),
                     "'server.ready' must be health or generate, got '{}'{}", *ready,
                     did_you_mean_suffix(*ready, kReady));
    server.ready = *ready == "generate" ? ReadyOn::generate : ReadyOn::health;
  }
  return {};
}

Result<void> read_restart(const ValueReader& r, Profile& profile) {
  auto& restart = profile.restart;
  if (auto policy = r.string_at("restart.policy")) {
    static const std::vector<std::string> kPolicies{"on-failure", "always", "no"};
    if (std::find(kPolicies.begin(), kPolicies.end(), *policy) == kPolicies.end())
      return fail_at(r.where("restart.policy"),
                     "'restart.policy' must be on-failure, always or no, got '{}'{}", *policy,
                     did_you_mean_suffix(*policy, kPolicies));
    restart.policy = *policy;
  }
  restart.delay = r.duration_at("restart.delay").value_or(restart.delay);
  restart.max_delay = r.duration_at("restart.max_delay").value_or(restart.max_delay);
  restart.stable_after = r.duration_at("restart.stable_after").value_or(restart.stable_after);
  restart.budget = r.integer_at("restart.budget").value_or(restart.budget);
  restart.probation = r.duration_at("restart.probation").value_or(restart.probation);
  restart.step_down = r.boolean_at("restart.step_down").value_or(restart.step_down);
  return {};
}

Result<void> read_service(const ValueReader& r, Profile& profile) {
  auto& service = profile.service;
  service.user = r.string_at("service.user");
  service.share_user = r.boolean_at("service.share_user").value_or(service.share_user);
  // Only a named account can be shared: the default one is the profile's own.
  if (service.share_user && !service.user)
    return fail_at(r.where("service.share_user"),
                   "'service.share_user' needs 'service.user': the default user "
                   "gpulaunch-NAME is the profile's own");
  service.group = r.string_at("service.group");
  service.memory_max = r.memory_at("service.memory_max");
  service.allow_unsafe_extra =
      r.boolean_at("service.allow_unsafe_extra").value_or(service.allow_unsafe_extra);
  service.extra = r.strings_at("service.extra");
  service.allow = r.strings_at("service.allow");
  service.unit_extra = r.strings_at("service.unit_extra");
  return {};
}

// [secrets]: NAME = "/etc/gpulaunch/secrets/file". The file itself is checked at `up` and
// `check` (profile/secret_files.hpp); here only its name and path.
Result<void> read_secrets(const ValueReader& r, Profile& profile) {
  const toml::node* node = r.node_at("secrets");
  if (!node) return {};
  for (auto&& [key, value] : *node->as_table()) {
    const std::string name{key.str()};
    if (!is_variable_name(name))
      return fail_at(r.key_location(key, value),
                     "'secrets.{}' is not a valid secret name (letters, digits, '_')", name);
    const auto file = value.value<std::string>();
    if (!value.is_string() || !has_shape(Shape::absolute_path, *file) ||
        file->find_first_of(" \t\"'\\") != std::string::npos)
      return fail_at(r.location(value),
                     "'secrets.{}' must be the absolute path of a file holding the secret, "
                     "without spaces, quotes or backslashes",
                     name);
    profile.secrets[name] = *file;
  }
  return {};
}

Result<void> read_env(const ValueReader& r, Profile& profile) {
  const toml::node* node = r.node_at("env");
  if (!node) return {};
  for (auto&& [key, value] : *node->as_table()) {
    const Location at = r.key_location(key, value);
    std::string name{key.str()};
    if (!is_variable_name(name)) return fail_at(at, "'env.{}' is not a valid variable name", name);
    // gpulaunch pins these itself (catalog/pinned_variables); their own keys change them.
    if (const PinnedVariable* pinned = find_pinned_variable(name))
      return fail_at(at, "'env.{}' is pinned by gpulaunch; set '{}' instead", name,
                     pinned->instead);
    for (const auto& cache : jit_caches())
      for (const auto& variable : cache.variables)
        if (variable.name == name)
          return fail_at(at, "'env.{}' is pinned by gpulaunch; set 'caches.paths.{}' instead", name,
                         cache.name);
    std::string text;
    if (value.is_string())
      text = *value.value<std::string>();
    else if (value.is_integer())
      text = std::to_string(*value.value<int64_t>());
    else
      text = *value.value<bool>() ? "1" : "0";
    if (text.find('\0') != std::string::npos)
      return fail_at(r.location(value), "'env.{}' contains a NUL byte", name);
    profile.env[name] = text;
  }
  return {};
}

Result<void> read_gate(const ValueReader& r, Profile& profile) {
  auto& gate = profile.gate;
  if (r.node_at("gate.prompts")) gate.prompts = r.strings_at("gate.prompts");
  for (const auto& prompt : gate.prompts)
    if (prompt.find_first_not_of(" \t") == std::string::npos)
      return fail_at(r.where("gate.prompts"), "'gate.prompts' holds an empty prompt");
  gate.max_tokens = static_cast<int>(r.integer_at("gate.max_tokens").value_or(gate.max_tokens));
  gate.min_shared_prefix = r.number_at("gate.min_shared_prefix").value_or(gate.min_shared_prefix);
  gate.min_throughput = r.number_at("gate.min_throughput").value_or(gate.min_throughput);
  gate.requests = static_cast<int>(r.integer_at("gate.requests").value_or(gate.requests));
  gate.concurrency = static_cast<int>(r.integer_at("gate.concurrency").value_or(gate.concurrency));
  gate.max_duration = r.duration_at("gate.max_duration").value_or(gate.max_duration);
  gate.retries = static_cast<int>(r.integer_at("gate.retries").value_or(gate.retries));
  if (gate.concurrency > gate.requests)
    return fail_at(r.where("gate.concurrency"),
                   "'gate.concurrency' ({}) is more than 'gate.requests' ({})", gate.concurrency,
                   gate.requests);
  return {};
}

}  // namespace

Result<void> read_sections(const ValueReader& reader, Profile& profile) {
  for (auto step : {read_top, read_engine, read_model, read_parallelism, read_nodes,
                    read_speculative, read_toolkit, read_gpus, read_caches, read_server,
                    read_restart, read_gate, read_service, read_secrets, read_env})
    GL_TRY_VOID(step(reader, profile));
  return {};
}

}  // namespace gl
