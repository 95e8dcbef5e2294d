#include "profile/validate.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "catalog/jit_caches.hpp"
#include "catalog/system_directories.hpp"
#include "profile/schema.hpp"
#include "profile/shapes.hpp"
#include "profile/toml_parse.hpp"
#include "profile/unsafe_directives.hpp"
#include "util/did_you_mean.hpp"
#include "util/state_paths.hpp"

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

bool has_control_or_nul(std::string_view text, bool allow_newline_tab) {
  return std::any_of(text.begin(), text.end(), [&](char c) {
    auto u = static_cast<unsigned char>(c);
    if (allow_newline_tab) return u == 0;
    return u < 0x20 || u == 0x7f;
  });
}

// Names of env variables, caches and secrets.
constexpr size_t kMaxFreeKeyLength = 255;

bool is_absolute_path(std::string_view text) {
  return !text.empty() && text.front() == '/';
}

class Validator {
 public:
  explicit Validator(const MergedProfile& merged)
      // A missing key is reported against the profile's own file.
      : merged_(merged), table_(merged.table), fallback_{merged.file} {}

  Result<Profile> run() {
    if (auto shape = check_table(table_, ""); !shape) return std::unexpected(shape.error());
    Profile profile;
    profile.name = merged_.name;
    profile.sources = merged_.sources;
    for (auto step : {&Validator::read_top, &Validator::read_engine, &Validator::read_model,
                      &Validator::read_parallelism, &Validator::read_speculative,
                      &Validator::read_toolkit, &Validator::read_gpus, &Validator::read_caches,
                      &Validator::read_server, &Validator::read_restart, &Validator::read_service,
                      &Validator::read_secrets, &Validator::read_env, &Validator::check_layout}) {
      if (auto done = (this->*step)(profile); !done) return std::unexpected(done.error());
    }
    return profile;
  }

 private:
  // --- structure: unknown keys and types ---------------------------------------------------

  Result<void> check_table(const toml::table& table, const std::string& parent) {
    for (auto&& [key, node] : table) {
      const std::string path =
          parent.empty() ? std::string(key.str()) : parent + "." + std::string(key.str());
      const KeySpec* spec = find_key(path);
      if (!spec) {
        Location where = key_location(key, node);
        auto siblings = child_keys(parent);
        std::string hint;
        if (auto close = did_you_mean(key.str(), siblings))
          hint = " (did you mean '" + (parent.empty() ? *close : parent + "." + *close) + "'?)";
        else if (auto elsewhere = key_elsewhere(key.str()))
          hint = " (did you mean '" + *elsewhere + "'?)";
        return fail_at(where, "unknown key '{}'{}", path, hint);
      }
      if (auto typed = check_type(node, *spec); !typed) return typed;
      if (spec->type == KeyType::table)
        if (auto inner = check_table(*node.as_table(), path); !inner) return inner;
    }
    return {};
  }

  // "tp" under [engine] most likely belongs to [parallelism].
  static std::optional<std::string> key_elsewhere(std::string_view key) {
    for (const auto& spec : profile_schema()) {
      auto dot = spec.path.rfind('.');
      if (dot != std::string_view::npos && spec.path.substr(dot + 1) == key)
        return std::string(spec.path);
    }
    return std::nullopt;
  }

