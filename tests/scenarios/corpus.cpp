// SPDX-License-Identifier: Apache-2.0
// The scenario corpus: broken and healthy nodes, the seed incident first. A scenario starts from
// the healthy default in scenario.hpp (8 x sm_120, driver 580 / CUDA 13.0, toolkit 13.0 at
// /usr/local/cuda-13.0 pinned as cuda_home, torch cu130, SGLang + FlashInfer 0.6.7) and changes
// what makes it different. `expected` lists every finding code, warnings included.

#include <functional>

#include <fmt/core.h>

#include "scenarios/scenario.hpp"

namespace gl::test {
namespace {

Scenario make(std::string name, std::vector<std::string> expected,
              const std::function<void(Scenario&)>& change = {}) {
  Scenario scenario;
  scenario.name = std::move(name);
  scenario.expected = std::move(expected);
  if (change) change(scenario);
  return scenario;
}

// Where FlashInfer downloads cubins for a scenario without the flashinfer-cubin package: below
// the workspace the unit pins (the default cache root).
constexpr std::string_view kCubinCache =
    "/var/cache/gpulaunch/scenario/flashinfer/.cache/flashinfer/cubins";

// field-facts section 1: the distro's nvcc 12.8 first on PATH, CUDA_HOME unset.
void seed_node(Scenario& s) {
  s.toolkits = {{"/usr", "12.8", ToolkitLayout::header_only},
                {"/usr/local/cuda-13.0", "13.0", ToolkitLayout::pip}};
  s.cuda_home.reset();
  s.shell = {{"PATH", "/usr/bin:/bin:/usr/local/bin"}};
}

// Node preflight, OS side (issue 16). Kimi K2.6's shape as its config.json gives it (the
// DeepSeek V3 layout: 61 layers, MLA with a 512-wide latent and 64 rope dims, 256K context) and
// its INT4 checkpoint, about 600 GB (the index's metadata.total_size).
constexpr std::string_view kKimiConfig =
    R"({"architectures": ["DeepseekV3ForCausalLM"], "num_hidden_layers": 61,
 "num_attention_heads": 64, "num_key_value_heads": 64, "hidden_size": 7168,
 "kv_lora_rank": 512, "qk_rope_head_dim": 64, "max_position_embeddings": 262144})";
constexpr unsigned long long kKimiInt4Bytes = 594'000'000'000ULL;

void kimi(Scenario& s) {
  s.model_config = std::string(kKimiConfig);
  s.model_total_size = kKimiInt4Bytes;
  s.mem_fraction = 0.85;
}

void add_node_os_scenarios(std::vector<Scenario>& list) {
  // ---- broken ----
  // InfiniBand and no peer-memory client: GPUDirect RDMA off (NCCL #1676).
  list.push_back(
      make("infiniband-without-peermem", {"infiniband-peermem-missing"}, [](Scenario& s) {
        s.infiniband = {"mlx5_0", "mlx5_1"};
        s.proc_modules = std::string(kModulesWithoutPeermem);
      }));
  // service.extra hides every non-pseudo device, /dev/infiniband with them.
  list.push_back(
      make("infiniband-hidden-by-private-devices", {"infiniband-devices-hidden"}, [](Scenario& s) {
        s.infiniband = {"mlx5_0"};
        s.service_extra = {"PrivateDevices=yes"};
      }));
  list.push_back(make("infiniband-memlock-limited", {"unit-memlock-limited"}, [](Scenario& s) {
    s.infiniband = {"mlx5_0"};
    s.service_extra = {"LimitMEMLOCK=64K"};
  }));
  // Docker's default /dev/shm: 64 MiB, for eight ranks.
  list.push_back(make("shm-64m-eight-ranks", {"shm-too-small"},
                      [](Scenario& s) { s.shm_bytes = 64ULL << 20; }));
  list.push_back(
      make("gpus-shared-with-installed-profile", {"gpus-shared-with-profile"}, [](Scenario& s) {
        s.installed = {{"other", {"6", "7"}}};
      }));
  // k26-ep4 as it was: Kimi K2.6 on four of the seed node's 96 GB GPUs.
  list.push_back(make("kimi-k26-on-four-gpus", {"model-does-not-fit"}, [](Scenario& s) {
    kimi(s);
    s.tp = 4;
    s.ep = 4;
  }));
  // No index: the weight files' sizes (sparse files), 120 GB on one GPU.
  list.push_back(make("weight-files-over-one-gpu", {"model-does-not-fit"}, [](Scenario& s) {
    s.tp = 1;
    s.model_files = {60'000'000'000ULL, 60'000'000'000ULL};
  }));
  list.push_back(make("hub-model-fit-not-judged", {"model-fit-not-judged"},
                      [](Scenario& s) { s.model_path = "moonshotai/Kimi-K2.6"; }));
}

