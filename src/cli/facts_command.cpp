// SPDX-License-Identifier: Apache-2.0
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/context.hpp"
#include "cli/profile_lookup.hpp"
#include "facts/gather.hpp"
#include "plan/launch_plan.hpp"
#include "profile/validate.hpp"
#include "rules/check.hpp"
#include "rules/installed_profiles.hpp"
#include "util/terminal_text.hpp"

namespace gl {
namespace {

// NVML's health readings per GPU, the Xids since boot and the Fabric Manager (rules/gpu_health).
void print_node_health(const Facts& facts) {
  auto flag = [](const std::optional<bool>& value, std::string_view yes, std::string_view no) {
    return value ? std::string(*value ? yes : no) : std::string("?");
  };
  for (const auto& gpu : facts.gpus) {
    const auto& health = gpu.health;
    if (gpu.pci_bus_id.empty() && !health.persistence_mode && !health.fabric_state) continue;
    fmt::print(
        "  {}  pci {}  persistence {}  ecc uncorrected {}  remap {}  retired-pending {}  "
        "fabric {}{}\n",
        gpu.index, gpu.pci_bus_id.empty() ? "?" : gpu.pci_bus_id,
        flag(health.persistence_mode, "on", "off"),
        health.ecc_uncorrected_volatile ? std::to_string(*health.ecc_uncorrected_volatile)
                                        : std::string("?"),
        health.row_remap_failure && *health.row_remap_failure
            ? std::string("failed")
            : flag(health.row_remap_pending, "pending", "none"),
        flag(health.retired_pages_pending, "yes", "no"), health.fabric_state.value_or("?"),
        health.fabric_error ? " (" + *health.fabric_error + ")" : "");
  }
  const auto& node = facts.node_health;
  if (node.fabric_manager_state) fmt::print("fabric manager: {}\n", *node.fabric_manager_state);
  if (node.kernel_log_read) fmt::print("xid events since boot: {}\n", node.xids.size());
  // The kernel's lines name the process that faulted: the engine's own name, as it set it.
  for (const auto& xid : node.xids) fmt::print("  {}\n", terminal_text(xid.message));
  for (const auto& problem : node.problems) fmt::print("  note: {}\n", problem);
}

void print_facts(const Facts& facts) {
  fmt::print("root: {}\n", facts.root);
  fmt::print("driver: {}",
             facts.driver.present ? facts.driver.version.value_or("?") : "no NVIDIA driver");
  if (facts.driver.max_cuda) fmt::print(" (CUDA {})", *facts.driver.max_cuda);
  fmt::print(" [{}]\n", facts.driver.source);
  for (const auto& problem : facts.driver.problems) fmt::print("  note: {}\n", problem);
  fmt::print("gpus: {}\n", facts.gpus.size());
  for (const auto& gpu : facts.gpus)
    fmt::print("  {}  {}  {}  cc {}  {} MiB\n", gpu.index, gpu.name, gpu.uuid, capability_text(gpu),
               gpu.memory_total_mib);
  print_node_health(facts);
  fmt::print("toolkits: {}\n", facts.toolkits.size());
  for (const auto& toolkit : facts.toolkits) {
    std::string via;
    for (const auto& item : toolkit.found_via) via += (via.empty() ? "" : ", ") + item;
    fmt::print("  {}  {}  nvcc {}  via {}\n", toolkit.root,
               toolkit.version() ? "CUDA " + *toolkit.version() : std::string("(no version)"),
               toolkit.nvcc_exists ? "yes" : "missing", via);
    if (toolkit.archs) {
      std::string archs;
      for (int sm : *toolkit.archs) archs += (archs.empty() ? "sm_" : " sm_") + std::to_string(sm);
      fmt::print("    archs: {}\n", archs);
    }
    for (const auto& problem : toolkit.problems) fmt::print("    note: {}\n", problem);
  }
  if (facts.python) {
    const auto& python = *facts.python;
    fmt::print("python: {} ({})\n", python.prefix,
               python.interpreter_exists ? python.interpreter : "no interpreter");
    if (python.torch_version)
      fmt::print("  torch {} (CUDA {})\n", *python.torch_version,
                 python.torch_cuda.value_or("none"));
    for (const auto& [name, version] : python.packages)
      if (name != "torch") fmt::print("  {} {}\n", name, version);
  }
  for (const auto& path : facts.paths)
    fmt::print("path: {} {}\n", path.path, path.exists ? "exists" : "missing");
  // Node preflight, OS side.
  if (facts.infiniband) {
    std::string devices, peer;
    for (const auto& device : facts.infiniband->devices) devices += " " + device;
    for (const auto& item : facts.infiniband->peer_memory)
      peer += (peer.empty() ? "" : ", ") + item;
    fmt::print("infiniband:{}\n", devices.empty() ? " none" : devices);
    if (!facts.infiniband->devices.empty())
      fmt::print("  peer memory: {}\n", peer.empty() ? "none loaded" : peer);
  }
  if (facts.rendezvous_route)
    fmt::print("rendezvous route: {} via {}\n", facts.rendezvous_route->host,
               facts.rendezvous_route->interface.empty() ? facts.rendezvous_route->problem
                                                         : facts.rendezvous_route->interface);
  if (facts.shm)
    fmt::print("shm: {} {}\n", facts.shm->path,
               facts.shm->exists ? fmt::format("{} MiB", facts.shm->size_bytes >> 20) : "missing");
  if (facts.sandbox) {
    std::string devices;
    for (const auto& device : facts.sandbox->devices) devices += " " + device;
    fmt::print(
        "sandbox devices:{}; mps daemon: {}; yama ptrace_scope: {}\n",
        devices.empty() ? " none" : devices, facts.sandbox->mps_daemon ? "yes" : "no",
        facts.sandbox->ptrace_scope ? std::to_string(*facts.sandbox->ptrace_scope) : "no yama");
  }
  if (facts.nvidia_nodes && facts.nvidia_nodes->driver_loaded) {
    std::string missing;
    for (const auto& node : facts.nvidia_nodes->missing) missing += " " + node;
    fmt::print("nvidia device nodes: {}\n", missing.empty() ? "present" : "missing" + missing);
  }
  if (facts.installed_profiles)
    for (const auto& installed : *facts.installed_profiles) {
      std::string gpus;
      for (const auto& gpu : installed.gpus) gpus += (gpus.empty() ? "" : ",") + gpu;
      fmt::print("installed: {} {}\n", installed.name,
                 installed.problem ? *installed.problem : installed.engine + " on GPUs " + gpus);
    }
  if (facts.model && facts.model->weights_bytes)
    fmt::print("model: {} {:.1f} GB ({})\n", facts.model->path, *facts.model->weights_bytes / 1e9,
               facts.model->weights_source);
  for (const auto& port : facts.ports)
    fmt::print("port: {}:{} {}\n", port.host, port.port,
               port.problem ? *port.problem : (port.taken ? "taken" : "free"));
}

}  // namespace

void add_facts_command(CLI::App& app, CliContext& context) {
  auto* command =
      app.add_subcommand("facts", "Print what this node is: GPUs, driver, toolkits, venv");
  static std::string name;
  static std::string root = "/";
  static bool json = false;
  command->add_option("profile", name, "Profile whose venv, model and port to include")
      ->check(profile_argument_check());
  command->add_option("--root", root, "Probe the filesystem under this directory instead of /");
  command->add_flag("--json", json, "Print the facts as JSON (input for check --facts)");
  command->callback([&context] {
    auto shell = ShellEnvironment::current();
    FactsRequest request;
    if (!name.empty()) {
      auto profile = load_profile_or_installed(context, name);
      if (!profile) {
        context.exit_code = report(profile.error(), 2);
        return;
      }
      request = facts_request(*profile, make_launch_plan(*profile), shell);
    } else {
      request.environments.push_back({"shell", shell.variables});
      request.installed_profiles = probe_installed_profiles;
    }
    request.probe_ports = root == "/";
    if (root == "/") request.host = system_host_sources();
    auto facts = gather_facts(NodeFs(root), request);
    if (json)
      fmt::print("{}\n", facts_to_json(facts).dump(2));
    else
      print_facts(facts);
  });
}

}  // namespace gl