  Result<void> check_type(const toml::node& node, const KeySpec& spec) {
    const Location where = location_of(node, fallback_);
    auto wrong = [&]() {
      return fail_at(where, "'{}' must be {}, not {}", spec.path, key_type_name(spec.type),
                     toml_type_name(node));
    };
    switch (spec.type) {
      case KeyType::table:
        return node.is_table() ? Result<void>{} : wrong();
      case KeyType::free_table: {
        if (!node.is_table()) return wrong();
        for (auto&& [key, value] : *node.as_table()) {
          if (key.str().size() > kMaxFreeKeyLength)
            return fail_at(key_location(key, value),
                           "a key in '{}' is {} bytes long, over the limit of {}", spec.path,
                           key.str().size(), kMaxFreeKeyLength);
          if (!value.is_string() && !value.is_integer() && !value.is_boolean())
            return fail_at(location_of(value, where), "'{}.{}' must be a string, not {}", spec.path,
                           key.str(), toml_type_name(value));
          if (auto bounded = within_length(value, fmt::format("'{}.{}'", spec.path, key.str()),
                                           spec.max_length, where);
              !bounded)
            return bounded;
        }
        return {};
      }
      case KeyType::string:
        if (!node.is_string()) return wrong();
        return within_length(node, fmt::format("'{}'", spec.path), spec.max_length, where);
      case KeyType::integer:
        return node.is_integer() ? Result<void>{} : wrong();
      case KeyType::number:
        return node.is_number() ? Result<void>{} : wrong();
      case KeyType::boolean:
        return node.is_boolean() ? Result<void>{} : wrong();
      case KeyType::duration:
      case KeyType::memory:
        if (!node.is_integer() && !node.is_string()) return wrong();
        return within_length(node, fmt::format("'{}'", spec.path), spec.max_length, where);
      case KeyType::string_array:
      case KeyType::device_array: {
        if (!node.is_array()) return wrong();
        size_t index = 0;
        for (auto&& item : *node.as_array()) {
          bool ok = item.is_string() || (spec.type == KeyType::device_array && item.is_integer());
          if (!ok)
            return fail_at(location_of(item, where), "'{}' must be {}, but holds {}", spec.path,
                           key_type_name(spec.type), toml_type_name(item));
          if (auto bounded = within_length(item, fmt::format("'{}' element {}", spec.path, index++),
                                           spec.max_length, where);
              !bounded)
            return bounded;
        }
        return {};
      }
    }
    return {};
  }

  // Every string gets a bound before anything reads it (see KeySpec::max_length).
  Result<void> within_length(const toml::node& node, const std::string& what, size_t limit,
                             const Location& fallback) const {
    const auto* text = node.as_string();
    if (!text || text->get().size() <= limit) return {};
    return fail_at(location_of(node, fallback), "{} is {} bytes long, over the limit of {}", what,
                   text->get().size(), limit);
  }

  Location key_location(const toml::key& key, const toml::node& node) const {
    const auto& source = key.source();
    if (source.path && source.begin.line != 0)
      return Location{*source.path, source.begin.line, source.begin.column};
    return location_of(node, fallback_);
  }

  // --- typed access --------------------------------------------------------------------------

  const toml::node* node_at(std::string_view path) const { return table_.at_path(path).node(); }

  Location where(std::string_view path) const {
    if (const toml::node* node = node_at(path)) return location_of(*node, fallback_);
    // A missing key: point at its section if there is one.
    auto dot = path.rfind('.');
    if (dot != std::string_view::npos) return where(path.substr(0, dot));
    return fallback_;
  }

  std::optional<std::string> string_at(std::string_view path) const {
    if (const toml::node* node = node_at(path)) return node->value<std::string>();
    return std::nullopt;
  }

  Result<std::optional<std::string>> text_at(std::string_view path) const {
    auto value = string_at(path);
    if (value && has_control_or_nul(*value, false))
      return fail_at(where(path), "'{}' must not contain control characters", path);
    return value;
  }

  Result<std::optional<std::string>> path_at(std::string_view path) const {
    auto value = text_at(path);
    if (!value || !*value) return value;
    if (!is_absolute_path(**value))
      return fail_at(where(path), "'{}' must be an absolute path, got '{}'", path, **value);
    return value;
  }

  Result<std::optional<long long>> integer_at(std::string_view path, long long low,
                                              long long high) const {
    const toml::node* node = node_at(path);
    if (!node) return std::optional<long long>{};
    long long value = *node->value<int64_t>();
    if (value < low || value > high)
      return fail_at(where(path), "'{}' must be between {} and {}, got {}", path, low, high, value);
    return std::optional<long long>{value};
  }

  Result<void> integer_into(std::string_view path, long long low, long long high,
                            long long& target) const {
    auto value = integer_at(path, low, high);
    if (!value) return std::unexpected(value.error());
    if (*value) target = **value;
    return {};
  }