void add_node_os_healthy_scenarios(std::vector<Scenario>& list) {
  list.push_back(make("healthy-infiniband-with-peermem", {}, [](Scenario& s) {
    s.infiniband = {"mlx5_0", "mlx5_1"};
  }));
  // DevicePolicy=strict keeps the DeviceAllow= list, InfiniBand's entries included.
  list.push_back(make("healthy-infiniband-device-policy-strict", {}, [](Scenario& s) {
    s.infiniband = {"mlx5_0"};
    s.service_extra = {"DevicePolicy=strict"};
  }));
  list.push_back(make("healthy-no-infiniband-memlock-limited", {}, [](Scenario& s) {
    s.proc_modules = std::string(kModulesWithoutPeermem);
    s.service_extra = {"LimitMEMLOCK=64K"};
  }));
  list.push_back(make("healthy-shm-2g", {}, [](Scenario& s) { s.shm_bytes = 2ULL << 30; }));
  list.push_back(make("healthy-shm-64m-one-gpu", {}, [](Scenario& s) {
    s.tp = 1;
    s.shm_bytes = 64ULL << 20;
  }));
  list.push_back(make("healthy-installed-profiles-on-other-gpus", {}, [](Scenario& s) {
    s.tp = 4;
    s.devices = {"0", "1", "2", "3"};
    s.installed = {{"other", {"4", "5", "6", "7"}}, {"scenario", {"0", "1", "2", "3"}}};
  }));
  // k26-ep4 as shipped now: tp 8 with ep 4 on all eight GPUs.
  list.push_back(make("healthy-kimi-k26-ep4-on-eight-gpus", {}, [](Scenario& s) {
    kimi(s);
    s.ep = 4;
  }));
  list.push_back(make("healthy-weight-files-over-two-gpus", {}, [](Scenario& s) {
    s.tp = 2;
    s.model_files = {60'000'000'000ULL, 60'000'000'000ULL};
  }));
}

// An HGX H100 node: eight GPUs on one NVSwitch fabric, the Fabric Manager installed and running,
// every GPU registered (fabric state 3, NVML_GPU_FABRIC_STATE_COMPLETED, status NVML_SUCCESS).
void hgx_h100(Scenario& s) {
  s.gpus = {{8, 9, 0, "NVIDIA H100 80GB HBM3"}};
  s.fabric_manager = "active";
  for (int gpu = 0; gpu < 8; ++gpu) s.nvml_health.push_back(fmt::format("fabric {} 3 0", gpu));
}

// Real NVRM lines (open-gpu-kernel-modules #1151, driver 580; leptonai/gpud's xid README): the
// fake NVML puts GPU N at PCI bus 0x18 + 0x10 * N, so GPU 3 is 0000:48:00.
constexpr std::string_view kXid79OnGpu3 =
    "NVRM: Xid (PCI:0000:48:00): 79, pid=2841, name=python3, GPU has fallen off the bus.";
constexpr std::string_view kXid79Gone =
    "NVRM: Xid (PCI:0000:c8:00): 79, GPU has fallen off the bus.";
constexpr std::string_view kXid94OnGpu0 =
    "NVRM: Xid (PCI:0000:18:00): 94, pid=91231, name=python3, Ch 00000010";
constexpr std::string_view kXid13OnGpu0 =
    "NVRM: Xid (PCI:0000:18:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception "
    "on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter";

