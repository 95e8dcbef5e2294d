#include "profile/section_readers.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include "catalog/engines.hpp"
#include "catalog/jit_caches.hpp"
#include "catalog/system_directories.hpp"
#include "profile/shapes.hpp"
#include "profile/toml_parse.hpp"
#include "profile/unsafe_directives.hpp"
#include "util/did_you_mean.hpp"
#include "util/state_paths.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// Variables gpulaunch pins itself; a profile changes them through their own keys.
struct PinnedVariable {
  std::string_view name;
  std::string_view instead;
};
constexpr PinnedVariable kPinned[] = {
    {"CUDA_HOME", "toolkit.cuda_home"},
    {"CUDA_PATH", "toolkit.cuda_home"},
    {"PATH", "engine.venv"},
    {"LD_LIBRARY_PATH", "toolkit.cuda_home"},
    {"CUDA_VISIBLE_DEVICES", "gpus.devices"},
    {"CUDA_DEVICE_ORDER", "gpus.devices"},
    {"FLASHINFER_CUDA_ARCH_LIST", "toolkit.arch_list"},
    {"TORCH_CUDA_ARCH_LIST", "toolkit.arch_list"},
};

// Directives gpulaunch writes itself; service.extra may not replace them.
constexpr std::string_view kOwnedDirectives[] = {"Type",         "ExecStart",   "NotifyAccess",
                                                 "ExecStopPost", "Environment", "WatchdogSec"};

Result<void> read_top(const ValueReader& r, Profile& profile) {
  GL_TRY(auto description, r.text_at("description"));
  profile.description = description.value_or("");
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

  for (auto [key, target] :
       {std::pair{"engine.venv", &engine.venv}, std::pair{"engine.python", &engine.python},
        std::pair{"engine.executable", &engine.executable}}) {
    GL_TRY(*target, r.path_at(key));
  }
  engine.args = r.strings_at("engine.args");
  engine.argv = r.strings_at("engine.argv");
  GL_TRY_VOID(r.no_nul("engine.args", engine.args));
  GL_TRY_VOID(r.no_nul("engine.argv", engine.argv));

  if (const toml::node* node = r.node_at("engine.mem_fraction")) {
    double value = *node->value<double>();
    if (!(value > 0.0 && value <= 1.0))
      return fail_at(r.where("engine.mem_fraction"),
                     "'engine.mem_fraction' must be above 0 and at most 1, got {}", value);
    engine.mem_fraction = value;
  }
  GL_TRY(engine.max_requests, r.integer_at("engine.max_requests", 1, 1'000'000));
  GL_TRY(engine.cuda_graph_max_bs, r.integer_at("engine.cuda_graph_max_bs", 1, 4096));
  return {};
}

Result<void> read_model(const ValueReader& r, Profile& profile) {
  GL_TRY(auto path, r.text_at("model.path"));
  if (!path) return {};  // required or not: cross_rules
  if (!is_absolute_path(*path) && !is_hub_id(*path))
    return fail_at(r.where("model.path"),
                   "'model.path' must be an absolute path or a hub id like 'org/name', got '{}'",
                   *path);
  profile.model.path = *path;
  GL_TRY(profile.model.served_name, r.text_at("model.served_name"));
  GL_TRY(profile.model.revision, r.text_at("model.revision"));
  return {};
}

