#include "profile/schema.hpp"

#include <array>

namespace gl {
namespace {

constexpr std::array kSchema{
    KeySpec{"description", KeyType::string, "One line shown in the unit's Description="},
    KeySpec{"extends", KeyType::string, "Name of a profile whose keys this one starts from"},

    KeySpec{"engine", KeyType::table, "The inference server"},
    KeySpec{"engine.kind", KeyType::string, "sglang, vllm, trtllm or command"},
    KeySpec{"engine.venv", KeyType::string, "Virtual environment holding the engine"},
    KeySpec{"engine.python", KeyType::string, "Python interpreter, when there is no venv"},
    KeySpec{"engine.executable", KeyType::string, "Launcher to run instead of the default"},
    KeySpec{"engine.args", KeyType::string_array, "Extra arguments, passed verbatim"},
    KeySpec{"engine.argv", KeyType::string_array, "kind = \"command\": the whole command line"},
    KeySpec{"engine.mem_fraction", KeyType::number,
            "GPU memory fraction (--mem-fraction-static, --gpu-memory-utilization)"},
    KeySpec{"engine.max_requests", KeyType::integer,
            "Concurrent requests (--max-running-requests, --max-num-seqs)"},
    KeySpec{"engine.cuda_graph_max_bs", KeyType::integer, "SGLang --cuda-graph-max-bs"},

    KeySpec{"model", KeyType::table, "What to serve"},
    KeySpec{"model.path", KeyType::string, "Absolute local path or hub id"},
    KeySpec{"model.served_name", KeyType::string, "Name clients ask for"},
    KeySpec{"model.revision", KeyType::string, "Hub revision to pin"},

    KeySpec{"parallelism", KeyType::table, "How ranks are laid out"},
    KeySpec{"parallelism.tp", KeyType::integer, "Tensor parallel size"},
    KeySpec{"parallelism.pp", KeyType::integer, "Pipeline parallel size"},
    KeySpec{"parallelism.ep", KeyType::integer, "Expert parallel size"},
    KeySpec{"parallelism.dp", KeyType::integer, "Data parallel size"},
    KeySpec{"parallelism.dp_attention", KeyType::boolean, "SGLang data-parallel attention"},
    KeySpec{"parallelism.nodes", KeyType::integer, "Nodes the ranks span"},
    KeySpec{"parallelism.dist_init_addr", KeyType::string, "host:port of rank 0 (nodes > 1)"},

    KeySpec{"nodes", KeyType::table, "The hosts of a multi-node profile, reached over SSH"},
    KeySpec{"nodes.hosts", KeyType::string_array, "Hosts in rank order (rank 0 first)"},
    KeySpec{"nodes.ssh_user", KeyType::string, "User ssh logs in as (default: ssh's own)"},
    KeySpec{"nodes.ssh_port", KeyType::integer, "Port of each node's sshd (default 22)"},
    KeySpec{"nodes.ssh_identity", KeyType::string, "Private key ssh uses (-i)"},
    KeySpec{"nodes.ssh_known_hosts", KeyType::string, "known_hosts file, checked strictly"},
    KeySpec{"nodes.dist_init_port", KeyType::integer,
            "Port on the first host for the default dist_init_addr (default 5000)"},
    KeySpec{"nodes.gpulaunch", KeyType::string,
            "gpulaunch on each node (default /usr/bin/gpulaunch)"},

    KeySpec{"speculative", KeyType::table, "Speculative decoding"},
    KeySpec{"speculative.algorithm", KeyType::string, "Engine's name for it: EAGLE3, DFLASH, ..."},
    KeySpec{"speculative.draft_model", KeyType::string, "Draft model path or hub id"},
    KeySpec{"speculative.num_steps", KeyType::integer, "Draft steps"},
    KeySpec{"speculative.eagle_topk", KeyType::integer, "Branching per step"},
    KeySpec{"speculative.num_draft_tokens", KeyType::integer, "Tokens verified per step"},

    KeySpec{"toolkit", KeyType::table, "The CUDA toolkit JIT compilers use"},
    KeySpec{"toolkit.cuda_home", KeyType::string, "Toolkit root pinned as CUDA_HOME"},
    KeySpec{"toolkit.min_version", KeyType::string, "Lowest acceptable toolkit version"},
    KeySpec{"toolkit.arch_list", KeyType::string, "Architectures to compile for, \"12.0f\""},

    KeySpec{"gpus", KeyType::table, "Which GPUs the engine gets"},
    KeySpec{"gpus.devices", KeyType::device_array, "Indices or UUIDs"},
    KeySpec{"gpus.count", KeyType::integer, "First N GPUs, when devices is not given"},
    KeySpec{"gpus.arch", KeyType::string, "Expected compute capability, \"12.0\""},

    KeySpec{"caches", KeyType::table, "Where JIT caches live"},
    KeySpec{"caches.root", KeyType::string, "Root of this profile's caches"},
    KeySpec{"caches.paths", KeyType::free_table, "Per-cache directory overrides"},

    KeySpec{"server", KeyType::table, "The HTTP endpoint"},
    KeySpec{"server.host", KeyType::string, "Address to listen on"},
    KeySpec{"server.port", KeyType::integer, "Port to listen on"},
    KeySpec{"server.health_path", KeyType::string, "Path answering 200 once serving"},
    KeySpec{"server.ready_timeout", KeyType::duration, "Longest model load before failing"},
    KeySpec{"server.watchdog", KeyType::duration, "Health silence before a restart"},

    KeySpec{"restart", KeyType::table, "What happens when the engine stops"},
    KeySpec{"restart.policy", KeyType::string, "on-failure, always or no"},
    KeySpec{"restart.delay", KeyType::duration, "First restart delay"},
    KeySpec{"restart.max_delay", KeyType::duration, "Cap of the doubling delay"},
    KeySpec{"restart.stable_after", KeyType::duration, "Uptime that resets the backoff"},
    KeySpec{"restart.budget", KeyType::integer, "Failed starts before staying down"},
    KeySpec{"restart.step_down", KeyType::boolean, "Lower memory knobs after an OOM"},

    KeySpec{"service", KeyType::table, "The systemd service"},
    KeySpec{"service.user", KeyType::string, "User= to run as"},
    KeySpec{"service.group", KeyType::string, "Group= to run as"},
    KeySpec{"service.memory_max", KeyType::memory, "MemoryMax= host memory limit"},
    KeySpec{"service.extra", KeyType::string_array, "Extra Key=Value lines for [Service]"},
    KeySpec{"service.unit_extra", KeyType::string_array, "Extra Key=Value lines for [Unit]"},

    KeySpec{"env", KeyType::free_table, "Extra environment variables"},
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