// Issue 16: the GPUs' health and the driver, through NVML, the kernel's journal and systemd.
void add_node_health(std::vector<Scenario>& list) {
  // An unattended upgrade replaced libnvidia-ml under the loaded 580 module.
  list.push_back(make("driver-library-mismatch", {"driver-library-mismatch"},
                      [](Scenario& s) { s.nvml_init = 18; }));
  list.push_back(
      make("fabric-manager-stopped-fabric-not-started", {"gpu-fabric-not-ready"}, [](Scenario& s) {
        hgx_h100(s);
        s.fabric_manager = "inactive";
        s.nvml_health.clear();
        for (int gpu = 0; gpu < 8; ++gpu)
          s.nvml_health.push_back(fmt::format("fabric {} 1 0", gpu));
      }));
  list.push_back(
      make("fabric-manager-missing-fabric-in-progress", {"gpu-fabric-not-ready"}, [](Scenario& s) {
        hgx_h100(s);
        s.fabric_manager.reset();
        s.nvml_health = {"fabric 0 3 0", "fabric 1 2 0", "fabric 2 3 0", "fabric 3 3 0",
                         "fabric 4 3 0", "fabric 5 3 0", "fabric 6 3 0", "fabric 7 3 0"};
      }));
  // Registration finished with an error (status 999, NVML_ERROR_UNKNOWN) while FM runs.
  list.push_back(make("fabric-registration-failed", {"gpu-fabric-not-ready"}, [](Scenario& s) {
    hgx_h100(s);
    s.nvml_health[5] = "fabric 5 3 999";
  }));
  list.push_back(
      make("fabric-manager-failed-after-training", {"fabric-manager-inactive"}, [](Scenario& s) {
        hgx_h100(s);
        s.fabric_manager = "failed";
      }));
  list.push_back(make("gpu-ecc-uncorrected", {"gpu-ecc-uncorrected"},
                      [](Scenario& s) { s.nvml_health = {"ecc 2 3"}; }));
  list.push_back(make("gpu-row-remap-failed", {"gpu-row-remap-failed", "gpu-row-remap-pending"},
                      [](Scenario& s) { s.nvml_health = {"remap 6 1 1"}; }));
  list.push_back(make("gpu-row-remap-pending", {"gpu-row-remap-pending"},
                      [](Scenario& s) { s.nvml_health = {"remap 1 1 0"}; }));
  list.push_back(make("gpu-retired-pages-pending", {"gpu-retired-pages-pending"}, [](Scenario& s) {
    s.gpus = {{2, 7, 0, "Tesla V100-SXM2-32GB"}};
    s.tp = 2;
    s.toolkits = {{"/usr/local/cuda-12.8", "12.8"}};
    s.cuda_home = "/usr/local/cuda-12.8";
    s.torch = "2.7.1+cu128";
    s.torch_cuda = "12.8";
    s.packages.erase("flashinfer");
    s.nvml_health = {"retired 1 1"};
  }));
  list.push_back(make("gpu-persistence-off", {"gpu-persistence-off"}, [](Scenario& s) {
    for (int gpu = 0; gpu < 8; ++gpu) s.nvml_health.push_back(fmt::format("persistence {} 0", gpu));
  }));
  list.push_back(make("xid-79-on-engine-gpu", {"gpu-xid-79"},
                      [](Scenario& s) { s.kernel_lines = {std::string(kXid79OnGpu3)}; }));
  // The GPU fell off the bus and NVML no longer lists it: seven GPUs left for tp 8, named as a
  // lost GPU to reboot for, never as too few GPUs for tp 8.
  list.push_back(make("xid-79-gpu-gone", {"gpu-lost", "gpu-xid-79"}, [](Scenario& s) {
    s.gpus = {{7, 12, 0}};
    s.kernel_lines = {std::string(kXid79Gone)};
  }));
  // NVML still counts GPU 3 but its handle answers NVML_ERROR_GPU_IS_LOST.
  list.push_back(
      make("nvml-gpu-is-lost", {"gpu-lost"}, [](Scenario& s) { s.nvml_health = {"lost 3"}; }));
  // nvmlInit_v2 itself fails with NVML_ERROR_GPU_IS_LOST: a lost GPU, not a missing driver.
  list.push_back(
      make("nvml-init-gpu-is-lost", {"gpu-lost"}, [](Scenario& s) { s.nvml_init = 15; }));
  list.push_back(make("xid-94-contained-ecc", {"gpu-xid-94"}, [](Scenario& s) {
    s.kernel_lines = {std::string(kXid94OnGpu0), std::string(kXid94OnGpu0)};
  }));
  // ---- healthy neighbours ----
  list.push_back(make("healthy-hgx-h100-fabric-completed", {}, hgx_h100));
  list.push_back(make("healthy-single-gpu-fabric-manager-stopped", {}, [](Scenario& s) {
    hgx_h100(s);
    s.fabric_manager = "inactive";
    s.tp = 1;
  }));
  list.push_back(make("healthy-ecc-errors-on-other-gpu", {}, [](Scenario& s) {
    s.tp = 2;
    s.devices = {"0", "1"};
    s.nvml_health = {"ecc 5 3", "remap 5 1 1", "persistence 5 0"};
  }));
  list.push_back(make("healthy-ecc-off", {}, [](Scenario& s) {
    for (int gpu = 0; gpu < 8; ++gpu) s.nvml_health.push_back(fmt::format("ecc {} none", gpu));
  }));
  // An application's own fault (Xid 13) and a fall off the bus before this boot say nothing
  // about the next start.
  list.push_back(make("healthy-xid-app-error-and-earlier-boot", {}, [](Scenario& s) {
    s.kernel_lines = {std::string(kXid13OnGpu0)};
    s.kernel_lines_earlier_boot = {std::string(kXid79OnGpu3)};
  }));
  list.push_back(make("healthy-xid-79-on-other-gpu", {}, [](Scenario& s) {
    s.tp = 2;
    s.devices = {"0", "1"};
    s.kernel_lines = {std::string(kXid79OnGpu3)};
  }));
}

