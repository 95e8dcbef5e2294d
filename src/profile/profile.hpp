// SPDX-License-Identifier: Apache-2.0
#pragma once
// The merged, validated profile: everything later stages need, with defaults filled in.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/engines.hpp"
#include "profile/gate_settings.hpp"
#include "profile/profile_name.hpp"
#include "util/duration.hpp"

namespace gl {

struct EngineSettings {
  EngineKind kind = EngineKind::sglang;
  std::optional<std::string> venv;    // a virtual environment: its bin/python, bin/vllm, ...
  std::optional<std::string> python;  // an interpreter, when there is no venv
  // An OCI image holding the engine (podman's reference): `run` starts it with podman run
  // (plan/container_argv), check reads its facts from its root (facts/image_facts).
  std::optional<std::string> image;
  std::optional<std::string> executable;  // overrides the launcher (vllm, trtllm-serve)
  std::vector<std::string> args;          // appended verbatim
  std::vector<std::string> argv;          // kind = "command": the whole command line
  // The keys of catalog/engine_knobs the profile sets ("engine.mem_fraction" -> 0.9): each
  // becomes the engine's flag; integers are held exactly.
  std::map<std::string, double, std::less<>> knobs;

  std::optional<double> knob(std::string_view key) const {
    auto found = knobs.find(key);
    return found == knobs.end() ? std::nullopt : std::optional<double>(found->second);
  }
};

struct ModelSettings {
  std::string path;  // an absolute local path or a hub id ("org/name")
  std::optional<std::string> served_name;
  std::optional<std::string> revision;
  // `run` reads the weight files into the page cache before each start (run/prefetch).
  bool prefetch = false;

  bool is_local() const { return !path.empty() && path.front() == '/'; }
};

struct ParallelismSettings {
  long long tp = 1;
  long long pp = 1;
  long long ep = 1;
  long long dp = 1;
  bool dp_attention = false;
  long long nodes = 1;
  std::optional<std::string> dist_init_addr;  // "host:port" of rank 0, for nodes > 1
};

// The hosts of a multi-node profile, in rank order, and how gpulaunch reaches them: the
// system's OpenSSH client, the same gpulaunch installed on each.
struct NodesSettings {
  std::vector<std::string> hosts;  // rank 0 first
  std::optional<std::string> ssh_user;
  long long ssh_port = 22;
  std::optional<std::string> ssh_identity;       // -i
  std::optional<std::string> ssh_known_hosts;    // UserKnownHostsFile, checked strictly
  long long dist_init_port = 5000;               // with hosts[0], the default dist_init_addr
  std::string gpulaunch = "/usr/bin/gpulaunch";  // on each node
};

struct SpeculativeSettings {
  std::string algorithm;  // the engine's own name: EAGLE3, DFLASH, NEXTN, ...
  std::optional<std::string> draft_model;
  std::optional<long long> num_steps;
  std::optional<long long> eagle_topk;
  std::optional<long long> num_draft_tokens;
};

struct ToolkitSettings {
  std::optional<std::string> cuda_home;
  std::optional<std::string> min_version;  // "13.0"
  std::optional<std::string> arch_list;    // FLASHINFER_CUDA_ARCH_LIST / TORCH_CUDA_ARCH_LIST
};

struct GpuSettings {
  std::vector<std::string> devices;  // indices ("0") or UUIDs ("GPU-...")
  std::optional<long long> count;
  std::optional<std::string> arch;  // expected compute capability, "12.0"

