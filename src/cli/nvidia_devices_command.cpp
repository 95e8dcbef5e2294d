// SPDX-License-Identifier: Apache-2.0
// `gpulaunch nvidia-devices` (hidden): gpulaunch-nvidia-devices.service's ExecStart=, run by root
// at boot before any engine. It creates the NVIDIA device nodes the driver has (catalog/
// nvidia_devices) with the driver's own nvidia-modprobe, which the engine's sandbox could not run.

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

std::string join(const std::vector<std::string>& parts) {
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : " ") + part;
  return text;
}

Result<void> create_nodes(const std::string& root, bool dry_run) {
  const NodeFs node(root);
  const NvidiaNodesFact before = probe_nvidia_nodes(node);
  if (before.driver_loaded && before.missing.empty()) {
    fmt::print("gpulaunch: NVIDIA device nodes present ({} GPU(s))\n", before.minors.size());
    return {};
  }
  if (before.minors.empty() && !before.driver_loaded) {
    fmt::print("gpulaunch: no NVIDIA GPU on the PCI bus and no driver loaded: nothing to create\n");
    return {};
  }
  const auto args = nvidia_modprobe_args(before);
  const std::string command = fmt::format("{} {}", kNvidiaModprobe, join(args));
  // Under --root (an image, a test fixture) or --dry-run: say what a boot would run.
  if (dry_run || root != "/") {
    fmt::print("gpulaunch: would run {}\n", command);
    return {};
  }
  if (!before.modprobe_installed)
    return failf(
        "Cannot create the NVIDIA device nodes: {} is not installed (apt install "
        "nvidia-modprobe)",
        kNvidiaModprobe);
  // Root runs only a program no other user could have written.
  if (auto reason = user_writable_reason(std::string(kNvidiaModprobe)))
    return failf("Refusing to run '{}': {}", kNvidiaModprobe, *reason);
  auto ran = run_process(std::string(kNvidiaModprobe), args, std::chrono::seconds(60));
  if (!ran) return failf("Failed to run '{}': {}", command, ran.error().message);
  const NvidiaNodesFact after = probe_nvidia_nodes(node);
  if (ran->exit_code != 0 || !after.missing.empty())
    return failf("Failed to create the NVIDIA device nodes: '{}' exited {}{}", command,
                 ran->exit_code,
                 after.missing.empty() ? std::string() : "; still missing: " + join(after.missing));
  fmt::print("gpulaunch: ran {}: NVIDIA device nodes present ({} GPU(s))\n", command,
             after.minors.size());
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
                    "Print the nvidia-modprobe command instead of running it");
  command->callback([&context] {
    if (auto created = create_nodes(root, dry_run); !created)
      context.exit_code = report(created.error());
  });
}

}  // namespace gl
