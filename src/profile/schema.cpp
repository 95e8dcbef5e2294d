#include "profile/schema.hpp"

#include <array>

namespace gl {
namespace {

// Longest string values, in bytes: every value gets a bound, so nothing later meets text of
// unbounded length (a regex, a unit line, an argv).
constexpr size_t kName = 64;             // identifiers, versions, durations, sizes
constexpr size_t kHost = 255;            // DNS names (RFC 1035), hub revisions, served names
constexpr size_t kHostPort = kHost + 7;  // "[host]:65535"
constexpr size_t kText = 1024;           // one line for people: a description, a URL path
constexpr size_t kPath = 4096;           // PATH_MAX
constexpr size_t kLine = 4096;           // one unit file directive
constexpr size_t kArgument = 16384;      // one argv word or environment value (JSON configs)

constexpr std::array kSchema{
    KeySpec{"description", KeyType::string, kText, "One line shown in the unit's Description="},
    KeySpec{"extends", KeyType::string, kName, "Name of a profile whose keys this one starts from"},

    KeySpec{"engine", KeyType::table, 0, "The inference server"},
    KeySpec{"engine.kind", KeyType::string, kName, "Which engine: a kind listed under ENGINES"},
    KeySpec{"engine.venv", KeyType::string, kPath, "Virtual environment holding the engine"},
    KeySpec{"engine.python", KeyType::string, kPath, "Python interpreter, when there is no venv"},
    KeySpec{"engine.executable", KeyType::string, kPath, "Launcher to run instead of the default"},
    KeySpec{"engine.args", KeyType::string_array, kArgument, "Extra arguments, passed verbatim"},
    KeySpec{"engine.argv", KeyType::string_array, kArgument,
            "kind = \"command\": the whole command line"},
    KeySpec{"engine.mem_fraction", KeyType::number, 0,
            "GPU memory fraction (the engine's flag under ENGINES)"},
    KeySpec{"engine.max_requests", KeyType::integer, 0,
            "Concurrent requests (the engine's flag under ENGINES)"},
    KeySpec{"engine.cuda_graph_max_bs", KeyType::integer, 0,
            "Largest CUDA graph batch (the engine's flag under ENGINES)"},

    KeySpec{"model", KeyType::table, 0, "What to serve"},
    KeySpec{"model.path", KeyType::string, kPath, "Absolute local path or hub id"},
    KeySpec{"model.served_name", KeyType::string, kHost, "Name clients ask for"},
    KeySpec{"model.revision", KeyType::string, kHost, "Hub revision to pin"},

    KeySpec{"parallelism", KeyType::table, 0, "How ranks are laid out"},
    KeySpec{"parallelism.tp", KeyType::integer, 0, "Tensor parallel size"},
    KeySpec{"parallelism.pp", KeyType::integer, 0, "Pipeline parallel size"},
    KeySpec{"parallelism.ep", KeyType::integer, 0, "Expert parallel size"},
    KeySpec{"parallelism.dp", KeyType::integer, 0, "Data parallel size"},
    KeySpec{"parallelism.dp_attention", KeyType::boolean, 0, "SGLang data-parallel attention"},
    KeySpec{"parallelism.nodes", KeyType::integer, 0, "Nodes the ranks span"},
    KeySpec{"parallelism.dist_init_addr", KeyType::string, kHostPort,
            "host:port of rank 0 (nodes > 1)"},

    KeySpec{"nodes", KeyType::table, 0, "The hosts of a multi-node profile, reached over SSH"},
    KeySpec{"nodes.hosts", KeyType::string_array, kHost, "Hosts in rank order (rank 0 first)"},
    KeySpec{"nodes.ssh_user", KeyType::string, kName, "User ssh logs in as (default: ssh's own)"},
    KeySpec{"nodes.ssh_port", KeyType::integer, 0, "Port of each node's sshd (default 22)"},
    KeySpec{"nodes.ssh_identity", KeyType::string, kPath, "Private key ssh uses (-i)"},
    KeySpec{"nodes.ssh_known_hosts", KeyType::string, kPath, "known_hosts file, checked strictly"},
    KeySpec{"nodes.dist_init_port", KeyType::integer, 0,
            "Port on the first host for the default dist_init_addr (default 5000)"},
    KeySpec{"nodes.gpulaunch", KeyType::string, kPath,
            "gpulaunch on each node (default /usr/bin/gpulaunch)"},

    KeySpec{"speculative", KeyType::table, 0, "Speculative decoding"},
    KeySpec{"speculative.algorithm", KeyType::string, kName,
            "Engine's name for it: EAGLE3, DFLASH, ..."},
    KeySpec{"speculative.draft_model", KeyType::string, kPath, "Draft model path or hub id"},
    KeySpec{"speculative.num_steps", KeyType::integer, 0, "Draft steps"},
    KeySpec{"speculative.eagle_topk", KeyType::integer, 0, "Branching per step"},
    KeySpec{"speculative.num_draft_tokens", KeyType::integer, 0, "Tokens verified per step"},

    KeySpec{"toolkit", KeyType::table, 0, "The CUDA toolkit JIT compilers use"},
    KeySpec{"toolkit.cuda_home", KeyType::string, kPath, "Toolkit root pinned as CUDA_HOME"},
    KeySpec{"toolkit.min_version", KeyType::string, kName, "Lowest acceptable toolkit version"},
    KeySpec{"toolkit.arch_list", KeyType::string, kText, "Architectures to compile for, \"12.0f\""},

    KeySpec{"gpus", KeyType::table, 0, "Which GPUs the engine gets"},
    KeySpec{"gpus.devices", KeyType::device_array, kName * 2, "Indices or UUIDs"},
    KeySpec{"gpus.count", KeyType::integer, 0, "First N GPUs, when devices is not given"},
    KeySpec{"gpus.arch", KeyType::string, kName, "Expected compute capability, \"12.0\""},

    KeySpec{"caches", KeyType::table, 0, "Where JIT caches live"},
    KeySpec{"caches.root", KeyType::string, kPath, "Root of this profile's caches"},
    KeySpec{"caches.paths", KeyType::free_table, kPath, "Per-cache directory overrides"},

    KeySpec{"server", KeyType::table, 0, "The HTTP endpoint"},
    KeySpec{"server.host", KeyType::string, kHost, "Address to listen on"},
    KeySpec{"server.port", KeyType::integer, 0, "Port to listen on"},
    KeySpec{"server.health_path", KeyType::string, kText, "Path answering 200 once serving"},
    KeySpec{"server.ready_timeout", KeyType::duration, kName, "Longest model load before failing"},
    KeySpec{"server.watchdog", KeyType::duration, kName, "Health silence before a restart"},

    KeySpec{"restart", KeyType::table, 0, "What happens when the engine stops"},
    KeySpec{"restart.policy", KeyType::string, kName, "on-failure, always or no"},
    KeySpec{"restart.delay", KeyType::duration, kName, "First restart delay"},
    KeySpec{"restart.max_delay", KeyType::duration, kName, "Cap of the doubling delay"},
    KeySpec{"restart.stable_after", KeyType::duration, kName, "Uptime that resets the backoff"},
    KeySpec{"restart.budget", KeyType::integer, 0, "Failed starts before staying down"},
    KeySpec{"restart.step_down", KeyType::boolean, 0, "Lower memory knobs after an OOM"},

    KeySpec{"service", KeyType::table, 0, "The systemd service"},
    KeySpec{"service.user", KeyType::string, kName, "User= to run as"},
    KeySpec{"service.group", KeyType::string, kName, "Group= to run as"},
    KeySpec{"service.memory_max", KeyType::memory, kName, "MemoryMax= host memory limit"},
    KeySpec{"service.extra", KeyType::string_array, kLine, "Extra Key=Value lines for [Service]"},
    KeySpec{"service.unit_extra", KeyType::string_array, kLine, "Extra Key=Value lines for [Unit]"},
    KeySpec{"service.allow_unsafe_extra", KeyType::boolean, 0,
            "Let extra and unit_extra run privileged commands, change the user or relax the "
            "hardening: root-equivalent"},

    KeySpec{"secrets", KeyType::free_table, kPath,
            "NAME = a root-owned 0600 file, passed as systemd credential NAME"},

    KeySpec{"env", KeyType::free_table, kArgument, "Extra environment variables"},
};

}  // namespace

std::span<const KeySpec> profile_schema() {
  return kSchema;
}

const KeySpec* find_key(std::string_view path) {
  for (const auto& spec : kSchema)
    if (spec.path == path) return &spec;
  return nullptr;
}

std::vector<std::string> child_keys(std::string_view parent) {
  std::vector<std::string> keys;
  for (const auto& spec : kSchema) {
    std::string_view path = spec.path;
    if (parent.empty()) {
      if (path.find('.') == std::string_view::npos) keys.emplace_back(path);
    } else if (path.size() > parent.size() + 1 && path.starts_with(parent) &&
               path[parent.size()] == '.' &&
               path.find('.', parent.size() + 1) == std::string_view::npos) {
      keys.emplace_back(path.substr(parent.size() + 1));
    }
  }
  return keys;
}

std::string_view key_type_name(KeyType type) {
  switch (type) {
    case KeyType::table:
    case KeyType::free_table:
      return "a table";
    case KeyType::string:
      return "a string";
    case KeyType::integer:
      return "an integer";
    case KeyType::number:
      return "a number";
    case KeyType::boolean:
      return "a boolean";
    case KeyType::string_array:
      return "an array of strings";
    case KeyType::device_array:
      return "an array of GPU indices or UUIDs";
    case KeyType::duration:
      return "a duration (seconds or \"20min\")";
    case KeyType::memory:
      return "a size (\"900G\", \"80%\" or \"infinity\")";
  }
  return "a value";
}

}  // namespace gl