// [nodes]: the hosts in rank order. parallelism.nodes follows their count (or must equal it),
// and dist_init_addr defaults to the first host.
Result<void> read_nodes(const ValueReader& r, Profile& profile) {
  auto& nodes = profile.nodes;
  nodes.hosts = r.strings_at("nodes.hosts");
  GL_TRY_VOID(r.no_nul("nodes.hosts", nodes.hosts));
  for (size_t i = 0; i < nodes.hosts.size(); ++i) {
    if (!is_host(nodes.hosts[i]))
      return fail_at(r.where("nodes.hosts"),
                     "'nodes.hosts' entry {} must be a host name or address, got '{}'", i,
                     nodes.hosts[i]);
    for (size_t j = 0; j < i; ++j)
      if (nodes.hosts[j] == nodes.hosts[i])
        return fail_at(r.where("nodes.hosts"), "'nodes.hosts' lists '{}' twice (ranks {} and {})",
                       nodes.hosts[i], j, i);
  }
  GL_TRY(nodes.ssh_user, r.text_at("nodes.ssh_user"));
  GL_TRY_VOID(r.integer_into("nodes.ssh_port", 1, 65535, nodes.ssh_port));
  GL_TRY_VOID(r.integer_into("nodes.dist_init_port", 1, 65535, nodes.dist_init_port));
  GL_TRY(nodes.ssh_identity, r.path_at("nodes.ssh_identity"));
  GL_TRY(nodes.ssh_known_hosts, r.path_at("nodes.ssh_known_hosts"));
  GL_TRY(auto binary, r.path_at("nodes.gpulaunch"));
  if (binary) nodes.gpulaunch = *binary;

  if (nodes.hosts.empty()) {
    if (r.node_at("nodes"))
      return fail_at(r.where("nodes"), "'nodes' needs 'nodes.hosts', the hosts in rank order");
    return {};
  }
  auto& p = profile.parallelism;
  const auto count = static_cast<long long>(nodes.hosts.size());
  if (r.node_at("parallelism.nodes") && p.nodes != count)
    return fail_at(r.where("parallelism.nodes"),
                   "'parallelism.nodes' = {} but 'nodes.hosts' lists {} host(s); they must agree",
                   p.nodes, count);
  p.nodes = count;
  if (!p.dist_init_addr) {
    const std::string& first = nodes.hosts.front();
    p.dist_init_addr = fmt::format("{}:{}", first, nodes.dist_init_port);
  }
  return {};
}

Result<void> read_parallelism(const ValueReader& r, Profile& profile) {
  auto& p = profile.parallelism;
  for (auto [key, target] : {std::pair{"parallelism.tp", &p.tp}, std::pair{"parallelism.pp", &p.pp},
                             std::pair{"parallelism.ep", &p.ep}, std::pair{"parallelism.dp", &p.dp},
                             std::pair{"parallelism.nodes", &p.nodes}})
    GL_TRY_VOID(r.integer_into(key, 1, 1024, *target));
  if (const toml::node* node = r.node_at("parallelism.dp_attention"))
    p.dp_attention = *node->value<bool>();
  GL_TRY(p.dist_init_addr, r.text_at("parallelism.dist_init_addr"));
  GL_TRY_VOID(read_nodes(r, profile));
  if (p.dist_init_addr) {
    if (!host_port(*p.dist_init_addr))
      return fail_at(r.where("parallelism.dist_init_addr"),
                     "'parallelism.dist_init_addr' must be host:port, got '{}'", *p.dist_init_addr);
  }
  return {};
}

Result<void> read_speculative(const ValueReader& r, Profile& profile) {
  if (!r.node_at("speculative")) return {};
  SpeculativeSettings spec;
  GL_TRY(auto algorithm, r.text_at("speculative.algorithm"));
  if (!algorithm)
    return fail_at(r.where("speculative"), "missing required key 'speculative.algorithm'");
  if (!is_word(*algorithm))
    return fail_at(r.where("speculative.algorithm"),
                   "'speculative.algorithm' must be a name like EAGLE3 or DFLASH, got '{}'",
                   *algorithm);
  spec.algorithm = *algorithm;
  GL_TRY(spec.draft_model, r.text_at("speculative.draft_model"));
  for (auto [key, target] : {std::pair{"speculative.num_steps", &spec.num_steps},
                             std::pair{"speculative.eagle_topk", &spec.eagle_topk},
                             std::pair{"speculative.num_draft_tokens", &spec.num_draft_tokens}}) {
    GL_TRY(*target, r.integer_at(key, 1, 64));
  }
  profile.speculative = std::move(spec);
  return {};
}

