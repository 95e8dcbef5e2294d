// SPDX-License-Identifier: Apache-2.0
// `gpulaunch nvidia-devices` (hidden): gpulaunch-nvidia-devices.service's ExecStart=, run by root
// at boot before any engine. It creates the NVIDIA device nodes the driver has (catalog/
// nvidia_devices) with the driver's own nvidia-modprobe, which the engine's sandbox could not run,
// one call per mode of nvidia-modprobe's main(), and then checks every node's type, major and
// minor against /proc/devices, not only that a path exists.

#include <chrono>
#include <string>

#include <fmt/core.h>

#include "catalog/nvidia_devices.hpp"
#include "cli/context.hpp"
#include "facts/node_fs.hpp"
#include "facts/sandbox_probe.hpp"
#include "util/process.hpp"
#include "util/safe_file.hpp"

namespace gl {
namespace {

std::string join(const std::vector<std::string>& parts, std::string_view separator = " ") {
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : std::string(separator)) + part;
  return text;
}

// The installed nvidia-modprobe's --help, where the nodes need an option not every release has
// (as nobody: it only prints).
void ask_modprobe(const NodeFs& node, NvidiaNodesFact& fact) {
  if (!needs_modprobe_help(fact)) return;
  auto modprobe = node.host_path(std::string(kNvidiaModprobe));
  if (!modprobe) return;
  auto help = run_unprivileged(modprobe->string(), {std::string(kModprobeHelp)}, std::nullopt);
  if (help && help->exit_code == 0) read_modprobe_help(fact, help->out);
}

NvidiaNodesFact probe(const NodeFs& node, const NvidiaNodesFact* asked = nullptr) {
  NvidiaNodesFact fact = probe_nvidia_nodes(node);
  if (asked && asked->modprobe_imex_option) {
    fact.modprobe_version = asked->modprobe_version;
    fact.modprobe_imex_option = asked->modprobe_imex_option;
  }
  ask_modprobe(node, fact);
  return fact;
}

void say_imex_gap(const NvidiaNodesFact& fact) {
  if (auto gap = imex_channel_gap(fact))
    fmt::print(
        "gpulaunch: IMEX channel 0 ({}) not made: {}; multi-node NVLink jobs need it: load the "
        "driver with {} or make it (`gpulaunch check` says how)\n",
        kImexChannel0Node, *gap, kImexChannel0Option);
}

Result<void> create_nodes(const std::string& root, bool dry_run) {
  const NodeFs node(root);
  NvidiaNodesFact fact = probe(node);
  auto calls = nvidia_modprobe_calls(fact);
  if (fact.driver_loaded && calls.empty()) {
    fmt::print("gpulaunch: NVIDIA device nodes present ({} GPU(s))\n", fact.minors.size());
    say_imex_gap(fact);
    return {};
  }
  if (fact.minors.empty() && !fact.driver_loaded) {
    fmt::print("gpulaunch: no NVIDIA GPU on the PCI bus and no driver loaded: nothing to create\n");
    return {};
  }
  // Under --root (an image, a test fixture) or --dry-run: say what a boot would run.
  if (dry_run || root != "/") {
    for (const auto& call : calls)
      fmt::print("gpulaunch: would run {} {}\n", kNvidiaModprobe, join(call));
    say_imex_gap(fact);
    return {};
  }
  if (!fact.modprobe_installed)
    return failf(
        "Cannot create the NVIDIA device nodes: {} is not installed (apt install "
        "nvidia-modprobe)",
        kNvidiaModprobe);
  // Root runs only a program no other user could have written.
  if (auto reason = user_writable_reason(std::string(kNvidiaModprobe)))
    return failf("Refusing to run '{}': {}", kNvidiaModprobe, *reason);
  // A driver loaded by the first calls shows its capabilities only then: a second round.
  std::vector<std::string> ran;
  for (int round = 0; round < 2 && !calls.empty(); ++round) {
    for (const auto& call : calls) {
      const std::string command = fmt::format("{} {}", kNvidiaModprobe, join(call));
      auto result = run_process(std::string(kNvidiaModprobe), call, std::chrono::seconds(60));
      if (!result) return failf("Failed to run '{}': {}", command, result.error().message);
      fmt::print("gpulaunch: ran {}: exit {}\n", command, result->exit_code);
      ran.push_back(fmt::format("'{}' exited {}", command, result->exit_code));
    }
    fact = probe(node, &fact);
    calls = nvidia_modprobe_calls(fact);
  }
  if (!fact.driver_loaded || !fact.missing.empty() ||
      (fact.imex_channels && !fact.imex_channel0 && fact.modprobe_imex_option.value_or(false)))
    return failf("Failed to create the NVIDIA device nodes: {}; {}", join(ran, ", "),
                 !fact.driver_loaded    ? std::string("the driver is still not loaded")
                 : fact.missing.empty() ? fmt::format("still missing: {}", kImexChannel0Node)
                                        : "not the driver's: " + join(fact.missing, ", "));
  fmt::print("gpulaunch: NVIDIA device nodes present and the driver's ({} GPU(s))\n",
             fact.minors.size());
  say_imex_gap(fact);
  return {};
}

}  // namespace

void add_nvidia_devices_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "nvidia-devices",
      "At boot, as root (gpulaunch-nvidia-devices.service): create the NVIDIA device nodes "
      "every GPU needs before an engine starts");
  command->group("");  // the package's unit calls it
  static std::string root = "/";
  static bool dry_run = false;
  command->add_option("--root", root, "Read the node under this directory (runs nothing)");
  command->add_flag("--dry-run", dry_run,
                    "Print the nvidia-modprobe calls instead of running them");
  command->callback([&context] {
    if (auto created = create_nodes(root, dry_run); !created)
      context.exit_code = report(created.error());
  });
}

}  // namespace gl
