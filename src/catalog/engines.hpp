// SPDX-License-Identifier: Apache-2.0
#pragma once
// The engines gpulaunch runs, one row each: what the kind is called, how it is launched, the
// package it lives in, its port, health, memory and concurrency knobs, what it supports, the
// lines it prints while starting and when the GPU runs out of memory. Validation, argv building,
// step-down, progress, the OOM classifier, `check` and the man page all read this table, so a new
// engine is one row here (and an argv builder in engines/ only when its flags need logic).

#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/oom_signatures.hpp"

namespace gl {

enum class EngineKind { sglang, vllm, trtllm, llamacpp, command };

// A flag gpulaunch itself adds to an engine's command line (the argv builders in engines/,
// step-down, the drain bound, multi-node; never engine.args, which stay the user's), with the
// releases that take it. Keyed by the spelling current releases take, the one the row and the
// builders name; `before` is what releases before `since` take instead, if anything.
struct FlagVersions {
  EngineKind kind;
  std::string_view flag;
  std::string_view since;   // the first release that takes `flag`
  std::string_view before;  // empty: releases before `since` have no spelling of it
  std::string_view source;  // the upstream file and version this was read from
  // The range it was verified on: the newest release read that lacks the flag (it and older
  // ones are refused). Between it and `since` no release was read: `check` warns there instead
  // of refusing. Empty: every release before `since` is taken to lack it.
  std::string_view last_without = {};
};
std::span<const FlagVersions> flag_versions();
// The row for `flag` of `kind`; nullptr where the flag is in every release gpulaunch knows.
const FlagVersions* find_flag_versions(EngineKind kind, std::string_view flag);

// How the installed release spells `flag`. Unknown version: the conservative spelling (`before`
// where the newer releases still take it, else `flag`), with `version_unknown` set so `check`
// can say so. Known version older than `since` and no `before`: `spelling` empty, `needs` the
// first release that has one.
struct FlagSpelling {
  std::string_view spelling;
  std::string_view needs;
  bool version_unknown = false;
};
FlagSpelling spell_flag(EngineKind kind, std::string_view flag,
                        const std::optional<std::string>& version);

// What an engine is doing while it starts, from its own start-up lines (and its JIT caches
// growing): the one phase type of the progress line, `run`'s phase marks, the history's start
// timelines and the metrics' `phase` label. Kernel JIT builds (FlashInfer, DeepGEMM) and
// torch.compile are told apart where the engine's lines tell them apart. Names: wire names in
// supervise/start_timeline, words for people in engines/progress.
enum class Phase {
  process,        // the engine's process started; nothing said yet
  weights,        // loading the model's weights
  jit_compile,    // FlashInfer/Triton/DeepGEMM JIT builds (output, or the JIT caches growing)
  torch_compile,  // torch.compile / Inductor
  cuda_graphs,    // CUDA-graph capture
  health,         // the engine said it serves; waiting for its health (or generation) answer
  serving,        // ready: no longer a start phase (never in a start's timeline)
};

// How the profile names the program that serves.
enum class Launch {
  python_module,  // PYTHON -m MODULE; PYTHON is engine.venv's bin/python or engine.python
  venv_program,   // engine.venv's bin/PROGRAM, or engine.executable
  executable,     // engine.executable only: no Python environment
  argv,           // engine.argv is the whole command line
};

// Which engines/ function builds the command line: the row's flags are read by each.
enum class ArgvBuilder { sglang, vllm, trtllm, command, flags_only };

// What model.path may be.
enum class ModelSource {
  path_or_hub_id,  // an absolute path or "org/name"
  local_file,      // an absolute path only (a GGUF file)
  in_argv,         // optional: engine.argv names it
};

// How data-parallel ranks count toward the GPUs a node needs.
enum class DpGpus {
  replicas,                      // dp copies of the tp x pp group
  replicas_unless_dp_attention,  // SGLang: dp-attention splits the same tp GPUs
  none,                          // dp, if any, splits the same GPUs
};

// What expert parallelism must agree with.
enum class EpRule { any, divides_tp, one_or_tp_times_dp };

// Whether the engine runs on a MIG instance (a `MIG-` UUID in CUDA_VISIBLE_DEVICES). CUDA
// enumerates one MIG instance per process and NCCL has no MIG support (NVIDIA MIG user guide,
// "CUDA Device Enumeration"; NCCL #1716), so where any works it is one, with one rank.
enum class MigSupport { none, one_instance };
// What an engine's own defaults depend on: the GPUs of the unit and how the model is split over
// them. `run` fills it in from NVML and the profile; unknown where NVML cannot say.
struct GpuContext {
  std::optional<unsigned long long> memory_mib;  // the smallest of the unit's GPUs
  std::string name;                              // that GPU's name ("NVIDIA H200"); may be empty
  long long tp = 1;
  long long pp = 1;
};

// The value an engine picks for a knob the command line leaves unset, and why, in words for the
// journal ("vLLM default 0.92").
struct KnobDefault {
  double value = 0;
  std::string why;
};
using KnobDefaultFn = KnobDefault (*)(const GpuContext&);

// A memory or concurrency setting the supervisor lowers after an OOM (supervise/step_down).
struct EngineKnob {
  std::string_view flag;        // the current spelling; empty: the engine has none
  std::string_view short_flag;  // another spelling it takes in engine.args: short or deprecated
  // Where step-down starts when the flag is absent: the engine's own default on these GPUs;
  // nullptr: the engine sizes it itself, and step-down lowers it only where engine.args sets it.
  KnobDefaultFn engine_default = nullptr;
  // The largest value engine_default gives on any GPU: the ladder's length where the GPUs are
  // not known (record-exit, as root, counts levels without them; step_down stops at the floor).
  double default_ceiling = 0;
};

// The knob's default on these GPUs; nullopt when the engine sizes it itself.
std::optional<KnobDefault> knob_default(const EngineKnob& knob, const GpuContext& gpus);

// A speculative decoding method the engine has, in its own spelling, and what the other engine
// with [speculative] calls the same method (empty: it has none).
struct SpeculativeMethod {
  std::string_view name;
  std::string_view elsewhere;
};

struct ProgressMarker {
  std::string_view text;  // substring of one output line
  Phase phase;
  enum class Percent { none, in_line, complete } percent = Percent::none;
  // `ends`: the line says the phase is over (SGLang's "Load weight end", vLLM's "torch.compile
  // takes"); otherwise it is in progress (it begins, or goes on).
  enum class Edge { within, ends } edge = Edge::within;
};

// A multi-node group's flags, where the engine's builder reads them from the row (vLLM's). Two
// layouts: the tp x pp ranks of one replica span the nodes over torch.distributed (rank 0's
// master address), or whole data-parallel replicas sit on each node and join rank 0's
// data-parallel RPC port. Either way ranks >= 1 run `headless`: an executor or engine cores and
// no HTTP server, so nothing answers health there (run/ waits for their rendezvous instead).
struct MultiNodeFlags {
  std::string_view nnodes;
  std::string_view node_rank;
  std::string_view master_addr;  // a bare host; IPv6 without brackets
  std::string_view master_port;
  std::string_view dp_size_local;  // replicas on this node
  std::string_view dp_start_rank;  // the first replica on this node (ranks >= 1 only)
  std::string_view dp_address;     // rank 0's host
  std::string_view dp_rpc_port;
  std::string_view headless;  // ranks >= 1; empty: every rank serves HTTP
  // What a headless rank holds once it has joined (run/rendezvous reads it from /proc): a TCP
  // connection to rank 0's master port, which torch.distributed's store client keeps for the
  // group's life; with data-parallel replicas, a connection to rank 0's host on any port: the
  // RPC port serves the engine cores' handshake only, after which they hold connections to rank
  // 0's front-end sockets on ports rank 0 picks.
  bool dp_joins_any_port = false;
};

// How `run` tells a serving engine that still makes forward progress from one that only answers
// its health endpoint (server.liveness): a generation probe every interval, the engine's
// Prometheus metrics (requests in flight against a token counter), its health endpoint alone
// (systemd's watchdog fed by 200s), or nothing.
enum class LivenessMode { generate, metrics, health, off };
std::string_view liveness_mode_name(LivenessMode mode);
std::optional<LivenessMode> parse_liveness_mode(std::string_view name);
std::vector<std::string> liveness_mode_names();

// The smallest generation the engine's own API serves: one token. Empty path: none known.
struct GenerationProbe {
  std::string_view method;  // "GET" (no body) or "POST" (a JSON body)
  std::string_view path;
  // POST: the JSON field that caps the answer at one token in the engine's spelling
  // ("max_tokens", "n_predict"), and whether the body must name the served model.
  std::string_view one_token_field;
  bool names_model = false;
  std::string_view source;  // the upstream file and version this was read from
};

// Every way the engine takes the API key that guards its generation API (profile/api_key reads
// them). With a key, the probe's path answers 401 to a request without it. Empty: no key guards
// the probe's path.
struct ApiKeyFacts {
  std::span<const std::string_view> flags;       // the key itself, each spelling the engine takes
  std::span<const std::string_view> file_flags;  // a file of keys, one a line
  std::span<const std::string_view> variables;   // the key in the engine's environment
  // A YAML file of flags that may hold the key (vLLM's --config); gpulaunch does not open it.
  std::string_view config_flag;
  bool guards_metrics = false;  // the metrics path needs the key too
  std::string_view source;
};

// What the metrics endpoint answers: Prometheus' text exposition, or trtllm-serve's JSON list of
// the iteration statistics since the last read (each read drains them).
enum class MetricsFormat { prometheus, iteration_stats };
std::string_view metrics_format_name(MetricsFormat format);
std::optional<MetricsFormat> parse_metrics_format(std::string_view name);

// The engine's metrics endpoint. Empty path: none gpulaunch can read.
struct MetricsInterface {
  std::string_view path;
  MetricsFormat format = MetricsFormat::prometheus;
  // Gauge: requests running now (summed over label sets). Empty: the endpoint has none that
  // holds while the engine idles, and the counter below vouches for progress only (the probe
  // still decides a stall).
  std::string_view in_flight;
  // Prometheus: a counter that moves while tokens are generated; iteration statistics: the
  // field that numbers the engine's iterations.
  std::string_view tokens;
  std::string_view enable_flag;  // the flag that turns the endpoint on; empty: always on
  // Where a key in the engine's options file turns the endpoint on instead (trtllm-serve's YAML
  // of LLM-API arguments): each spelling of the file's flag (gpulaunch passes the first, its own
  // file at options_file_name in the engine's home, only where engine.args name none) and the
  // text gpulaunch's file holds.
  std::span<const std::string_view> options_file_flags{};
  std::string_view options_file_name{};
  std::string_view options_file_text{};
  // Whether liveness "generate" turns the endpoint on too: the probe waits behind a saturated
  // engine's queue, and only the token counter says a busy engine is generating.
  bool busy_needs_metrics = false;
  // How often the engine refreshes the token counter at the least (0: on every step); a liveness
  // timeout below twice this would see a busy engine stand still (plan/launch_plan raises it).
  std::chrono::seconds refresh{0};
  std::string_view source;
};

struct LivenessFacts {
  GenerationProbe probe;
  ApiKeyFacts api_key;
  MetricsInterface metrics;
  LivenessMode default_mode = LivenessMode::health;
  // Whether the health endpoint itself generates a token (SGLang's /health): health 200 is
  // already "ready means generating".
  bool health_generates = false;
  // Whether a rank above 0 of a multi-node group answers health with a stub that says 200
  // whatever its engine does: rank 0's liveness watches the group, the rank's own is health alone.
  bool ranks_stub_health = false;
  std::string_view ranks_source;
};

// What the engine does on SIGTERM, the signal a stop (`down`, a restart) forwards to it
// (server.drain_timeout): whether it lets in-flight requests finish, and the flag that bounds how
// long. `run` SIGKILLs it once the drain time and kStopKillGrace have passed either way.
struct DrainFacts {
  // Seconds the engine waits for in-flight requests after SIGTERM before it aborts them; empty:
  // the engine has no such flag (its drain, if any, has no bound of its own).
  // The releases that take it: kFlagVersions (flag_versions()).
  std::string_view flag;
  std::string_view behaviour;  // what SIGTERM does, in words for the man page
  std::string_view source;     // the upstream file and version this was read from
};

// What the engine does when the weights fit its memory share but the KV cache of one request of
// the full context does not fit beside them: refuse to start, or cap its longest request to the
// pool it has and serve (the model-fit rule in rules/node_checks follows it).
struct KvShortfall {
  bool caps_request_length = false;
  std::string_view behaviour;  // in words, for the finding
  std::string_view source;     // the upstream file and version this was read from
};

struct EngineRow {
  EngineKind kind;
  std::string_view name;     // engine.kind
  std::string_view display;  // what people call the program: "trtllm-serve"
  Launch launch;
  std::string_view program;  // the Python module (-m) or the program in the venv's bin/
  // A console script in engine.venv's bin/ that the engine's newer releases recommend over
  // `-m PROGRAM`: used when the installed version (LaunchOptions::engine_version) is known and at
  // least `since`; empty program: none.
  struct ServeScript {
    std::string_view program;     // "sglang"
    std::string_view subcommand;  // "serve"
    std::string_view since;       // the first release with it
  } serve_script;
  std::string_view pip_dist;       // the distribution pip installs; empty: none
  std::string_view import_module;  // its top-level import and site-packages directory
  ArgvBuilder argv;
  ModelSource model;
  long long default_port;        // server.port when the profile says none
  std::string_view health_path;  // server.health_path when the profile says none
  std::string_view readiness;    // how its health endpoint answers while it starts (man page)
  // The longest a healthy, busy engine may take to answer its health endpoint (0: at once), and
  // the environment variable that changes it ("" when none): the probe timeout and the watchdog
  // are sized on it (plan/launch_plan's health_timing).
  std::chrono::seconds health_answer;
  std::string_view health_answer_variable;

