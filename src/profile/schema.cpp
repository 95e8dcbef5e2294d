// SPDX-License-Identifier: Apache-2.0
#include "profile/schema.hpp"

#include <array>
#include <vector>

#include "catalog/engine_knobs.hpp"

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

// Rows are built by assignment: g++ 12 warns about members a designated initializer leaves out.
constexpr KeySpec key(std::string_view path, KeyType type, size_t max_length, Shape shape,
                      std::optional<Range> range, std::string_view sample, std::string_view help) {
  KeySpec spec{};
  spec.path = path;
  spec.type = type;
  spec.max_length = max_length;
  spec.shape = shape;
  spec.range = range;
  spec.sample = sample;
  spec.help = help;
  return spec;
}
constexpr KeySpec section(std::string_view path, std::string_view help) {
  return key(path, KeyType::table, 0, Shape::text, std::nullopt, "", help);
}
constexpr KeySpec string(std::string_view path, size_t max_length, Shape shape,
                         std::string_view sample, std::string_view help) {
  return key(path, KeyType::string, max_length, shape, std::nullopt, sample, help);
}
constexpr KeySpec strings(std::string_view path, size_t max_length, Shape shape,
                          std::string_view sample, std::string_view help) {
  return key(path, KeyType::string_array, max_length, shape, std::nullopt, sample, help);
}
constexpr KeySpec integer(std::string_view path, double low, double high, std::string_view sample,
                          std::string_view help) {
  return key(path, KeyType::integer, 0, Shape::text, Range{low, high}, sample, help);
}
constexpr KeySpec boolean(std::string_view path, std::string_view sample, std::string_view help) {
  return key(path, KeyType::boolean, 0, Shape::text, std::nullopt, sample, help);
}
// Bounds in seconds.
constexpr KeySpec duration(std::string_view path, double low, double high, std::string_view sample,
                           std::string_view help) {
  return key(path, KeyType::duration, kName, Shape::text, Range{low, high}, sample, help);
}
constexpr KeySpec free_table(std::string_view path, size_t max_length, std::string_view sample,
                             std::string_view help) {
  return key(path, KeyType::free_table, max_length, Shape::text, std::nullopt, sample, help);
}

constexpr double kPorts[] = {1, 65535};
constexpr double kDay = 86400;

constexpr std::array kSchemaHead{
    string("description", kText, Shape::text, R"("A test")",
           "One line shown in the unit's Description="),
    string("extends", kName, Shape::text, R"("parent")",
           "Name of a profile whose keys this one starts from"),

    section("engine", "The inference server"),
    string("engine.kind", kName, Shape::text, R"("vllm")",
           "Which engine: a kind listed under ENGINES"),
    string("engine.venv", kPath, Shape::absolute_path, R"("/opt/other")",
           "Virtual environment holding the engine"),
    string("engine.image", kText, Shape::image_reference, R"("localhost/vllm-openai:v0.11.0")",
           "OCI image holding the engine, run under rootful podman instead of a venv"),
    string("engine.python", kPath, Shape::absolute_path, R"("/usr/bin/python3")",
           "Python interpreter, when there is no venv"),
    string("engine.executable", kPath, Shape::absolute_path, R"("/opt/bin/serve")",
           "Launcher to run instead of the default"),
    strings("engine.args", kArgument, Shape::any, R"(["--trust-remote-code"])",
            "Extra arguments, passed verbatim"),
    strings("engine.argv", kArgument, Shape::any, R"(["/opt/bin/other"])",
            "kind = \"command\": the whole command line"),
    // Then the keys passed through to the engine: catalog/engine_knobs (kSchemaTail below).
};

