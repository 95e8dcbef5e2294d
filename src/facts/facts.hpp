// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a node is, as one value: GPUs and driver, every CUDA toolkit a process could find, the
// engine's Python environment read as files, and the paths and ports a profile needs. Gathered
// on one node, serialised to JSON, and checked against a profile here or on another machine.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "catalog/sandbox_allowances.hpp"

#include <nlohmann/json_fwd.hpp>

#include "util/error.hpp"

namespace gl {

// A GPU's health as NVML reports it; nullopt where NVML could not say (facts from nvidia-smi, a
// call the driver lacks, a GPU that does not support it). Judged by rules/gpu_health.
struct GpuHealthFact {
  std::optional<bool> persistence_mode{};
  std::optional<unsigned long long> ecc_uncorrected_volatile{};  // since the driver loaded
  std::optional<bool> row_remap_pending{};
  std::optional<bool> row_remap_failure{};
  std::optional<bool> retired_pages_pending{};
  // NVLink fabric registration (catalog/node_health fabric_state_name): "not-supported" on a GPU
  // without NVSwitch fabric; "completed" with fabric_error when the registration failed.
  std::optional<std::string> fabric_state{};
  std::optional<std::string> fabric_error{};
};

struct GpuFact {
  int index = 0;
  std::string name;
  std::string uuid;
  int cc_major = 0;  // compute capability 12.0 = sm_120
  int cc_minor = 0;
  unsigned long long memory_total_mib = 0;
  // MIG mode is on: CUDA sees the GPU's MIG instances (MIG- UUIDs), not the GPU itself.
  bool mig = false;
  std::string pci_bus_id{};  // NVML's "00000000:3B:00.0": how kernel lines name the GPU
  GpuHealthFact health{};
};

struct DriverFact {
  bool present = false;
  std::string source;                   // "nvml", "nvidia-smi", "/proc/driver/nvidia", "none"
  std::optional<std::string> version;   // "580.95.05"
  std::optional<std::string> max_cuda;  // the newest CUDA the driver runs: "13.0"
  std::vector<std::string> problems;    // why a probe failed: kept, a missing driver is a fact
  std::optional<int> nvml_error{};      // nvmlInit_v2's code when it failed
  // GPUs the driver lists that answer "GPU is lost" (catalog/node_health kNvmlErrorGpuIsLost):
  // "GPU 1" (NVML's index) or the address nvidia-smi names ("GPU0000:3B:00.0").
  std::vector<std::string> lost_gpus{};
};

struct ToolkitFact {
  std::string root;                    // as a process sees it: /usr/local/cuda-13.0, /usr
  std::string nvcc;                    // root/bin/nvcc
  std::vector<std::string> found_via;  // "PATH (shell)", "CUDA_HOME (unit)", "/usr/local/cuda-*"
  std::string resolved_root;           // symlinks followed: /usr/local/cuda -> /usr/local/cuda-13.0
  bool root_exists = false;
  bool nvcc_exists = false;
  // What `nvcc --version` says, which JIT libraries ask: read from version.json's cuda_nvcc or
  // the nvidia-cuda-nvcc wheel's dist-info; nvcc runs (unprivileged) only when neither exists.
  std::optional<std::string> nvcc_version;
  std::string nvcc_version_source;            // "version.json cuda_nvcc 13.0.88"
  std::optional<std::string> json_version;    // version.json "cuda"
  std::optional<std::string> header_version;  // include/cuda.h CUDA_VERSION
  std::optional<std::vector<int>> archs;      // what `nvcc --list-gpu-arch` lists, as sm numbers
  std::string archs_source;                   // "catalog for CUDA 13.0", "nvcc --list-gpu-arch"
  std::vector<std::string> problems;
  // What the JIT's link and include lines need under the root (FlashInfer's
  // -L$cuda_home/lib64 -lcudart and -isystem $cuda_home/include; torch's lib64, else lib):
  // "lib64/libcudart.so.13", "" when neither lib64/ nor lib/ has one. Both nullopt in facts
  // gathered before gpulaunch read them: not judged.
  std::optional<std::string> cudart;
  std::optional<bool> runtime_header;  // include/cuda_runtime.h