  // The knobs step-down lowers, with the engine's defaults it steps from: engine.mem_fraction,
  // engine.max_requests, engine.cuda_graph_max_bs (their keys: catalog/engine_knobs, which reads
  // the flags here), and the context length (engine.args only) that the GPU step lowers
  // where the engine has no memory share.
  EngineKnob mem_fraction;
  EngineKnob max_requests;
  EngineKnob cuda_graph_max_bs;
  EngineKnob context;
  bool steps_down;  // whether the supervisor lowers these knobs after an OOM

  // Flags the flags_only builder writes (the others spell theirs in engines/).
  std::string_view model_flag;  // empty: positional
  std::string_view host_flag;
  std::string_view port_flag;
  std::string_view served_name_flag;             // empty: model.served_name does not apply
  std::span<const std::string_view> fixed_args;  // after the model

  // Layout.
  bool splits_ranks;               // tp, pp, dp, ep > 1 mean something to it
  std::string_view no_ranks_hint;  // why not, and what to do instead, when !splits_ranks
  bool multi_node;
  bool dp_attention;
  bool speculative;  // [speculative] is rendered into its flags
  std::span<const SpeculativeMethod> speculative_methods;  // what speculative.algorithm may be
  DpGpus dp_gpus;
  EpRule ep_rule;
  MigSupport mig;
  std::string_view mig_source;  // the upstream code or report that decides `mig`