  Result<void> duration_into(std::string_view path, Seconds low, Seconds high,
                             Seconds& target) const {
    const toml::node* node = node_at(path);
    if (!node) return {};
    std::optional<Seconds> value;
    if (node->is_integer()) {
      value = Seconds{*node->value<int64_t>()};
    } else {
      value = parse_duration(*node->value<std::string>());
      if (!value)
        return fail_at(where(path), "'{}' is not a duration: '{}' (use seconds or \"20min\")", path,
                       *node->value<std::string>());
    }
    if (*value < low || *value > high)
      return fail_at(where(path), "'{}' must be between {} and {}, got {}", path,
                     format_duration(low), format_duration(high), format_duration(*value));
    target = *value;
    return {};
  }

  std::vector<std::string> strings_at(std::string_view path) const {
    std::vector<std::string> values;
    if (const toml::node* node = node_at(path))
      for (auto&& item : *node->as_array()) values.push_back(*item.value<std::string>());
    return values;
  }

  Result<void> no_nul(std::string_view path, const std::vector<std::string>& values) const {
    const toml::node* node = node_at(path);
    for (size_t i = 0; i < values.size(); ++i)
      if (values[i].find('\0') != std::string::npos)
        return fail_at(location_of(*node->as_array()->get(i), fallback_),
                       "'{}' element {} contains a NUL byte, which no argv can carry", path, i);
    return {};
  }

  // --- sections ------------------------------------------------------------------------------

  Result<void> read_top(Profile& profile) {
    auto description = text_at("description");
    if (!description) return std::unexpected(description.error());
    profile.description = description->value_or("");
    return {};
  }

  Result<void> read_engine(Profile& profile) {
    auto& engine = profile.engine;
    auto kind = string_at("engine.kind");
    if (!kind) return fail_at(where("engine.kind"), "missing required key 'engine.kind'");
    static const std::vector<std::string> kKinds{"sglang", "vllm", "trtllm", "command"};
    if (*kind == "sglang")
      engine.kind = EngineKind::sglang;
    else if (*kind == "vllm")
      engine.kind = EngineKind::vllm;
    else if (*kind == "trtllm")
      engine.kind = EngineKind::trtllm;
    else if (*kind == "command")
      engine.kind = EngineKind::command;
    else
      return fail_at(where("engine.kind"),
                     "'engine.kind' must be sglang, vllm, trtllm or command, got '{}'{}", *kind,
                     did_you_mean_suffix(*kind, kKinds));

    for (auto [key, target] :
         {std::pair{"engine.venv", &engine.venv}, std::pair{"engine.python", &engine.python},
          std::pair{"engine.executable", &engine.executable}}) {
      auto value = path_at(key);
      if (!value) return std::unexpected(value.error());
      *target = *value;
    }
    engine.args = strings_at("engine.args");
    engine.argv = strings_at("engine.argv");
    if (auto ok = no_nul("engine.args", engine.args); !ok) return ok;
    if (auto ok = no_nul("engine.argv", engine.argv); !ok) return ok;

    if (engine.venv && engine.python)
      return fail_at(where("engine.python"), "set 'engine.venv' or 'engine.python', not both");
    switch (engine.kind) {
      case EngineKind::sglang:
        if (!engine.venv && !engine.python)
          return fail_at(where("engine"),
                         "engine kind 'sglang' needs 'engine.venv' or 'engine.python'");
        break;
      case EngineKind::vllm:
      case EngineKind::trtllm:
        if (!engine.venv && !engine.executable)
          return fail_at(where("engine"),
                         "engine kind '{}' needs 'engine.venv' or 'engine.executable'", *kind);
        break;
      case EngineKind::command:
        if (engine.argv.empty())
          return fail_at(where("engine.argv"), "engine kind 'command' needs 'engine.argv'");
        if (!is_absolute_path(engine.argv.front()))
          return fail_at(where("engine.argv"),
                         "'engine.argv' must start with an absolute path, got '{}'",
                         engine.argv.front());
        if (engine.argv.front().find_first_of("\"'\\") != std::string::npos)
          return fail_at(where("engine.argv"),
                         "'engine.argv' executable path must not contain quotes or backslashes "
                         "(systemd cannot load it)");
        break;
    }
    if (engine.kind != EngineKind::command && !engine.argv.empty())
      return fail_at(where("engine.argv"),
                     "'engine.argv' is only for kind = \"command\"; use 'engine.args'");

    if (const toml::node* node = node_at("engine.mem_fraction")) {
      double value = *node->value<double>();
      if (!(value > 0.0 && value <= 1.0))
        return fail_at(where("engine.mem_fraction"),
                       "'engine.mem_fraction' must be above 0 and at most 1, got {}", value);
      engine.mem_fraction = value;
    }
    auto max_requests = integer_at("engine.max_requests", 1, 1'000'000);
    if (!max_requests) return std::unexpected(max_requests.error());
    engine.max_requests = *max_requests;
    auto graph_bs = integer_at("engine.cuda_graph_max_bs", 1, 4096);
    if (!graph_bs) return std::unexpected(graph_bs.error());
    engine.cuda_graph_max_bs = *graph_bs;
    if (engine.cuda_graph_max_bs && engine.kind != EngineKind::sglang)
      return fail_at(where("engine.cuda_graph_max_bs"),
                     "'engine.cuda_graph_max_bs' applies to sglang only");
    return {};
  }

