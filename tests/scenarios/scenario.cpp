// SPDX-License-Identifier: Apache-2.0
#include "scenarios/scenario.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/core.h>

#include "catalog/node_health.hpp"
#include "fakes/systemd/fake_journal.hpp"
#include "fakes/systemd/fake_manager.hpp"

namespace gl::test {
namespace {

// When the scenario's node booted (/proc/stat btime), in seconds since the epoch.
constexpr uint64_t kBootSeconds = 1'780'000'000;

std::string toml_string(const std::string& text) {
  return "\"" + text + "\"";
}

std::string profile_text(const Scenario& scenario, int port) {
  std::string text = fmt::format("description = \"scenario {}\"\n\n[engine]\nkind = \"{}\"\n",
                                 scenario.name, scenario.engine);
  text += "venv = \"/opt/venv\"\n";
  if (scenario.mem_fraction) text += fmt::format("mem_fraction = {}\n", *scenario.mem_fraction);
  text +=
      fmt::format("\n[model]\npath = {}\n", toml_string(scenario.model_path.value_or("/models/m")));
  text += fmt::format("\n[parallelism]\ntp = {}\npp = {}\n", scenario.tp, scenario.pp);
  if (scenario.ep > 1) text += fmt::format("ep = {}\n", scenario.ep);
  if (scenario.cuda_home || scenario.min_version || scenario.arch_list) {
    text += "\n[toolkit]\n";
    if (scenario.cuda_home) text += "cuda_home = " + toml_string(*scenario.cuda_home) + "\n";
    if (scenario.min_version) text += "min_version = " + toml_string(*scenario.min_version) + "\n";
    if (scenario.arch_list) text += "arch_list = " + toml_string(*scenario.arch_list) + "\n";
  }
  if (!scenario.devices.empty() || scenario.gpus_arch) {
    text += "\n[gpus]\n";
    if (!scenario.devices.empty()) {
      std::string list;
      for (const auto& device : scenario.devices)
        list += (list.empty() ? "" : ", ") + toml_string(device);
      text += "devices = [" + list + "]\n";
    }
    if (scenario.gpus_arch) text += "arch = " + toml_string(*scenario.gpus_arch) + "\n";
  }
  text += fmt::format("\n[server]\nhost = \"127.0.0.1\"\nport = {}\n", port);
  if (scenario.service_user || !scenario.service_extra.empty()) text += "\n[service]\n";
  if (scenario.service_user) text += "user = " + toml_string(*scenario.service_user) + "\n";
  if (!scenario.service_extra.empty()) {
    std::string list;
    for (const auto& line : scenario.service_extra)
      list += (list.empty() ? "" : ", ") + toml_string(line);
    text += "extra = [" + list + "]\nallow_unsafe_extra = true\n";
  }
  if (!scenario.env.empty()) {
    text += "\n[env]\n";
    for (const auto& [name, value] : scenario.env) text += name + " = " + toml_string(value) + "\n";
  }
  return text;
}

// The OS side of the node: /sys/class/infiniband, /proc/modules, /dev/shm, the snapshots of the
// installed profiles, the model's weights.
void write_node_os(const Scenario& scenario, FixtureNode& node) {
  for (const auto& device : scenario.infiniband)
    node.mkdir("/sys/class/infiniband/" + device + "/ports/1");
  if (scenario.proc_modules) node.write("/proc/modules", *scenario.proc_modules);
  node.mkdir("/dev/shm");
  for (const auto& [name, devices] : scenario.installed) {
    std::string list;
    for (const auto& device : devices) list += (list.empty() ? "" : ", ") + toml_string(device);
    node.write("/var/lib/gpulaunch/snapshots/" + name + ".toml",
               fmt::format("description = \"installed {}\"\n\n[engine]\nkind = \"sglang\"\n"
                           "venv = \"/opt/venv\"\n\n[model]\npath = \"/models/other\"\n\n"
                           "[parallelism]\ntp = {}\n\n[gpus]\ndevices = [{}]\n",
                           name, devices.size(), list));
  }
  if (!scenario.model_exists) return;
  if (scenario.model_total_size)
    node.write("/models/m/model.safetensors.index.json",
               fmt::format("{{\n  \"metadata\": {{\n    \"total_size\": {}\n  }},\n  "
                           "\"weight_map\": {{\"lm_head.weight\": "
                           "\"model-00001-of-00001.safetensors\"}}\n}}\n",
                           *scenario.model_total_size));
  for (size_t i = 0; i < scenario.model_files.size(); ++i) {
    const std::string name = fmt::format("/models/m/model-{:05}-of-{:05}.safetensors", i + 1,
                                         scenario.model_files.size());
    node.write(name, "");
    std::filesystem::resize_file(node.root() / std::filesystem::path(name).relative_path(),
                                 scenario.model_files[i]);
  }
}

}  // namespace

std::string build_scenario(const Scenario& scenario, FixtureNode& node, int port) {
  for (const auto& toolkit : scenario.toolkits)
    node.toolkit(toolkit.path, toolkit.version, toolkit.layout, toolkit.lists_archs);
  if (scenario.cuda_symlink) node.symlink("/usr/local/cuda", *scenario.cuda_symlink);
  std::vector<std::string> programs;
  if (scenario.engine == "vllm" && scenario.packages.contains("vllm")) programs.push_back("vllm");
  node.venv("/opt/venv", scenario.torch, scenario.torch_cuda, scenario.packages,
            scenario.venv_python, programs);
  if (scenario.venv_nvcc)
    node.toolkit("/opt/venv/lib/python3.11/site-packages/nvidia/cu13", *scenario.venv_nvcc,
                 ToolkitLayout::pip);
  for (const auto& directory : scenario.directories) node.mkdir(directory);
  for (const auto& [wrapper, toolkit] : scenario.nvcc_wrappers)
    node.write(wrapper,
               fmt::format("#!/bin/sh\nexec '{}/bin/nvcc' \"$@\"\n",
                           (node.root() / std::filesystem::path(toolkit).relative_path()).string()),
               true);
  if (scenario.model_exists) node.write("/models/m/config.json", scenario.model_config + "\n");
  write_node_os(scenario, node);
  std::string nvml_file =
      node.nvml(scenario.gpus, scenario.driver, scenario.driver_cuda,
                scenario.nvml_init.value_or(scenario.gpu_source == GpuSource::nvml ? 0 : 9));
  {
    std::ofstream nvml(nvml_file, std::ios::app);
    for (const auto& line : scenario.nvml_health) nvml << line << "\n";
  }
  node.write("/proc/stat", fmt::format("cpu  1 2 3 4\nbtime {}\nprocesses 4242\n", kBootSeconds));
  if (scenario.gpu_source == GpuSource::nvidia_smi)
    node.nvidia_smi(scenario.gpus, scenario.driver, scenario.driver_cuda);
  setenv("GPULAUNCH_FAKE_NVML", nvml_file.c_str(), 1);
  auto profile_path = node.scratch() / "scenario.toml";
  std::ofstream(profile_path) << profile_text(scenario, port);
  return profile_path.string();
}

HostSources scenario_host(const Scenario& scenario) {
  HostSources host;
  host.journal = [scenario]() -> Result<std::unique_ptr<Journal>> {
    auto journal = std::make_unique<testing::FakeJournal>();
    const uint64_t boot = kBootSeconds * 1'000'000;
    for (const auto& line : scenario.kernel_lines_earlier_boot)
      journal->kernel.push_back({boot - 86'400'000'000, "kernel", 0, line});
    for (const auto& line : scenario.kernel_lines)
      journal->kernel.push_back({boot + 60'000'000, "kernel", 0, line});
    return journal;
  };
  host.manager = [scenario]() -> Result<std::unique_ptr<SystemdManager>> {
    auto manager = std::make_unique<testing::FakeManager>();
    if (scenario.fabric_manager)
      manager->add_unit(std::string(kFabricManagerUnit), *scenario.fabric_manager);
    return manager;
  };
  return host;
}

const Scenario& scenario_named(const std::string& name) {
  for (const auto& scenario : scenarios())
    if (scenario.name == name) return scenario;
  std::abort();
}

}  // namespace gl::test