Result<void> read_toolkit(const ValueReader& r, Profile& profile) {
  GL_TRY(auto cuda_home, r.path_at("toolkit.cuda_home"));
  if (cuda_home && cuda_home->find_first_of(": ") != std::string::npos)
    return fail_at(r.where("toolkit.cuda_home"),
                   "'toolkit.cuda_home' must not contain ':' or spaces (it goes into PATH)");
  profile.toolkit.cuda_home = cuda_home;
  GL_TRY(auto min_version, r.text_at("toolkit.min_version"));
  if (min_version && !is_toolkit_version(*min_version))
    return fail_at(r.where("toolkit.min_version"),
                   "'toolkit.min_version' must look like \"13.0\", got '{}'", *min_version);
  profile.toolkit.min_version = min_version;
  GL_TRY(auto arch_list, r.text_at("toolkit.arch_list"));
  if (arch_list && !is_arch_list(*arch_list))
    return fail_at(
        r.where("toolkit.arch_list"),
        "'toolkit.arch_list' must list architectures like \"12.0f\" or \"9.0a 10.0a\", got '{}'",
        *arch_list);
  profile.toolkit.arch_list = arch_list;
  return {};
}

Result<void> read_gpus(const ValueReader& r, Profile& profile) {
  auto& gpus = profile.gpus;
  if (const toml::node* node = r.node_at("gpus.devices")) {
    std::set<std::string> seen;
    for (auto&& item : *node->as_array()) {
      std::string device;
      if (item.is_integer()) {
        long long index = *item.value<int64_t>();
        if (index < 0 || index > 1023)
          return fail_at(r.location(item),
                         "'gpus.devices' index must be between 0 and 1023, got {}", index);
        device = std::to_string(index);
      } else {
        device = *item.value<std::string>();
        if (!is_gpu_device(device))
          return fail_at(r.location(item),
                         "'gpus.devices' entries must be indices or GPU-/MIG- UUIDs, got '{}'",
                         device);
      }
      if (!seen.insert(device).second)
        return fail_at(r.location(item), "'gpus.devices' lists GPU {} twice", device);
      gpus.devices.push_back(device);
    }
    if (gpus.devices.empty())
      return fail_at(r.where("gpus.devices"), "'gpus.devices' must not be empty");
  }
  GL_TRY(gpus.count, r.integer_at("gpus.count", 1, 1024));
  GL_TRY(auto arch, r.text_at("gpus.arch"));
  if (arch && !is_compute_capability(*arch))
    return fail_at(r.where("gpus.arch"),
                   "'gpus.arch' must be a compute capability like \"12.0\", got '{}'", *arch);
  gpus.arch = arch;
  return {};
}

Result<void> read_caches(const ValueReader& r, Profile& profile) {
  // As the system_directories table spells paths: lexically normal, no trailing '/'.
  auto normal_directory = [](const std::string& path) {
    std::string text = std::filesystem::path(path).lexically_normal().string();
    while (text.size() > 1 && text.back() == '/') text.pop_back();
    return text;
  };
  GL_TRY(auto root, r.path_at("caches.root"));
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
      if (!value.is_string() || !is_absolute_path(*directory) ||
          has_control_or_nul(*directory, false))
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
  GL_TRY(auto host, r.text_at("server.host"));
  if (host) {
    if (host->empty() || host->find_first_of(" /") != std::string::npos)
      return fail_at(r.where("server.host"),
                     "'server.host' must be an address or host name, got '{}'", *host);
    server.host = *host;
  }
  server.port = engine_row(profile.engine.kind).default_port;
  server.health_path = engine_row(profile.engine.kind).health_path;
  GL_TRY_VOID(r.integer_into("server.port", 1, 65535, server.port));
  GL_TRY(auto health, r.text_at("server.health_path"));
  if (health) {
    if (health->empty() || health->front() != '/' || health->find(' ') != std::string::npos)
      return fail_at(r.where("server.health_path"),
                     "'server.health_path' must start with '/', got '{}'", *health);
    server.health_path = *health;
  }
  GL_TRY_VOID(
      r.duration_into("server.ready_timeout", Seconds{1}, Seconds{86400}, server.ready_timeout));
  return r.duration_into("server.watchdog", Seconds{0}, Seconds{3600}, server.watchdog);
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
  GL_TRY_VOID(r.duration_into("restart.delay", Seconds{1}, Seconds{3600}, restart.delay));
  GL_TRY_VOID(r.duration_into("restart.max_delay", Seconds{1}, Seconds{86400}, restart.max_delay));
  GL_TRY_VOID(r.duration_into("restart.stable_after", Seconds{1}, Seconds{7 * 86400},
                              restart.stable_after));
  GL_TRY_VOID(r.integer_into("restart.budget", 1, 1000, restart.budget));
  if (const toml::node* node = r.node_at("restart.step_down"))
    restart.step_down = *node->value<bool>();
  return {};
}