  Result<void> read_model(Profile& profile) {
    auto path = text_at("model.path");
    if (!path) return std::unexpected(path.error());
    if (!*path) {
      if (profile.engine.kind == EngineKind::command) return {};  // its argv names the model
      return fail_at(where("model.path"), "missing required key 'model.path'");
    }
    if (!is_absolute_path(**path) && !is_hub_id(**path))
      return fail_at(where("model.path"),
                     "'model.path' must be an absolute path or a hub id like 'org/name', got '{}'",
                     **path);
    profile.model.path = **path;
    auto served = text_at("model.served_name");
    if (!served) return std::unexpected(served.error());
    profile.model.served_name = *served;
    auto revision = text_at("model.revision");
    if (!revision) return std::unexpected(revision.error());
    profile.model.revision = *revision;
    if (profile.model.revision && profile.model.is_local())
      return fail_at(where("model.revision"),
                     "'model.revision' applies to hub ids, not local paths");
    return {};
  }

  // [nodes]: the hosts in rank order. parallelism.nodes follows their count (or must equal it),
  // and dist_init_addr defaults to the first host.
  Result<void> read_nodes(Profile& profile) {
    auto& nodes = profile.nodes;
    nodes.hosts = strings_at("nodes.hosts");
    if (auto ok = no_nul("nodes.hosts", nodes.hosts); !ok) return ok;
    for (size_t i = 0; i < nodes.hosts.size(); ++i) {
      if (!is_host(nodes.hosts[i]))
        return fail_at(where("nodes.hosts"),
                       "'nodes.hosts' entry {} must be a host name or address, got '{}'", i,
                       nodes.hosts[i]);
      for (size_t j = 0; j < i; ++j)
        if (nodes.hosts[j] == nodes.hosts[i])
          return fail_at(where("nodes.hosts"), "'nodes.hosts' lists '{}' twice (ranks {} and {})",
                         nodes.hosts[i], j, i);
    }
    auto user = text_at("nodes.ssh_user");
    if (!user) return std::unexpected(user.error());
    nodes.ssh_user = *user;
    if (auto ok = integer_into("nodes.ssh_port", 1, 65535, nodes.ssh_port); !ok) return ok;
    if (auto ok = integer_into("nodes.dist_init_port", 1, 65535, nodes.dist_init_port); !ok)
      return ok;
    auto identity = path_at("nodes.ssh_identity");
    if (!identity) return std::unexpected(identity.error());
    nodes.ssh_identity = *identity;
    auto known_hosts = path_at("nodes.ssh_known_hosts");
    if (!known_hosts) return std::unexpected(known_hosts.error());
    nodes.ssh_known_hosts = *known_hosts;
    auto binary = path_at("nodes.gpulaunch");
    if (!binary) return std::unexpected(binary.error());
    if (*binary) nodes.gpulaunch = **binary;

    if (nodes.hosts.empty()) {
      if (node_at("nodes"))
        return fail_at(where("nodes"), "'nodes' needs 'nodes.hosts', the hosts in rank order");
      return {};
    }
    auto& p = profile.parallelism;
    const auto count = static_cast<long long>(nodes.hosts.size());
    if (node_at("parallelism.nodes") && p.nodes != count)
      return fail_at(where("parallelism.nodes"),
                     "'parallelism.nodes' = {} but 'nodes.hosts' lists {} host(s); they must agree",
                     p.nodes, count);
    p.nodes = count;
    if (!p.dist_init_addr) {
      const std::string& first = nodes.hosts.front();
      p.dist_init_addr = fmt::format("{}:{}", first, nodes.dist_init_port);
    }
    return {};
  }

