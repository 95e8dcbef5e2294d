// SPDX-License-Identifier: Apache-2.0
#pragma once
// A node and a profile in a few lines, and the finding codes `check` must report for them.

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "facts/environment.hpp"
#include "facts/facts.hpp"
#include "facts/node_health.hpp"
#include "profile/profile.hpp"
#include "support/fixture_node.hpp"

namespace gl::test {

enum class GpuSource { nvml, nvidia_smi, none };

struct ToolkitSpec {
  std::string path;  // "/usr" puts nvcc at /usr/bin/nvcc, as the distro package does
  std::string version;
  ToolkitLayout layout = ToolkitLayout::version_json;
  bool lists_archs = true;
};

// A /proc/modules of a node with the NVIDIA driver and nvidia_peermem loaded (the kernel's
// format: name, size, users, dependents, state, address).
inline constexpr std::string_view kModulesWithPeermem =
    "nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)\n"
    "nvidia_uvm 1794048 4 - Live 0x0000000000000000 (OE)\n"
    "nvidia 54353920 10 nvidia_peermem,nvidia_uvm, Live 0x0000000000000000 (OE)\n"
    "ib_uverbs 196608 3 nvidia_peermem,rdma_ucm,mlx5_ib, Live 0x0000000000000000\n";
inline constexpr std::string_view kModulesWithoutPeermem =
    "nvidia_uvm 1794048 4 - Live 0x0000000000000000 (OE)\n"
    "nvidia 54353920 10 nvidia_uvm, Live 0x0000000000000000 (OE)\n"
    "ib_uverbs 196608 3 rdma_ucm,mlx5_ib, Live 0x0000000000000000\n";

struct Scenario {
  std::string name;
  std::vector<GpuSpec> gpus = {{8, 12, 0}};
  GpuSource gpu_source = GpuSource::nvml;
  std::string driver = "580.95.05";
  std::string driver_cuda = "13.0";
  std::vector<ToolkitSpec> toolkits = {{"/usr/local/cuda-13.0", "13.0"}};
  std::optional<std::string> cuda_symlink;  // /usr/local/cuda -> this
  // The venv at /opt/venv.
  std::optional<std::string> torch = "2.9.0+cu130";
  std::optional<std::string> torch_cuda = "13.0";
  std::map<std::string, std::string> packages = {{"sglang", "0.5.5"}, {"flashinfer", "0.6.7"}};
  bool venv_python = true;
  std::optional<std::string> venv_nvcc;  // version of site-packages/nvidia/cu13/bin/nvcc
  std::vector<std::string> directories;  // extra empty directories on the node
  // Wrapper scripts that run a toolkit's nvcc: "/usr/local/bin/nvcc" -> "/usr/local/cuda-13.0".
  std::map<std::string, std::string> nvcc_wrappers;
  // The profile.
  std::string engine = "sglang";
  long long tp = 8;
  long long pp = 1;
  std::optional<std::string> cuda_home = "/usr/local/cuda-13.0";
  std::optional<std::string> min_version;
  std::optional<std::string> arch_list;
  std::vector<std::string> devices;
  std::optional<std::string> gpus_arch;
  std::map<std::string, std::string> env;
  // An account every Debian system has, so the unprivileged nvcc run works on any test machine.
  std::optional<std::string> service_user = "nobody";  // unset: its own gpulaunch-NAME
  bool model_exists = true;
  bool port_taken = false;
  // Who holds the taken port, as the node's /proc says (rules/service_view): nobody named (a
  // process check cannot see), the profile's own running service alone, or that service and a
  // process of another unit. The manager (tests/fakes/systemd/fake_manager) runs the service.
  enum class PortHolder { unknown, own_service, own_service_and_other };
  PortHolder port_holder = PortHolder::unknown;
  // ---- Node preflight, OS side (issue 16) ----
  std::vector<std::string> infiniband;  // /sys/class/infiniband entries ("mlx5_0")
  std::optional<std::string> proc_modules = std::string(kModulesWithPeermem);  // /proc/modules
  // /dev/shm's size: a tmpfs of this many bytes mounted over the fixture's /dev/shm in a child's
  // private mount namespace (the probe reads statvfs); nullopt: the fixture's own filesystem.
  std::optional<unsigned long long> shm_bytes;
  std::vector<std::string> service_extra;  // [service] extra, with allow_unsafe_extra = true
  // Profiles `up` installed on the node: name -> gpus.devices of their snapshot.
  std::map<std::string, std::vector<std::string>> installed;
  // The model: model.safetensors.index.json's metadata.total_size, else weight files of these
  // sizes (sparse), and config.json's text; model_path replaces /models/m (a hub id).
  std::optional<unsigned long long> model_total_size;
  std::vector<unsigned long long> model_files;
  std::string model_config = "{}";
  std::optional<std::string> model_path;
  std::optional<double> mem_fraction;
  long long ep = 1;
  // Node health (rules/gpu_health). Lines for the fake NVML after the GPUs ("ecc 3 2", "fabric 0
  // 2 0": tests/fakes/nvml/fake_nvml.cpp), nvmlInit_v2's code when it fails, the kernel's journal
  // (lines of this boot, and of an earlier one), the Fabric Manager's ActiveState (nullopt: the
  // unit is not installed).
  std::vector<std::string> nvml_health;
  std::optional<int> nvml_init;
  std::vector<std::string> kernel_lines;
  std::vector<std::string> kernel_lines_earlier_boot;
  std::optional<std::string> fabric_manager;
  // The invoking shell.
  EnvironmentVariables shell = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}};

  std::vector<std::string> expected;  // finding codes, in any order
};

// gtest prints a parameter by name, not as bytes.
inline void PrintTo(const Scenario& scenario, std::ostream* out) {
  *out << scenario.name;
}

const std::vector<Scenario>& scenarios();
const Scenario& scenario_named(const std::string& name);

// Writes the scenario's node under `node` and its profile into node.scratch(); returns the
// profile's path. Sets $GPULAUNCH_FAKE_NVML. `port` is the server port to use.
std::string build_scenario(const Scenario& scenario, FixtureNode& node, int port);

// The scenario's host: a journal holding its kernel lines (the earlier boot's before the btime
// build_scenario writes into /proc/stat) and a manager that knows the Fabric Manager's unit.
HostSources scenario_host(const Scenario& scenario);

}  // namespace gl::test