std::vector<Scenario> build() {
  std::vector<Scenario> list;
  // ---- broken ----
  list.push_back(make(
      "seed-sm120-distro-nvcc-12.8",
      {"flashinfer-nvcc-too-old", "torch-toolkit-major-mismatch", "cuda-home-unset"}, seed_node));
  list.push_back(
      make("seed-with-cuda-symlink",
           {"flashinfer-nvcc-too-old", "torch-toolkit-major-mismatch", "cuda-home-unset"},
           [](Scenario& s) {
             seed_node(s);
             s.cuda_symlink = "/usr/local/cuda-13.0";
           }));
  list.push_back(make("volta-on-cuda-13", {"toolkit-dropped-arch"}, [](Scenario& s) {
    s.gpus = {{8, 7, 0, "Tesla V100-SXM2-32GB"}};
  }));
  list.push_back(make("volta-on-cuda-13-no-arch-list", {"toolkit-dropped-arch"}, [](Scenario& s) {
    s.gpus = {{8, 7, 0, "Tesla V100-SXM2-32GB"}};
    s.toolkits = {{"/usr/local/cuda-13.0", "13.0", ToolkitLayout::version_json, false}};
  }));
  list.push_back(make("b200-on-cuda-12.4", {"toolkit-too-old-for-arch"}, [](Scenario& s) {
    s.gpus = {{8, 10, 0, "NVIDIA B200"}};
    s.toolkits = {{"/usr/local/cuda-12.4", "12.4"}};
    s.cuda_home = "/usr/local/cuda-12.4";
    s.torch = "2.5.1+cu124";
    s.torch_cuda = "12.4";
  }));
  list.push_back(
      make("spark-sm121-on-12.8-no-arch-list", {"toolkit-too-old-for-arch"}, [](Scenario& s) {
        s.gpus = {{1, 12, 1, "NVIDIA GB10"}};
        s.tp = 1;
        s.toolkits = {{"/usr/local/cuda-12.8", "12.8", ToolkitLayout::version_json, false}};
        s.cuda_home = "/usr/local/cuda-12.8";
        s.torch_cuda = "12.8";
        s.packages.erase("flashinfer");
      }));
  list.push_back(make("flashinfer-gate-pinned-12.8", {"flashinfer-nvcc-too-old"}, [](Scenario& s) {
    s.toolkits = {{"/usr/local/cuda-12.8", "12.8"}};
    s.cuda_home = "/usr/local/cuda-12.8";
    s.torch = "2.8.0+cu128";
    s.torch_cuda = "12.8";
    s.packages["flashinfer"] = "0.6.8";
  }));
  // The issue-42 node: torch cu128, a driver that runs CUDA 12.9, sm_120, nvcc 12.8 pinned,
  // FlashInfer 0.6.18 (the newest release whose gate was read): refused; the fix must name a
  // toolkit of torch's major the driver runs, cuda-nvcc-12-9, not 13.0.
  list.push_back(
      make("flashinfer-0.6.18-cu128-driver-12.9", {"flashinfer-nvcc-too-old"}, [](Scenario& s) {
        s.driver = "575.57.08";
        s.driver_cuda = "12.9";
        s.toolkits = {{"/usr/local/cuda-12.8", "12.8"}};
        s.cuda_home = "/usr/local/cuda-12.8";
        s.torch = "2.8.0+cu128";
        s.torch_cuda = "12.8";
        s.packages["flashinfer"] = "0.6.18";
      }));
  // The same node with a FlashInfer newer than the catalog read (PR #3633 relaxed the gate for
  // SM120 after 0.6.18): warned with the evidence, not refused.
  list.push_back(make("flashinfer-newer-than-gate-read-on-12.8",
                      {"flashinfer-nvcc-gate-unverified"}, [](Scenario& s) {
                        s.driver = "575.57.08";
                        s.driver_cuda = "12.9";
                        s.toolkits = {{"/usr/local/cuda-12.8", "12.8"}};
                        s.cuda_home = "/usr/local/cuda-12.8";
                        s.torch = "2.8.0+cu128";
                        s.torch_cuda = "12.8";
                        s.packages["flashinfer"] = "0.7.0";
                      }));
  // pip put an nvcc into the venv's bin/, which the unit's PATH searches first.
  list.push_back(
      make("venv-bin-nvcc-12.8-first-on-unit-path",
           {"flashinfer-nvcc-too-old", "torch-toolkit-major-mismatch", "cuda-home-unset"},
           [](Scenario& s) {
             s.toolkits = {{"/opt/venv", "12.8", ToolkitLayout::header_only},
                           {"/usr/local/cuda-13.0", "13.0"}};
             s.cuda_home.reset();
           }));
  list.push_back(
      make("torch-cu130-toolkit-12.9", {"torch-toolkit-major-mismatch"}, [](Scenario& s) {
        s.gpus = {{8, 9, 0, "NVIDIA H100 80GB HBM3"}};
        s.toolkits = {{"/usr/local/cuda-12.9", "12.9"}};
        s.cuda_home = "/usr/local/cuda-12.9";
      }));
  list.push_back(make("driver-550-with-cuda-13",
                      {"driver-too-old-for-toolkit", "driver-too-old-for-torch"}, [](Scenario& s) {
                        s.driver = "550.163.01";
                        s.driver_cuda = "12.4";
                      }));
  list.push_back(make("driver-12.8-torch-cu130-toolkit-12.8",
                      {"driver-too-old-for-torch", "torch-toolkit-major-mismatch"},
                      [](Scenario& s) {
                        s.gpus = {{8, 9, 0, "NVIDIA H100 80GB HBM3"}};
                        s.driver = "570.172.08";
                        s.driver_cuda = "12.8";
                        s.toolkits = {{"/usr/local/cuda-12.8", "12.8"}};
                        s.cuda_home = "/usr/local/cuda-12.8";
                      }));
  list.push_back(make("cuda-home-missing", {"cuda-home-missing"}, [](Scenario& s) {
    s.toolkits = {{"/usr/local/cuda-12.9", "12.9"}};
  }));
  list.push_back(make("cuda-home-not-a-toolkit", {"cuda-home-not-toolkit"}, [](Scenario& s) {
    s.toolkits = {};
    s.cuda_home = "/opt/cuda-empty";
    s.directories = {"/opt/cuda-empty/include"};
  }));
  // NVML installed, the module not loaded: nvmlInit_v2 answers 9, as Debian's libnvidia-ml1
  // 535.261.03 does (tests/integration/nvidia_real_programs_test.sh).
  list.push_back(make("driver-not-loaded", {"nvidia-driver-not-loaded"},
                      [](Scenario& s) { s.gpu_source = GpuSource::none; }));
  // No driver's library at all (NVML_ERROR_LIBRARY_NOT_FOUND): installing one is the fix.
  list.push_back(make("no-driver", {"no-nvidia-driver"}, [](Scenario& s) {
    s.gpu_source = GpuSource::none;
    s.nvml_init = 12;
  }));
  list.push_back(make("nvidia-smi-fallback-4-gpus-tp8", {"gpu-count-short"}, [](Scenario& s) {
    s.gpu_source = GpuSource::nvidia_smi;
    s.gpus = {{4, 12, 0}};
  }));
  list.push_back(make("tp4-pp2-on-4-gpus", {"gpu-count-short"}, [](Scenario& s) {
    s.gpus = {{4, 12, 0}};
    s.tp = 4;
    s.pp = 2;
  }));
  list.push_back(make("mixed-h100-a100", {"gpu-arch-mixed"}, [](Scenario& s) {
    s.gpus = {{1, 9, 0, "NVIDIA H100 80GB HBM3"}, {1, 8, 0, "NVIDIA A100-SXM4-80GB"}};
    s.tp = 2;
  }));
  list.push_back(make("profile-expects-hopper", {"gpu-arch-unexpected"},
                      [](Scenario& s) { s.gpus_arch = "9.0"; }));
  list.push_back(
      make("device-uuid-not-on-node", {"gpu-device-missing", "gpu-count-short"}, [](Scenario& s) {
        s.tp = 1;
        s.devices = {"GPU-deadbeef-0000-0000-0000-000000000000"};
      }));
  list.push_back(make("venv-without-python", {"engine-executable-missing"},
                      [](Scenario& s) { s.venv_python = false; }));
  list.push_back(make("sglang-not-installed", {"engine-module-missing"},
                      [](Scenario& s) { s.packages.erase("sglang"); }));
  list.push_back(make("vllm-not-installed", {"engine-executable-missing", "engine-module-missing"},
                      [](Scenario& s) { s.engine = "vllm"; }));
  list.push_back(make("model-path-missing", {"model-path-missing"},
                      [](Scenario& s) { s.model_exists = false; }));
  list.push_back(make("port-taken", {"port-taken"}, [](Scenario& s) { s.port_taken = true; }));
  // `check NAME` where NAME serves, and another unit's process holds its port as well.
  list.push_back(make("port-held-by-own-service-and-another", {"port-taken"}, [](Scenario& s) {
    s.port_taken = true;
    s.port_holder = Scenario::PortHolder::own_service_and_other;
  }));
  list.push_back(make("torch-cpu-build", {"torch-cpu-only"}, [](Scenario& s) {
    s.torch = "2.9.0+cpu";
    s.torch_cuda.reset();
  }));
  list.push_back(make("toolkit-below-min-version", {"toolkit-below-min-version"}, [](Scenario& s) {
    s.toolkits = {{"/usr/local/cuda-12.9", "12.9"}};
    s.cuda_home = "/usr/local/cuda-12.9";
    s.torch_cuda = "12.9";
    s.min_version = "13.0";
  }));
  list.push_back(make("no-toolkit-anywhere", {"cuda-home-unset", "no-toolkit"}, [](Scenario& s) {
    s.toolkits = {};
    s.cuda_home.reset();
  }));
  list.push_back(make("only-venv-pip-nvcc", {"cuda-home-unset", "no-toolkit"}, [](Scenario& s) {
    s.toolkits = {};
    s.cuda_home.reset();
    s.venv_nvcc = "13.0";
  }));
  list.push_back(make("shell-cuda-home-differs", {"jit-toolkit-shell-mismatch"}, [](Scenario& s) {
    s.toolkits = {{"/usr/local/cuda-13.0", "13.0"}, {"/usr/local/cuda-12.8", "12.8"}};
    s.shell.emplace_back("CUDA_HOME", "/usr/local/cuda-12.8");
  }));
  // Unset, the engine runs as the profile's own gpulaunch-NAME user: nothing to warn about.
  list.push_back(make("engine-as-own-user", {}, [](Scenario& s) { s.service_user.reset(); }));
  list.push_back(make("engine-as-explicit-root", {"engine-runs-as-root"},
                      [](Scenario& s) { s.service_user = "root"; }));
  // Nothing says this nvcc's version but nvcc itself: it runs (unprivileged), same verdict.
  list.push_back(make("toolkit-without-version-files-b200-on-12.4", {"toolkit-too-old-for-arch"},
                      [](Scenario& s) {
                        s.gpus = {{8, 10, 0, "NVIDIA B200"}};
                        s.toolkits = {{"/usr/local/cuda-12.4", "12.4", ToolkitLayout::nvcc_only}};
                        s.cuda_home = "/usr/local/cuda-12.4";
                        s.torch = "2.5.1+cu124";
                        s.torch_cuda = "12.4";
                      }));
  // FLASHINFER_CUDA_ARCH_LIST "12.0f" is passed to nvcc as compute_120f, which nvcc 12.8 lacks
  // (family targets came with CUDA 12.9); "12.0a" would do.
  list.push_back(make("arch-list-family-on-nvcc-12.8", {"flashinfer-target-needs-newer-nvcc"},
                      [](Scenario& s) {
                        s.toolkits = {{"/usr/local/cuda-12.8", "12.8"}};
                        s.cuda_home = "/usr/local/cuda-12.8";
                        s.torch_cuda = "12.8";
                        s.arch_list = "12.0f";
                      }));
  // FLASHINFER_NVCC compiles instead of the pinned toolkit's nvcc (flashinfer/jit/cpp_ext.py):
  // judged like a 12.8 nvcc on PATH.
  list.push_back(
      make("flashinfer-nvcc-env-12.8",
           {"flashinfer-target-needs-newer-nvcc", "torch-toolkit-major-mismatch"}, [](Scenario& s) {
             s.toolkits = {{"/usr/local/cuda-13.0", "13.0"}, {"/usr/local/cuda-12.8", "12.8"}};
             s.env["FLASHINFER_NVCC"] = "/usr/local/cuda-12.8/bin/nvcc";
           }));
  list.push_back(make("flashinfer-nvcc-env-missing", {"flashinfer-nvcc-missing"},
                      [](Scenario& s) { s.env["FLASHINFER_NVCC"] = "/opt/cuda-gone/bin/nvcc"; }));
  list.push_back(make("flashinfer-nvcc-launcher-not-on-path", {"flashinfer-nvcc-launcher-missing"},
                      [](Scenario& s) { s.env["FLASHINFER_NVCC_LAUNCHER"] = "sccache"; }));
  // flashinfer/jit/env.py raises at import when the kernel packages' versions differ.
  list.push_back(make("flashinfer-jit-cache-version-differs", {"flashinfer-packages-mismatch"},
                      [](Scenario& s) { s.packages["flashinfer_jit_cache"] = "0.6.6+cu130"; }));
  list.push_back(make("flashinfer-cubin-version-differs", {"flashinfer-packages-mismatch"},
                      [](Scenario& s) { s.packages["flashinfer_cubin"] = "0.6.6"; }));
  // A /usr/local/bin/nvcc wrapper: two levels up is /usr/local, which has no CUDA runtime.
  list.push_back(make("nvcc-wrapper-in-usr-local-bin",
                      {"cuda-home-unset", "jit-cuda-home-not-toolkit"}, [](Scenario& s) {
                        s.cuda_home.reset();
                        s.nvcc_wrappers = {{"/usr/local/bin/nvcc", "/usr/local/cuda-13.0"}};
                      }));
  list.push_back(make("cuda-home-pinned-to-usr-local", {"cuda-home-not-toolkit"}, [](Scenario& s) {
    s.cuda_home = "/usr/local";
    s.nvcc_wrappers = {{"/usr/local/bin/nvcc", "/usr/local/cuda-13.0"}};
  }));
  // vLLM on a GPU in MIG mode (vLLM #41848), by NVML and by nvidia-smi.
  list.push_back(make("mig-mode-gpu-for-vllm", {"gpu-mig-engine-unsupported"}, [](Scenario& s) {
    s.engine = "vllm";
    s.packages = {{"vllm", "0.20.1"}, {"flashinfer", "0.6.7"}};
    s.gpus = {{1, 9, 0, "NVIDIA H100 80GB HBM3", true}, {1, 9, 0, "NVIDIA H100 80GB HBM3"}};
    s.tp = 1;
  }));
  list.push_back(
      make("mig-mode-gpu-for-vllm-nvidia-smi", {"gpu-mig-engine-unsupported"}, [](Scenario& s) {
        s.engine = "vllm";
        s.packages = {{"vllm", "0.20.1"}, {"flashinfer", "0.6.7"}};
        s.gpu_source = GpuSource::nvidia_smi;
        s.gpus = {{1, 9, 0, "NVIDIA H100 80GB HBM3", true}};
        s.tp = 1;
      }));
  list.push_back(make("mig-mode-gpu-named-whole", {"gpu-mig-whole-gpu"}, [](Scenario& s) {
    s.gpus = {{1, 9, 0, "NVIDIA H100 80GB HBM3", true}};
    s.tp = 1;
  }));
  // The profile says the node is offline: the unit pins FLASHINFER_NO_DOWNLOAD, and FlashInfer's
  // cubin cache has nothing in it yet.
  list.push_back(make("offline-flashinfer-cubins-missing", {"flashinfer-cubins-missing-offline"},
                      [](Scenario& s) {
                        s.env = {{"HF_HUB_OFFLINE", "1"}};
                      }));
  // [env]'s FLASHINFER_CUBIN_DIR hides the cubins flashinfer-cubin installed.
  list.push_back(
      make("flashinfer-cubin-package-unused", {"flashinfer-cubin-package-unused"}, [](Scenario& s) {
        s.packages["flashinfer_cubin"] = "0.6.7";
        s.env = {{"FLASHINFER_CUBIN_DIR", "/srv/cubins"}};
      }));
  add_node_os_scenarios(list);
  add_node_health(list);
  // ---- healthy ----
  add_node_os_healthy_scenarios(list);
  list.push_back(make("healthy-offline-cubins-filled", {}, [](Scenario& s) {
    s.env = {{"HF_HUB_OFFLINE", "1"}};
    s.directories = {std::string(kCubinCache) + "/ce0795149bb2a183db22de04a3fec3aca65fff04"};
  }));
  // Offline with the package: its cubins need no download (the unit leaves FLASHINFER_CUBIN_DIR
  // unset, so FlashInfer reads them).
  list.push_back(make("healthy-offline-cubin-package", {}, [](Scenario& s) {
    s.env = {{"HF_HUB_OFFLINE", "1"}};
    s.packages["flashinfer_cubin"] = "0.6.7";
  }));
  list.push_back(make("healthy-flashinfer-cubin-package-pointed", {}, [](Scenario& s) {
    s.packages["flashinfer_cubin"] = "0.6.7";
    s.env = {
        {"FLASHINFER_CUBIN_DIR", "/opt/venv/lib/python3.11/site-packages/flashinfer_cubin/cubins"}};
  }));
  list.push_back(
      make("seed-fixed-cuda-home-pinned", {"jit-toolkit-shell-mismatch"}, [](Scenario& s) {
        seed_node(s);
        s.cuda_home = "/usr/local/cuda-13.0";
      }));
  list.push_back(make("healthy-blackwell-cuda-13", {}));
  // `check NAME` on the node where NAME serves: its own port is no conflict (issue 42).
  list.push_back(make("healthy-port-held-by-own-service", {}, [](Scenario& s) {
    s.port_taken = true;
    s.port_holder = Scenario::PortHolder::own_service;
  }));
  // The fix the issue-42 node is given, applied: nvcc 12.9 for a cu128 torch on a 12.9 driver.
  list.push_back(make("healthy-flashinfer-0.6.18-cu128-on-12.9", {}, [](Scenario& s) {
    s.driver = "575.57.08";
    s.driver_cuda = "12.9";
    s.toolkits = {{"/usr/local/cuda-12.9", "12.9"}};
    s.cuda_home = "/usr/local/cuda-12.9";
    s.torch = "2.8.0+cu128";
    s.torch_cuda = "12.8";
    s.packages["flashinfer"] = "0.6.18";
  }));
  list.push_back(make("healthy-hopper-cuda-12.9", {}, [](Scenario& s) {
    s.gpus = {{8, 9, 0, "NVIDIA H200"}};
    s.driver = "575.57.08";
    s.driver_cuda = "12.9";
    s.toolkits = {{"/usr/local/cuda-12.9", "12.9", ToolkitLayout::header_only}};
    s.cuda_symlink = "/usr/local/cuda-12.9";
    s.cuda_home = "/usr/local/cuda";
    s.torch = "2.8.0+cu129";
    s.torch_cuda = "12.9";
  }));
  list.push_back(make("healthy-flashinfer-0.6.6-on-12.8", {}, [](Scenario& s) {
    s.toolkits = {{"/usr/local/cuda-12.8", "12.8"}};
    s.cuda_home = "/usr/local/cuda-12.8";
    s.torch_cuda = "12.8";
    s.packages["flashinfer"] = "0.6.6";
  }));
  // TORCH_CUDA_ARCH_LIST gets the list in torch's grammar ("12.0a"), which torch 2.6's
  // cpp_extension does not know (pytorch PR #145436 added the 12.x entries in 2.7).
  list.push_back(make("torch-2.6-arch-list-sm120", {"torch-arch-unknown"}, [](Scenario& s) {
    s.toolkits = {{"/usr/local/cuda-12.8", "12.8"}};
    s.cuda_home = "/usr/local/cuda-12.8";
    s.torch = "2.6.0+cu126";
    s.torch_cuda = "12.6";
    s.arch_list = "12.0a";
  }));
  // torch 2.7 lists "12.0a" (PR #145436): nothing to say.
  list.push_back(make("healthy-torch-2.7-arch-list-family", {}, [](Scenario& s) {
    s.torch = "2.7.1+cu128";
    s.torch_cuda = "12.8";
    s.toolkits = {{"/usr/local/cuda-12.8", "12.8"}};
    s.cuda_home = "/usr/local/cuda-12.8";
    s.arch_list = "12.0a";
  }));
  // An explicit suffix skips FlashInfer's 12.9 gate; sm_120a is in nvcc 12.8.
  list.push_back(make("healthy-explicit-arch-suffix-on-12.8", {}, [](Scenario& s) {
    s.toolkits = {{"/usr/local/cuda-12.8", "12.8"}};
    s.cuda_home = "/usr/local/cuda-12.8";
    s.torch_cuda = "12.8";
    s.arch_list = "12.0a";
  }));
  list.push_back(make("healthy-flashinfer-kernel-packages-match", {}, [](Scenario& s) {
    s.packages["flashinfer_jit_cache"] = "0.6.7+cu130";
    s.packages["flashinfer_cubin"] = "0.6.7";
  }));
  list.push_back(make("healthy-flashinfer-version-check-disabled", {}, [](Scenario& s) {
    s.packages["flashinfer_jit_cache"] = "0.6.6+cu130";
    s.env["FLASHINFER_DISABLE_VERSION_CHECK"] = "1";
  }));
  list.push_back(make("healthy-flashinfer-nvcc-launcher-on-path", {}, [](Scenario& s) {
    s.env["FLASHINFER_NVCC_LAUNCHER"] = "sccache";
    s.nvcc_wrappers = {{"/usr/local/bin/sccache", "/usr/local/cuda-13.0"}};
  }));
  list.push_back(make("healthy-sglang-on-one-mig-instance", {}, [](Scenario& s) {
    s.gpus = {{1, 9, 0, "NVIDIA H100 80GB HBM3", true}};
    s.tp = 1;
    s.devices = {"MIG-377e0049-554c-540b-93c6-d0976f8426cb"};
  }));
  list.push_back(make("healthy-driver-minor-compat-nvidia-smi", {}, [](Scenario& s) {
    s.gpu_source = GpuSource::nvidia_smi;
    s.gpus = {{4, 8, 0, "NVIDIA A100-SXM4-80GB"}};
    s.tp = 4;
    s.driver = "535.247.01";
    s.driver_cuda = "12.2";
    s.toolkits = {{"/usr/local/cuda-12.8", "12.8"}};
    s.cuda_home = "/usr/local/cuda-12.8";
    s.torch = "2.7.1+cu128";
    s.torch_cuda = "12.8";
  }));
  list.push_back(make("healthy-vllm-with-devices", {}, [](Scenario& s) {
    s.engine = "vllm";
    s.packages = {{"vllm", "0.11.0"}, {"flashinfer", "0.6.7"}, {"triton", "3.5.0"}};
    s.tp = 2;
    s.devices = {"4", "5"};
  }));
  return list;
}

}  // namespace

const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> list = build();
  return list;
}

}  // namespace gl::test