  std::span<const ProgressMarker> progress;
  std::span<const OomSignature> oom;  // its own CUDA OOM lines; torch's and CUDA's are shared
  // Lines saying that the failure an OOM line above names was no shortage of memory.
  std::span<const std::string_view> not_oom;
  // Lines after which every start fails the same way, and the fix.
  std::span<const ConfigErrorSignature> config_errors;
  // Read by the builder where it is set; nullptr: the builder spells its own (SGLang: every rank
  // serves).
  const MultiNodeFlags* multi_node_flags = nullptr;
  LivenessFacts liveness{};
  DrainFacts drain{};
  KvShortfall kv_shortfall{};
};

// The row's method spelled `name` in any case ("eagle3", "EAGLE3"); nullptr when it has none.
const SpeculativeMethod* find_speculative_method(const EngineRow& row, std::string_view name);

std::span<const EngineRow> engine_rows();
const EngineRow& engine_row(EngineKind kind);
std::optional<EngineKind> parse_engine_kind(std::string_view name);
std::string_view engine_kind_name(EngineKind kind);
std::vector<std::string> engine_kind_names();

// "a", "a and b", "a, b or c": the kinds for which `has` holds, joined with `last`.
std::string engine_kinds_where(const std::function<bool(const EngineRow&)>& has,
                               std::string_view last);

}  // namespace gl