Result<void> read_service(const ValueReader& r, Profile& profile) {
  auto& service = profile.service;
  for (auto [key, target] :
       {std::pair{"service.user", &service.user}, std::pair{"service.group", &service.group}}) {
    GL_TRY(auto value, r.text_at(key));
    if (value && !is_account_name(*value))
      return fail_at(r.where(key), "'{}' must be a user or group name, got '{}'", key, *value);
    *target = value;
  }
  if (const toml::node* node = r.node_at("service.memory_max")) {
    std::string text =
        node->is_integer() ? std::to_string(*node->value<int64_t>()) : *node->value<std::string>();
    if (!is_memory_size(text))
      return fail_at(r.where("service.memory_max"),
                     "'service.memory_max' must be a size like \"900G\", a percentage or "
                     "\"infinity\", got '{}'",
                     text);
    service.memory_max = text;
  }
  if (const toml::node* node = r.node_at("service.allow_unsafe_extra"))
    service.allow_unsafe_extra = *node->value<bool>();
  for (auto [key, target] : {std::pair{"service.extra", &service.extra},
                             std::pair{"service.unit_extra", &service.unit_extra}}) {
    *target = r.strings_at(key);
    const toml::node* node = r.node_at(key);
    for (size_t i = 0; i < target->size(); ++i) {
      const Location at = r.location(*node->as_array()->get(i));
      const std::string& line = (*target)[i];
      if (!is_directive(line) || has_control_or_nul(line, false))
        return fail_at(at, "'{}' entries must be single 'Key=Value' lines, got '{}'", key, line);
      if (line.ends_with('\\'))
        return fail_at(at,
                       "'{}' entries must not end with '\\' (systemd would join the next "
                       "line to it)",
                       key);
      std::string_view name = std::string_view(line).substr(0, line.find('='));
      for (auto owned : kOwnedDirectives)
        if (name == owned)
          return fail_at(at, "'{}' may not set {}= (gpulaunch writes it)", key, name);
      if (service.allow_unsafe_extra) continue;
      if (auto reason = unsafe_directive_reason(line))
        return fail_at(at,
                       "'{}' may not hold '{}': {} (only with 'service.allow_unsafe_extra = "
                       "true', which makes the profile root-equivalent)",
                       key, line, *reason);
    }
  }
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
    if (!value.is_string() || !is_absolute_path(*file) ||
        file->find_first_of(" \t\"'\\") != std::string::npos || has_control_or_nul(*file, false))
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
    for (const auto& [secret, file] : profile.secrets)
      if (name == secret || name == secret + "_PATH")
        return fail_at(at, "'env.{}' is set by 'secrets.{}' (its value stays out of the unit)",
                       name, secret);
    for (const auto& pinned : kPinned)
      if (pinned.name == name)
        return fail_at(at, "'env.{}' is pinned by gpulaunch; set '{}' instead", name,
                       pinned.instead);
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

}  // namespace

Result<void> read_sections(const ValueReader& reader, Profile& profile) {
  for (auto step :
       {read_top, read_engine, read_model, read_parallelism, read_speculative, read_toolkit,
        read_gpus, read_caches, read_server, read_restart, read_service, read_secrets, read_env})
    GL_TRY_VOID(step(reader, profile));
  return {};
}

}  // namespace gl