  Result<void> read_parallelism(Profile& profile) {
    auto& p = profile.parallelism;
    for (auto [key, target] :
         {std::pair{"parallelism.tp", &p.tp}, std::pair{"parallelism.pp", &p.pp},
          std::pair{"parallelism.ep", &p.ep}, std::pair{"parallelism.dp", &p.dp},
          std::pair{"parallelism.nodes", &p.nodes}})
      if (auto ok = integer_into(key, 1, 1024, *target); !ok) return ok;
    if (const toml::node* node = node_at("parallelism.dp_attention"))
      p.dp_attention = *node->value<bool>();
    auto addr = text_at("parallelism.dist_init_addr");
    if (!addr) return std::unexpected(addr.error());
    p.dist_init_addr = *addr;
    if (auto ok = read_nodes(profile); !ok) return ok;

    const EngineKind kind = profile.engine.kind;
    if (p.dp_attention && kind != EngineKind::sglang)
      return fail_at(where("parallelism.dp_attention"),
                     "'parallelism.dp_attention' applies to sglang only");
    if (p.dp_attention && p.tp % p.dp != 0)
      return fail_at(where("parallelism.dp"),
                     "with dp_attention, 'parallelism.dp' ({}) must divide 'parallelism.tp' ({})",
                     p.dp, p.tp);
    if ((kind == EngineKind::sglang || kind == EngineKind::trtllm) && p.tp % p.ep != 0)
      return fail_at(where("parallelism.ep"),
                     "'parallelism.ep' ({}) must divide 'parallelism.tp' ({})", p.ep, p.tp);
    if (kind == EngineKind::vllm && p.ep != 1 && p.ep != p.tp * p.dp)
      return fail_at(
          where("parallelism.ep"),
          "vLLM's expert parallelism spans tp x dp ranks: 'parallelism.ep' must be 1 or {}, got {}",
          p.tp * p.dp, p.ep);
    if (p.nodes > 1) {
      if (kind == EngineKind::trtllm)
        return fail_at(where("parallelism.nodes"),
                       "multi-node trtllm-serve is not supported; set 'parallelism.nodes' to 1");
      if (kind != EngineKind::command && !p.dist_init_addr)
        return fail_at(
            where("parallelism.nodes"),
            "'parallelism.nodes' = {} needs 'parallelism.dist_init_addr' (host:port of rank 0)",
            p.nodes);
    }
    if (p.dist_init_addr) {
      if (!host_port(*p.dist_init_addr))
        return fail_at(where("parallelism.dist_init_addr"),
                       "'parallelism.dist_init_addr' must be host:port, got '{}'",
                       *p.dist_init_addr);
    }
    return {};
  }

  Result<void> read_speculative(Profile& profile) {
    if (!node_at("speculative")) return {};
    SpeculativeSettings spec;
    auto algorithm = text_at("speculative.algorithm");
    if (!algorithm) return std::unexpected(algorithm.error());
    if (!*algorithm)
      return fail_at(where("speculative"), "missing required key 'speculative.algorithm'");
    if (!is_word(**algorithm))
      return fail_at(where("speculative.algorithm"),
                     "'speculative.algorithm' must be a name like EAGLE3 or DFLASH, got '{}'",
                     **algorithm);
    spec.algorithm = **algorithm;
    auto draft = text_at("speculative.draft_model");
    if (!draft) return std::unexpected(draft.error());
    spec.draft_model = *draft;
    for (auto [key, target] : {std::pair{"speculative.num_steps", &spec.num_steps},
                               std::pair{"speculative.eagle_topk", &spec.eagle_topk},
                               std::pair{"speculative.num_draft_tokens", &spec.num_draft_tokens}}) {
      auto value = integer_at(key, 1, 64);
      if (!value) return std::unexpected(value.error());
      *target = *value;
    }
    if (profile.engine.kind == EngineKind::command || profile.engine.kind == EngineKind::trtllm)
      return fail_at(
          where("speculative"),
          "[speculative] is not rendered for engine kind '{}'; pass its flags in 'engine.args'",
          engine_kind_name(profile.engine.kind));
    profile.speculative = std::move(spec);
    return {};
  }