  long long available() const {
    return devices.empty() ? count.value_or(0) : static_cast<long long>(devices.size());
  }
};

struct CacheSettings {
  std::string root;                              // default /var/cache/gpulaunch/NAME
  std::map<std::string, std::string> overrides;  // cache name -> directory
};

// What READY=1 waits for: health 200, or the first generation the liveness probe got.
enum class ReadyOn { health, generate };

// server.liveness_interval and server.liveness_timeout when the profile sets none. One probe per
// 30 s is 120 small requests an hour at most (none while tokens flow); 60 s is three times
// SGLang's own health generation bound (SGLANG_HEALTH_CHECK_TIMEOUT, 20 s) and leaves a probe
// queued behind a busy batch time to answer, while a wedge is still caught within 90 s.
inline constexpr Seconds kDefaultLivenessInterval{30};
inline constexpr Seconds kDefaultLivenessTimeout{60};

inline constexpr Seconds kDefaultDrainTimeout{30};

struct ServerSettings {
  std::string host = "127.0.0.1";
  long long port = 0;
  std::string health_path = "/health";
  Seconds ready_timeout{1200};
  Seconds watchdog{120};
  // server.drain_timeout: a stop forwards SIGTERM and lets the engine finish in-flight requests
  // this long (vLLM's --shutdown-timeout where the engine has it) before SIGKILL. 30 s covers a
  // 500-token answer at 50 ms a token, the figure llm-d's guides size vLLM's drain on.
  Seconds drain_timeout{kDefaultDrainTimeout};
  LivenessMode liveness = LivenessMode::health;  // the engine row's default_mode when unset
  Seconds liveness_interval{kDefaultLivenessInterval};
  Seconds liveness_timeout{kDefaultLivenessTimeout};
  ReadyOn ready = ReadyOn::health;
};

// restart.probation when the profile sets none: a death this soon after READY=1 is a start that
// failed to serve. 5 min covers a wedge on the first requests (found within 90 s at the liveness
// defaults), torch.compile and JIT builds for the first new shapes, and an OOM at the first full
// batch; an engine that crashes under load a few times an hour serves longer than that between.
inline constexpr Seconds kDefaultProbation{300};

struct RestartSettings {
  std::string policy = "on-failure";
  Seconds delay{10};
  Seconds max_delay{300};
  Seconds stable_after{600};
  // Starts in a row that failed to serve (never ready, or died within `probation` of READY=1)
  // before the service stays down; a death after serving longer restarts, forever.
  long long budget = 5;
  Seconds probation{kDefaultProbation};
  bool step_down = true;
};

struct ServiceSettings {
  std::optional<std::string> user;  // unset: the profile's own user (profile/service_user)
  bool share_user = false;          // another installed profile may run as `user` too
  std::optional<std::string> group;
  std::optional<std::string> memory_max;  // systemd syntax: 900G, 80%, infinity
  std::vector<std::string> extra;         // extra "Key=Value" lines for [Service]
  std::vector<std::string> unit_extra;    // extra "Key=Value" lines for [Unit]
  // Lets extra/unit_extra hold what unsafe_directives() lists: root-equivalent.
  bool allow_unsafe_extra = false;
  // Vetted sandbox extras by name (catalog/sandbox_allowances): "ptrace", "gdrdrv", ...
  std::vector<std::string> allow;
};

struct Profile {
  std::string name;
  std::vector<std::string> sources;  // files merged, in order: parents, the file, drop-ins
  std::string description;
  EngineSettings engine;
  ModelSettings model;
  ParallelismSettings parallelism;
  NodesSettings nodes;
  std::optional<SpeculativeSettings> speculative;
  ToolkitSettings toolkit;
  GpuSettings gpus;
  CacheSettings caches;
  ServerSettings server;
  RestartSettings restart;
  GateSettings gate;  // [gate]: the upgrade gate (supervise/upgrade_gate)
  ServiceSettings service;
  std::map<std::string, std::string> env;
  // [secrets]: NAME -> a root-owned 0600 file. The unit says LoadCredential=NAME:FILE and
  // NAME_PATH=$CREDENTIALS_DIRECTORY/NAME (huggingface_hub reads HF_TOKEN_PATH); the value is
  // never in the unit, the snapshot or a lock.
  std::map<std::string, std::string> secrets;

  // Ranks over all nodes, and the GPUs one node needs for its share.
  long long world_size() const;
  bool dp_counts_toward_gpus() const;
  long long gpus_per_node() const;
  // How world_size() comes about, for messages: "tp 2 x pp 1 x dp 2 over 2 nodes".
  std::string world_text() const;
  std::string unit_name() const;
};

}  // namespace gl