constexpr std::array kSchemaTail{
    section("model", "What to serve"),
    string("model.path", kPath, Shape::model_path, R"("org/other")",
           "Absolute local path or hub id"),
    string("model.served_name", kHost, Shape::text, R"("chat")", "Name clients ask for"),
    string("model.revision", kHost, Shape::text, R"("v2")", "Hub revision to pin"),
    boolean("model.prefetch", "true",
            "Read the weight files into the page cache before each start (gpulaunch warm)"),

    section("parallelism", "How ranks are laid out"),
    integer("parallelism.tp", 1, 1024, "2", "Tensor parallel size"),
    integer("parallelism.pp", 1, 1024, "2", "Pipeline parallel size"),
    integer("parallelism.ep", 1, 1024, "2", "Expert parallel size"),
    integer("parallelism.dp", 1, 1024, "2", "Data parallel size"),
    boolean("parallelism.dp_attention", "true", "SGLang data-parallel attention"),
    integer("parallelism.nodes", 1, 1024, "2", "Nodes the ranks span"),
    string("parallelism.dist_init_addr", kHostPort, Shape::host_port, R"("10.0.0.2:5000")",
           "host:port of rank 0 (nodes > 1)"),

    section("nodes", "The hosts of a multi-node profile, reached over SSH"),
    strings("nodes.hosts", kHost, Shape::host, R"(["node-a", "node-b"])",
            "Hosts in rank order (rank 0 first)"),
    string("nodes.ssh_user", kName, Shape::ssh_user, R"("admin")",
           "User ssh logs in as (default: ssh's own)"),
    integer("nodes.ssh_port", kPorts[0], kPorts[1], "2222",
            "Port of each node's sshd (default 22)"),
    string("nodes.ssh_identity", kPath, Shape::absolute_path, R"("/root/.ssh/id_ed25519")",
           "Private key ssh uses (-i)"),
    string("nodes.ssh_known_hosts", kPath, Shape::absolute_path, R"("/etc/ssh/known")",
           "known_hosts file, checked strictly"),
    integer("nodes.dist_init_port", kPorts[0], kPorts[1], "6000",
            "Port on the first host for the default dist_init_addr (default 5000)"),
    string("nodes.gpulaunch", kPath, Shape::absolute_path, R"("/opt/bin/gpulaunch")",
           "gpulaunch on each node (default /usr/bin/gpulaunch)"),

    section("speculative", "Speculative decoding"),
    string("speculative.algorithm", kName, Shape::word, R"("DFLASH")",
           "A method the chosen engine has, in any case (see ENGINES): SGLang's EAGLE3, NEXTN, "
           "..., vLLM's eagle3, mtp, ..."),
    string("speculative.draft_model", kPath, Shape::text, R"("org/draft")",
           "Draft model path or hub id"),
    integer("speculative.num_steps", 1, 64, "3",
            "Draft steps, one token each; vLLM's num_speculative_tokens"),
    integer("speculative.eagle_topk", 1, 64, "2", "Branching per step (SGLang; vLLM takes 1)"),
    integer("speculative.num_draft_tokens", 1, 64, "4",
            "Tokens verified per step: num_steps + 1 with eagle_topk 1"),

    section("toolkit", "The CUDA toolkit JIT compilers use"),
    string("toolkit.cuda_home", kPath, Shape::toolkit_root, R"("/usr/local/cuda-13.0")",
           "Toolkit root pinned as CUDA_HOME: bin/nvcc, libcudart in lib64/ or lib/, and "
           "include/cuda_runtime.h (what the JIT links and includes)"),
    string("toolkit.min_version", kName, Shape::toolkit_version, R"("13.0")",
           "Lowest acceptable toolkit version"),
    string(
        "toolkit.arch_list", kText, Shape::arch_list, R"("12.0f")",
        "FLASHINFER_CUDA_ARCH_LIST in FlashInfer's grammar: entries separated by single "
        "spaces, \"9.0a 12.0f\"; an a or f suffix goes to nvcc as is (f needs nvcc >= 12.9), "
        "FlashInfer adds its own to the others; no ';', ',' or +PTX. TORCH_CUDA_ARCH_LIST gets the "
        "same architectures in torch's grammar (\"9.0a;12.0\": torch has no f targets)"),

    section("gpus", "Which GPUs the engine gets"),
    key("gpus.devices", KeyType::device_array, kName * 2, Shape::gpu_device, Range{0, 1023},
        R"([1, "2"])",
        "Indices or GPU- UUIDs; a MIG- UUID only alone, for a one-rank engine that runs on MIG"),
    integer("gpus.count", 1, 1024, "2", "First N GPUs, when devices is not given"),
    string("gpus.arch", kName, Shape::compute_capability, R"("12.0")",
           "Expected compute capability, \"12.0\""),

    section("caches", "Where JIT caches live"),
    string("caches.root", kPath, Shape::absolute_path, R"("/srv/cache")",
           "Root of this profile's caches"),
    free_table("caches.paths", kPath, R"({ triton = "/srv/triton" })",
               "Per-cache directory overrides"),

    section("server", "The HTTP endpoint"),
    string("server.host", kHost, Shape::listen_address, R"("0.0.0.0")", "Address to listen on"),
    integer("server.port", kPorts[0], kPorts[1], "8080", "Port to listen on"),
    string("server.health_path", kText, Shape::url_path, R"("/ready")",
           "Path answering 200 once serving"),
    duration("server.ready_timeout", 1, kDay, R"("30min")", "Longest model load before failing"),
    duration("server.watchdog", 0, 3600, "60", "Health silence before a restart"),
    duration("server.drain_timeout", 1, 3600, R"("2min")",
             "How long a stop or restart lets in-flight requests finish before SIGKILL"),
    string("server.liveness", kName, Shape::text, R"("metrics")",
           "How a serving engine proves forward progress: generate, metrics, health or off"),
    duration("server.liveness_interval", 5, 3600, R"("1min")",
             "Time between two liveness looks (metrics, or a generation probe)"),
    duration("server.liveness_timeout", 10, 3600, R"("2min")",
             "No forward progress this long is a stall"),
    string("server.ready", kName, Shape::text, R"("generate")",
           "READY=1 on health 200, or on the first generation: health or generate"),

    section("restart", "What happens when the engine stops"),
    string("restart.policy", kName, Shape::text, R"("always")", "on-failure, always or no"),
    duration("restart.delay", 1, 3600, "20", "First restart delay"),
    duration("restart.max_delay", 1, kDay, R"("10min")", "Cap of the doubling delay"),
    duration("restart.stable_after", 1, 7 * kDay, R"("20min")",
             "Serving this long forgives the failures before (the backoff starts over) and steps "
             "a stepped-down knob back up one level, at the next stop (default 10min)"),
    integer("restart.budget", 1, 1000, "3",
            "Starts in a row that failed to serve before staying down: never ready, or died "
            "within restart.probation of ready (default 5)"),
    duration("restart.probation", 0, kDay, R"("10min")",
             "A death this soon after ready counts toward restart.budget; a later one restarts "
             "after the backoff, forever, and is never counted (default 5min)"),
    boolean("restart.step_down", "false", "Lower memory knobs after an OOM"),

    section("gate", "Upgrade gate: fixed greedy prompts a changed deployment must still answer"),
    strings("gate.prompts", kText, Shape::text, R"(["The capital of France is"])",
            "Prompts sent greedily (temperature 0); none: no gate"),
    integer("gate.max_tokens", 1, 4096, "64", "Tokens per answer (default 32)"),
    key("gate.min_shared_prefix", KeyType::number, 0, Shape::text, Range{0, 1, true}, "0.9",
        "Share of the recorded answer's words a new one must repeat from its start (default 1: the "
        "same text)"),
    key("gate.min_throughput", KeyType::number, 0, Shape::text, Range{0, 1, true}, "0.7",
        "Share of the recorded tokens/s the load must reach (default 0.5)"),
    integer("gate.requests", 1, 1024, "32", "Completions in the throughput load (default 16)"),
    integer("gate.concurrency", 1, 256, "8", "Load requests in flight at once (default 4)"),
    duration("gate.max_duration", 1, 600, R"("2min")", "Bound on the whole gate (default 60 s)"),
    integer("gate.retries", 0, 5, "3", "Times a failed request is sent again (default 2)"),

    section("service", "The systemd service"),
    string("service.user", kName, Shape::account_name, R"("llm")",
           "User= to run as (default: the profile's own gpulaunch-NAME)"),
    boolean("service.share_user", "true",
            "Let another installed profile run as the same service.user"),
    string("service.group", kName, Shape::account_name, R"("llm")", "Group= to run as"),
    key("service.memory_max", KeyType::memory, kName, Shape::memory_size, std::nullopt, R"("900G")",
        "MemoryMax= host memory limit"),
    strings("service.extra", kLine, Shape::directive, R"(["Nice=5"])",
            "Extra Key=Value lines for [Service]"),
    strings("service.unit_extra", kLine, Shape::directive, R"(["After=network-online.target"])",
            "Extra Key=Value lines for [Unit]"),
    strings("service.allow", kName, Shape::word, R"(["ptrace", "gdrdrv"])",
            "Vetted sandbox extras by name (gpulaunch catalog sandbox): ptrace, perf_event_open, "
            "gdrdrv, xpmem, mps, memlock"),
    boolean("service.allow_unsafe_extra", "true",
            "Let extra and unit_extra run privileged commands, change the user or relax the "
            "hardening: root-equivalent"),

    free_table("secrets", kPath, R"({ HF_TOKEN = "/etc/gpulaunch/secrets/hf" })",
               "NAME = a root-owned 0600 file, passed as systemd credential NAME"),

    free_table("env", kArgument, R"({ MY_FLAG = "1" })", "Extra environment variables"),
};

// The engine section's keys, the pass-through knobs read from their own table, the rest.
std::vector<KeySpec> schema() {
  std::vector<KeySpec> keys(kSchemaHead.begin(), kSchemaHead.end());
  for (const EngineKnobKey& knob : engine_knob_keys())
    keys.push_back(
        key(knob.key, knob.value == KnobValue::integer ? KeyType::integer : KeyType::number, 0,
            Shape::text, Range{knob.low, knob.high, knob.above_low}, knob.sample, knob.help));
  keys.insert(keys.end(), kSchemaTail.begin(), kSchemaTail.end());
  return keys;
}

const std::vector<KeySpec>& schema_keys() {
  static const std::vector<KeySpec> keys = schema();
  return keys;
}

}  // namespace

std::span<const KeySpec> profile_schema() {
  return schema_keys();
}

const KeySpec* find_key(std::string_view path) {
  for (const auto& spec : schema_keys())
    if (spec.path == path) return &spec;
  return nullptr;
}

std::vector<std::string> child_keys(std::string_view parent) {
  std::vector<std::string> keys;
  for (const auto& spec : schema_keys()) {
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