  Result<void> read_toolkit(Profile& profile) {
    auto cuda_home = path_at("toolkit.cuda_home");
    if (!cuda_home) return std::unexpected(cuda_home.error());
    profile.toolkit.cuda_home = *cuda_home;
    if (cuda_home->has_value() && (*cuda_home)->find_first_of(": ") != std::string::npos)
      return fail_at(where("toolkit.cuda_home"),
                     "'toolkit.cuda_home' must not contain ':' or spaces (it goes into PATH)");
    auto min_version = text_at("toolkit.min_version");
    if (!min_version) return std::unexpected(min_version.error());
    if (*min_version && !is_toolkit_version(**min_version))
      return fail_at(where("toolkit.min_version"),
                     "'toolkit.min_version' must look like \"13.0\", got '{}'", **min_version);
    profile.toolkit.min_version = *min_version;
    auto arch_list = text_at("toolkit.arch_list");
    if (!arch_list) return std::unexpected(arch_list.error());
    if (*arch_list && !is_arch_list(**arch_list))
      return fail_at(
          where("toolkit.arch_list"),
          "'toolkit.arch_list' must list architectures like \"12.0f\" or \"9.0a 10.0a\", got '{}'",
          **arch_list);
    profile.toolkit.arch_list = *arch_list;
    return {};
  }

  Result<void> read_gpus(Profile& profile) {
    auto& gpus = profile.gpus;
    if (const toml::node* node = node_at("gpus.devices")) {
      std::set<std::string> seen;
      for (auto&& item : *node->as_array()) {
        std::string device;
        if (item.is_integer()) {
          long long index = *item.value<int64_t>();
          if (index < 0 || index > 1023)
            return fail_at(location_of(item, fallback_),
                           "'gpus.devices' index must be between 0 and 1023, got {}", index);
          device = std::to_string(index);
        } else {
          device = *item.value<std::string>();
          if (!is_gpu_device(device))
            return fail_at(location_of(item, fallback_),
                           "'gpus.devices' entries must be indices or GPU-/MIG- UUIDs, got '{}'",
                           device);
        }
        if (!seen.insert(device).second)
          return fail_at(location_of(item, fallback_), "'gpus.devices' lists GPU {} twice", device);
        gpus.devices.push_back(device);
      }
      if (gpus.devices.empty())
        return fail_at(where("gpus.devices"), "'gpus.devices' must not be empty");
    }
    auto count = integer_at("gpus.count", 1, 1024);
    if (!count) return std::unexpected(count.error());
    gpus.count = *count;
    if (gpus.count && !gpus.devices.empty())
      return fail_at(where("gpus.count"), "set 'gpus.devices' or 'gpus.count', not both");
    auto arch = text_at("gpus.arch");
    if (!arch) return std::unexpected(arch.error());
    if (*arch && !is_compute_capability(**arch))
      return fail_at(where("gpus.arch"),
                     "'gpus.arch' must be a compute capability like \"12.0\", got '{}'", **arch);
    gpus.arch = *arch;
    return {};
  }