  // The version a JIT library sees: nvcc's own, else the files'.
  std::optional<std::string> version() const;
  // Why a JIT given this root as CUDA_HOME cannot link or include CUDA's runtime; "" when it
  // can. The distro's /usr is one: the linker's own path has libcudart, and FlashInfer drops
  // /usr/include.
  std::string not_toolkit_root_reason() const;
};

struct PythonEnvFact {
  std::string prefix;       // the venv, or the interpreter's prefix
  std::string interpreter;  // bin/python
  bool interpreter_exists = false;
  std::vector<std::string> site_packages;
  std::optional<std::string> torch_version;     // "2.9.0+cu130"
  std::optional<std::string> torch_cuda;        // "13.0"; absent for a CPU build or no torch
  std::map<std::string, std::string> packages;  // normalised dist name -> version
  std::map<std::string, bool> modules;          // import name -> a package directory exists
};

struct PathFact {
  std::string path;
  bool exists = false;
  bool directory = false;
  bool executable = false;
  bool has_entries = false;  // a directory with anything in it (a cache that was filled)
};

// A program root would hand to systemd, and who besides root could replace it.
struct ProgramFact {
  std::string path;
  std::optional<std::string> user_writable;  // user_writable_reason(); nullopt: only root
  bool exists = true;
};

// A host path an engine image's container bind-mounts (plan/container_command), which root's podman
// resolves at every start, and who besides root could make it name another tree.
struct MountSourceFact {
  std::string path;
  std::optional<std::string>
      replaceable;  // util/safe_file's replaceable_reason(); nullopt: root only
};

struct PortFact {
  std::string host;
  long long port = 0;
  bool taken = false;
  std::optional<std::string> problem;
  // The profile's own running service holds it, and nothing else does (rules/service_view):
  // `check NAME` on a serving node judges the node as the service sees it.
  std::optional<std::string> held_by_service;  // "gpulaunch-x.service (PID 4711)"
};

// ---- Node preflight, the OS side (issue 16): RDMA, shared memory, other profiles, the model ----

// InfiniBand and GPUDirect RDMA: whether NCCL's IB transport can read and write GPU memory.
// The interface this node routes a multi-node group's rendezvous host through (facts/routes).
struct RouteFact {
  std::string host;
  std::string interface;  // "" when there is no route; `problem` says why
  std::string problem;
};

struct InfinibandFact {
  std::vector<std::string> devices;  // /sys/class/infiniband entries: "mlx5_0"
  // What says a peer-memory client is loaded, each "NAME (where)": the modules in /proc/modules
  // (catalog/node_limits: kPeerMemoryModules) and the files NCCL itself tests.
  std::vector<std::string> peer_memory;
  bool modules_read = false;  // /proc/modules could be read
};

// What the engine unit's sandbox opens on this node (catalog/sandbox_allowances).
struct SandboxFact {
  std::vector<std::string> devices;  // optional devices present: "gdrdrv", "xpmem"
  bool mps_daemon = false;           // the MPS pipe directory exists
  std::optional<int> ptrace_scope;   // Yama's; nullopt without Yama
};

// The NVIDIA device nodes and what creates them at boot (catalog/nvidia_devices).
struct NvidiaNodesFact {
  bool driver_loaded = false;   // /proc/driver/nvidia/version exists
  bool uvm_registered = false;  // /proc/devices lists nvidia-uvm
  bool uvm_node = false;        // /dev/nvidia-uvm is the driver's node
  std::vector<int> minors;      // each GPU's Device Minor
  // Nodes the driver serves that /dev lacks or has wrong: "/dev/nvidia0", or with why:
  // "/dev/nvidia-uvm (c 234:1; the driver serves c 234:0)".
  std::vector<std::string> missing;
  std::vector<std::string> capabilities;  // MIG capability files present
  bool imex_channels = false;             // /proc/devices lists nvidia-caps-imex-channels
  std::optional<int> imex_major;          // its major
  bool imex_channel0 = false;             // /dev/nvidia-caps-imex-channels/channel0 is its node
  bool modprobe_installed = false;        // /usr/bin/nvidia-modprobe
  // Asked only where a node needs an option not every release has (IMEX channels): its
  // --help's version line and whether it lists -i's long name.
  std::string modprobe_version;
  std::optional<bool> modprobe_imex_option;
  bool devices_unit_installed = false;  // the package's oneshot unit
};

// /dev/shm, where NCCL's shared-memory transport puts its buffers.
struct ShmFact {
  std::string path;  // "/dev/shm"
  bool exists = false;
  unsigned long long size_bytes = 0;  // statvfs: f_blocks x f_frsize
  std::optional<std::string> problem;
};

// A profile `up` installed on this node (its snapshot) and the GPUs its unit gets.
struct InstalledProfileFact {
  std::string name;
  std::string snapshot;                // the node's path of the snapshot it was read from
  std::string engine;                  // engine.kind
  std::vector<std::string> gpus;       // assigned_gpus(): indices or UUIDs, as CUDA_VISIBLE_DEVICES
  std::string user;                    // its unit's User= (profile/service_user)
  bool share_user = false;             // service.share_user
  std::optional<std::string> problem;  // why it could not be read
};

// A local model directory's size and shape, read as untrusted files (no link followed).
struct ModelFact {
  std::string path;
  std::optional<unsigned long long> weights_bytes;  // nullopt: nothing measurable
  std::string weights_source;   // "model.safetensors.index.json metadata.total_size", "N files"
  long long links_skipped = 0;  // weight files that are links (not followed, not counted)
  // config.json (its text_config where the model is multimodal); nullopt when absent.
  std::optional<long long> layers;         // num_hidden_layers
  std::optional<long long> kv_heads;       // num_key_value_heads, else num_attention_heads
  std::optional<long long> head_dim;       // head_dim, else hidden_size / num_attention_heads
  std::optional<long long> kv_lora_rank;   // MLA (DeepSeek V3, Kimi K2): the latent's width
  std::optional<long long> rope_head_dim;  // MLA: qk_rope_head_dim
  std::optional<long long> context;        // max_position_embeddings
  std::vector<std::string> problems;
};

// One Xid line of the NVIDIA kernel module since boot.
struct XidFact {
  int xid = 0;
  std::string pci{};         // as the kernel wrote it: "0000:3b:00"
  std::optional<int> gpu{};  // NVML index of the GPU at that address; nullopt: none (fell off)
  uint64_t realtime_usec = 0;
  std::string message{};
};

// What only the running host can say: its kernel's journal and its service manager.
struct NodeHealthFact {
  bool kernel_log_read = false;  // the journal was read: an empty `xids` means none
  std::optional<uint64_t> boot_usec{};
  std::vector<XidFact> xids{};
  // ActiveState of catalog/node_health kFabricManagerUnit, "not-found" when it is not
  // installed; nullopt: not asked (no NVSwitch fabric, or not this host).
  std::optional<std::string> fabric_manager_state{};
  std::vector<std::string> problems;
};

// An engine's OCI image, read without running it (facts/image_facts): its config from
// `podman image inspect`, its files from `podman image mount`.
struct ImageFact {
  std::string reference;  // engine.image
  std::string id;
  std::string digest;                         // "sha256:..."; the manifest's, which `lock` pins
  std::map<std::string, std::string> env;     // Config.Env
  std::map<std::string, std::string> labels;  // Config.Labels
  // NVIDIA's CUDA base images' requirement ("cuda>=13.0 brand=tesla,driver>=535,driver<536 ..."),
  // and the CUDA the image was built on (CUDA_VERSION, "13.0.1"): from env.
  std::optional<std::string> require_cuda;
  std::optional<std::string> cuda_version;
  // The forward-compatibility libcuda the image carries (cuda-compat-X-Y: /usr/local/cuda-X.Y/
  // compat/libcuda.so.DRIVER) and the driver version it came from: "580.82.07".
  std::vector<std::string> compat_libraries;
  std::optional<std::string> compat_driver;
  std::vector<std::string> problems;  // why inspecting or mounting failed
};

// The host's CDI specs (/etc/cdi, /var/run/cdi): the device names each offers for
// nvidia.com/gpu ("0", "GPU-...", "all"), as `podman run --device nvidia.com/gpu=N` needs them.
struct CdiFact {
  std::vector<std::string> specs;        // files holding kind nvidia.com/gpu
  std::vector<std::string> gpu_devices;  // their device names
  // The driver versions those specs were generated for: the X.Y.Z of each libcuda.so.X.Y.Z they
  // mount (catalog/containers' kCdiDriverLibrary).
  std::vector<std::string> driver_versions;
  std::map<std::string, std::string> spec_versions;  // each spec's cdiVersion, by path
  std::string podman_version;                        // "4.3.1"; empty: unknown
};

struct Facts {
  std::string root = "/";  // what `--root` pointed at when gathered
  DriverFact driver;
  std::vector<GpuFact> gpus;
  std::vector<ToolkitFact> toolkits;
  std::optional<PythonEnvFact> python;
  std::vector<PathFact> paths;
  std::vector<PortFact> ports;
  // The programs a unit rendered here runs as root: gpulaunch (ExecStart=, ExecStopPost=) and
  // gpulaunch-record-start beside it (ExecStartPost=); only for "/".
  std::vector<ProgramFact> root_programs;
  // Node preflight, OS side (issue 16); nullopt in facts gathered before gpulaunch read them.
  std::optional<InfinibandFact> infiniband;
  // Multi-node profiles: the route to dist_init_addr's host (LaunchOptions::socket_interface).
  std::optional<RouteFact> rendezvous_route;
  std::optional<ShmFact> shm;
  std::optional<SandboxFact> sandbox;
  std::optional<NvidiaNodesFact> nvidia_nodes;
  std::optional<std::vector<InstalledProfileFact>> installed_profiles;
  std::optional<ModelFact> model;
  // engine.image's facts (its Python is `python`), and the CDI specs its GPUs need.
  std::optional<ImageFact> image;
  std::optional<CdiFact> cdi;
  // engine.image: what its container would mount from this host.
  std::vector<MountSourceFact> container_mounts;
  // InfiniBand devices were seen: the plan (LaunchOptions::infiniband) opens them to the unit.
  bool has_infiniband() const;
  // The optional devices and MPS daemon the unit opens (LaunchOptions::sandbox).
  SandboxNode sandbox_node() const;
  // The interface NCCL and Gloo are pinned to: the rendezvous route's, when there is one.
  std::optional<std::string> socket_interface() const;
  NodeHealthFact node_health{};

  const ToolkitFact* toolkit_at(const std::string& root) const;
  const ToolkitFact* toolkit_with_nvcc(const std::string& nvcc) const;
  const PathFact* path(const std::string& path) const;
};

nlohmann::json facts_to_json(const Facts& facts);
Result<Facts> facts_from_json(const nlohmann::json& json);
// Bounded JSON (util/json_file.hpp) with facts' top-level keys, else "'ORIGIN' is not a gpulaunch
// facts file: why".
Result<Facts> parse_facts(std::string_view text, const std::string& origin);

// Capability as "12.0".
std::string capability_text(const GpuFact& gpu);

}  // namespace gl

namespace gl {
// Reads a file written by `gpulaunch facts --json`: a regular file of at most 16 MiB.
Result<Facts> load_facts_file(const std::string& path);
}  // namespace gl