  Result<void> read_caches(Profile& profile) {
    // As the system_directories table spells paths: lexically normal, no trailing '/'.
    auto normal_directory = [](const std::string& path) {
      std::string text = std::filesystem::path(path).lexically_normal().string();
      while (text.size() > 1 && text.back() == '/') text.pop_back();
      return text;
    };
    auto root = path_at("caches.root");
    if (!root) return std::unexpected(root.error());
    profile.caches.root = root->value_or(state_paths::default_cache_root(profile.name).string());
    if (*root)
      if (auto reason = system_directory_reason(normal_directory(**root)))
        return fail_at(where("caches.root"), "'caches.root' must not be '{}': {}", **root, *reason);
    if (const toml::node* node = node_at("caches.paths")) {
      std::vector<std::string> names;
      for (const auto& cache : jit_caches()) names.emplace_back(cache.name);
      for (auto&& [key, value] : *node->as_table()) {
        const std::string path = "caches.paths." + std::string(key.str());
        if (!find_jit_cache(key.str()))
          return fail_at(key_location(key, value), "unknown cache '{}'{}", key.str(),
                         did_you_mean_suffix(key.str(), names));
        auto directory = value.value<std::string>();
        if (!value.is_string() || !is_absolute_path(*directory) ||
            has_control_or_nul(*directory, false))
          return fail_at(location_of(value, fallback_), "'{}' must be an absolute path", path);
        // A clear empties the directory: none that holds the system's or another owner's data.
        if (auto reason = system_directory_reason(normal_directory(*directory)))
          return fail_at(location_of(value, fallback_), "'{}' must not be '{}': {}", path,
                         *directory, *reason);
        profile.caches.overrides[std::string(key.str())] = *directory;
      }
    }
    return {};
  }

  Result<void> read_server(Profile& profile) {
    auto& server = profile.server;
    auto host = text_at("server.host");
    if (!host) return std::unexpected(host.error());
    if (*host) {
      if ((*host)->empty() || (*host)->find_first_of(" /") != std::string::npos)
        return fail_at(where("server.host"),
                       "'server.host' must be an address or host name, got '{}'", **host);
      server.host = **host;
    }
    server.port = profile.engine.kind == EngineKind::sglang ? 30000 : 8000;
    if (auto ok = integer_into("server.port", 1, 65535, server.port); !ok) return ok;
    auto health = text_at("server.health_path");
    if (!health) return std::unexpected(health.error());
    if (*health) {
      if ((*health)->empty() || (*health)->front() != '/' ||
          (*health)->find(' ') != std::string::npos)
        return fail_at(where("server.health_path"),
                       "'server.health_path' must start with '/', got '{}'", **health);
      server.health_path = **health;
    }
    if (auto ok =
            duration_into("server.ready_timeout", Seconds{1}, Seconds{86400}, server.ready_timeout);
        !ok)
      return ok;
    return duration_into("server.watchdog", Seconds{0}, Seconds{3600}, server.watchdog);
  }

  Result<void> read_restart(Profile& profile) {
    auto& restart = profile.restart;
    if (auto policy = string_at("restart.policy")) {
      static const std::vector<std::string> kPolicies{"on-failure", "always", "no"};
      if (std::find(kPolicies.begin(), kPolicies.end(), *policy) == kPolicies.end())
        return fail_at(where("restart.policy"),
                       "'restart.policy' must be on-failure, always or no, got '{}'{}", *policy,
                       did_you_mean_suffix(*policy, kPolicies));
      restart.policy = *policy;
    }
    if (auto ok = duration_into("restart.delay", Seconds{1}, Seconds{3600}, restart.delay); !ok)
      return ok;
    if (auto ok = duration_into("restart.max_delay", Seconds{1}, Seconds{86400}, restart.max_delay);
        !ok)
      return ok;
    if (restart.max_delay < restart.delay)
      return fail_at(where("restart.max_delay"),
                     "'restart.max_delay' ({}) is below 'restart.delay' ({})",
                     format_duration(restart.max_delay), format_duration(restart.delay));
    if (auto ok = duration_into("restart.stable_after", Seconds{1}, Seconds{7 * 86400},
                                restart.stable_after);
        !ok)
      return ok;
    if (auto ok = integer_into("restart.budget", 1, 1000, restart.budget); !ok) return ok;
    if (const toml::node* node = node_at("restart.step_down"))
      restart.step_down = *node->value<bool>();
    return {};
  }

  Result<void> read_service(Profile& profile) {
    auto& service = profile.service;
    for (auto [key, target] :
         {std::pair{"service.user", &service.user}, std::pair{"service.group", &service.group}}) {
      auto value = text_at(key);
      if (!value) return std::unexpected(value.error());
      if (*value && !is_account_name(**value))
        return fail_at(where(key), "'{}' must be a user or group name, got '{}'", key, **value);
      *target = *value;
    }
    if (const toml::node* node = node_at("service.memory_max")) {
      std::string text = node->is_integer() ? std::to_string(*node->value<int64_t>())
                                            : *node->value<std::string>();
      if (!is_memory_size(text))
        return fail_at(where("service.memory_max"),
                       "'service.memory_max' must be a size like \"900G\", a percentage or "
                       "\"infinity\", got '{}'",
                       text);
      service.memory_max = text;
    }
    if (const toml::node* node = node_at("service.allow_unsafe_extra"))
      service.allow_unsafe_extra = *node->value<bool>();
    for (auto [key, target] : {std::pair{"service.extra", &service.extra},
                               std::pair{"service.unit_extra", &service.unit_extra}}) {
      *target = strings_at(key);
      const toml::node* node = node_at(key);
      for (size_t i = 0; i < target->size(); ++i) {
        const Location at = location_of(*node->as_array()->get(i), fallback_);
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
  Result<void> read_secrets(Profile& profile) {
    const toml::node* node = node_at("secrets");
    if (!node) return {};
    for (auto&& [key, value] : *node->as_table()) {
      const std::string name{key.str()};
      if (!is_variable_name(name))
        return fail_at(key_location(key, value),
                       "'secrets.{}' is not a valid secret name (letters, digits, '_')", name);
      const auto file = value.value<std::string>();
      if (!value.is_string() || !is_absolute_path(*file) ||
          file->find_first_of(" \t\"'\\") != std::string::npos || has_control_or_nul(*file, false))
        return fail_at(location_of(value, fallback_),
                       "'secrets.{}' must be the absolute path of a file holding the secret, "
                       "without spaces, quotes or backslashes",
                       name);
      profile.secrets[name] = *file;
    }
    return {};
  }

  Result<void> read_env(Profile& profile) {
    const toml::node* node = node_at("env");
    if (!node) return {};
    for (auto&& [key, value] : *node->as_table()) {
      const Location at = key_location(key, value);
      std::string name{key.str()};
      if (!is_variable_name(name))
        return fail_at(at, "'env.{}' is not a valid variable name", name);
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
            return fail_at(at, "'env.{}' is pinned by gpulaunch; set 'caches.paths.{}' instead",
                           name, cache.name);
      std::string text;
      if (value.is_string())
        text = *value.value<std::string>();
      else if (value.is_integer())
        text = std::to_string(*value.value<int64_t>());
      else
        text = *value.value<bool>() ? "1" : "0";
      if (text.find('\0') != std::string::npos)
        return fail_at(location_of(value, fallback_), "'env.{}' contains a NUL byte", name);
      profile.env[name] = text;
    }
    return {};
  }

  // --- cross-key rules ----------------------------------------------------------------------

  Result<void> check_layout(Profile& profile) {
    const auto& p = profile.parallelism;
    const long long world = profile.world_size();
    if (world % p.nodes != 0)
      return fail_at(where("parallelism.nodes"), "{} ranks do not split evenly over {} nodes",
                     world, p.nodes);
    const long long needed = profile.gpus_per_node();
    if (profile.gpus.available() == 0) {
      profile.gpus.count = needed;
      return {};
    }
    if (needed > profile.gpus.available()) {
      const char* key = profile.gpus.devices.empty() ? "gpus.count" : "gpus.devices";
      return fail_at(where(key), "the engine needs {} GPUs per node ({}) but '{}' gives {}", needed,
                     profile.world_text(), key, profile.gpus.available());
    }
    return {};
  }

  const MergedProfile& merged_;
  const toml::table& table_;
  Location fallback_;
};

}  // namespace

Result<Profile> validate_profile(const MergedProfile& merged) {
  return Validator(merged).run();
}

Result<Profile> load_profile(const ProfileSource& source, std::string_view name_or_path) {
  auto merged = load_merged(source, name_or_path);
  if (!merged) return std::unexpected(merged.error());
  return validate_profile(*merged);
}

}  // namespace gl
