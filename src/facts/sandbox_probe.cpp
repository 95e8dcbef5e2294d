// SPDX-License-Identifier: Apache-2.0
#include "facts/sandbox_probe.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>

#include <fmt/core.h>

#include "catalog/nvidia_devices.hpp"

namespace gl {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\t'))
    text.remove_suffix(1);
  return text;
}

std::optional<int> parse_int(std::string_view text) {
  text = trim(text);
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// /proc/devices' "Character devices:" section: the major registered as `name`.
std::optional<int> character_major(const std::string& devices, std::string_view name) {
  bool characters = devices.find(kCharacterDevicesHeading) == std::string::npos;
  for (size_t at = 0; at < devices.size();) {
    size_t end = devices.find('\n', at);
    if (end == std::string::npos) end = devices.size();
    std::string_view line = trim(std::string_view(devices).substr(at, end - at));
    at = end + 1;
    if (line == kCharacterDevicesHeading) {
      characters = true;
      continue;
    }
    if (line.ends_with("devices:")) characters = false;  // "Block devices:"
    if (!characters) continue;
    if (auto space = line.find(' '); space != std::string_view::npos)
      if (trim(line.substr(space + 1)) == name) return parse_int(line.substr(0, space));
  }
  return std::nullopt;
}

// The value after `field` up to the end of its line.
std::optional<int> field_value(const std::string& text, std::string_view field) {
  const auto at = text.find(field);
  if (at == std::string::npos) return std::nullopt;
  const auto end = text.find('\n', at);
  return parse_int(std::string_view(text).substr(
      at + field.size(), end == std::string::npos ? std::string::npos : end - at - field.size()));
}

// nullopt when `path` is the character device (major, minor); otherwise what /dev has instead:
// "" when nothing is there, else why it is not the driver's node.
std::optional<std::string> node_problem(const NodeFs& node, const std::string& path,
                                        std::optional<int> major, std::string_view major_name,
                                        int minor) {
  const auto device = node.device(path);
  if (!device) return std::string();
  if (!device->character) return std::string("not a character device");
  if (!major) return fmt::format("no {} major in {}", major_name, kProcDevices);
  if (static_cast<int>(device->major) == *major && static_cast<int>(device->minor) == minor)
    return std::nullopt;
  return fmt::format("c {}:{}; the driver serves c {}:{}", device->major, device->minor, *major,
                     minor);
}

void note_problem(std::vector<std::string>& missing, const std::string& path,
                  const std::optional<std::string>& problem) {
  if (!problem) return;
  missing.push_back(problem->empty() ? path : fmt::format("{} ({})", path, *problem));
}

std::vector<std::string> pci_gpu_addresses(const NodeFs& node) {
  std::vector<std::string> addresses;
  const std::string pci(kPciDevicesDirectory);
  for (const auto& address : node.list(pci)) {
    const auto vendor = node.read(pci + "/" + address + "/vendor", 64);
    const auto klass = node.read(pci + "/" + address + "/class", 64);
    if (!vendor || !klass || trim(*vendor) != kNvidiaPciVendor) continue;
    if (klass->starts_with(kPciVgaClass) || klass->starts_with(kPci3dClass))
      addresses.push_back(address);
  }
  return addresses;
}

}  // namespace

SandboxFact probe_sandbox(const NodeFs& node) {
  SandboxFact fact;
  for (const auto& allowance : sandbox_allowances()) {
    if (allowance.when == AllowanceWhen::node_has_device &&
        node.exists(std::string(allowance.node_path)))
      fact.devices.emplace_back(allowance.name);
    if (allowance.when == AllowanceWhen::mps_daemon &&
        node.is_directory(std::string(allowance.node_path)))
      fact.mps_daemon = true;
  }
  if (auto scope = node.read(std::string(kYamaPtraceScope), 64))
    fact.ptrace_scope = parse_int(*scope);
  return fact;
}

NvidiaNodesFact probe_nvidia_nodes(const NodeFs& node, std::optional<size_t> driver_gpus) {
  NvidiaNodesFact fact;
  fact.driver_loaded = node.exists(std::string(kDriverVersionFile));
  fact.modprobe_installed = node.is_executable_file(std::string(kNvidiaModprobe));
  fact.devices_unit_installed = node.exists(std::string(kNvidiaDevicesUnitPath));
  if (!fact.driver_loaded) {
    // At boot before udev loaded the module: nvidia-modprobe loads it and makes one node per
    // controller.
    const auto controllers =
        static_cast<int>(driver_gpus ? *driver_gpus : pci_gpu_addresses(node).size());
    for (int minor = 0; minor < controllers; ++minor) fact.minors.push_back(minor);
    return fact;
  }
  const auto devices = node.read(std::string(kProcDevices)).value_or("");
  // /dev/nvidiactl and /dev/nvidiaN: 195 under whichever name this driver registers.
  std::optional<int> gpu_major;
  for (auto name : kGpuMajorNames)
    if (!gpu_major) gpu_major = character_major(devices, name);
  note_problem(
      fact.missing, std::string(kControlNode),
      node_problem(node, std::string(kControlNode), gpu_major, kGpuMajorNames[0], kControlMinor));
  const auto uvm_major = character_major(devices, kUvmMajorName);
  fact.uvm_registered = uvm_major.has_value();
  const auto uvm = node_problem(node, std::string(kUvmNode), uvm_major, kUvmMajorName, kUvmMinor);
  fact.uvm_node = !uvm;
  // nvidia-uvm registers its major only once loaded: until then neither node is the driver's.
  note_problem(fact.missing, std::string(kUvmNode), uvm);
  note_problem(
      fact.missing, std::string(kUvmToolsNode),
      node_problem(node, std::string(kUvmToolsNode), uvm_major, kUvmMajorName, kUvmToolsMinor));
  const std::string gpus(kDriverGpusDirectory);
  for (const auto& address : node.list(gpus)) {
    const auto information = node.read(gpus + "/" + address + "/information");
    if (!information) continue;
    const auto minor = field_value(*information, kDeviceMinorField);
    if (!minor) continue;
    fact.minors.push_back(*minor);
    const std::string path = std::string(kGpuNodePrefix) + std::to_string(*minor);
    note_problem(fact.missing, path,
                 node_problem(node, path, gpu_major, kGpuMajorNames[0], *minor));
  }
  const auto caps_major = character_major(devices, kCapsMajorName);
  for (auto capability : {kMigConfigCapability, kMigMonitorCapability}) {
    const auto text = node.read(std::string(capability));
    if (!text) continue;
    fact.capabilities.emplace_back(capability);
    if (const auto minor = field_value(*text, kCapabilityMinorField)) {
      const std::string path = std::string(kCapabilityNodePrefix) + std::to_string(*minor);
      note_problem(fact.missing, path,
                   node_problem(node, path, caps_major, kCapsMajorName, *minor));
    }
  }
  fact.imex_major = character_major(devices, kImexChannelsMajorName);
  fact.imex_channels = fact.imex_major.has_value();
  fact.imex_channel0 =
      fact.imex_channels && !node_problem(node, std::string(kImexChannel0Node), fact.imex_major,
                                          kImexChannelsMajorName, kImexChannel0Minor);
  return fact;
}

bool needs_modprobe_help(const NvidiaNodesFact& fact) {
  return fact.modprobe_installed && fact.imex_channels && !fact.imex_channel0 &&
         !fact.modprobe_imex_option;
}

void read_modprobe_help(NvidiaNodesFact& fact, std::string_view help) {
  if (auto at = help.find(kModprobeVersionPrefix); at != std::string_view::npos) {
    auto version = help.substr(at + kModprobeVersionPrefix.size());
    fact.modprobe_version = std::string(trim(version.substr(0, version.find('\n'))));
  }
  // The option table's long name, as nvgetopt_print_help lists it: "--NAME=ARG".
  fact.modprobe_imex_option =
      help.find(std::string(kModprobeImexLongOption) + "=") != std::string_view::npos;
}

std::vector<std::vector<std::string>> nvidia_modprobe_calls(const NvidiaNodesFact& fact) {
  // An entry is the path, or the path and " (why)".
  auto lacks = [&](const std::string& path) {
    return std::any_of(fact.missing.begin(), fact.missing.end(), [&](const std::string& entry) {
      return entry == path || entry.starts_with(path + " (");
    });
  };
  auto lacks_under = [&](std::string_view prefix) {
    return std::any_of(fact.missing.begin(), fact.missing.end(),
                       [&](const std::string& entry) { return entry.starts_with(prefix); });
  };
  std::vector<std::vector<std::string>> calls;
  // Before the driver is loaded nothing says what is missing: the first two load the modules.
  bool gpu_nodes = !fact.driver_loaded || lacks(std::string(kControlNode));
  for (int minor : fact.minors)
    gpu_nodes = gpu_nodes || lacks(std::string(kGpuNodePrefix) + std::to_string(minor));
  if (gpu_nodes) {
    std::vector<std::string> call{std::string(kModprobeMinor), std::to_string(kControlMinor)};
    for (int minor : fact.minors) {
      call.emplace_back(kModprobeMinor);
      call.push_back(std::to_string(minor));
    }
    calls.push_back(std::move(call));
  }
  if (!fact.driver_loaded || lacks_under(kUvmNode))  // also /dev/nvidia-uvm-tools
    calls.push_back({std::string(kModprobeUnifiedMemory), std::string(kModprobeMinor),
                     std::to_string(kUvmMinor)});
  if (lacks_under(kCapabilityNodePrefix)) {
    std::vector<std::string> call;
    for (const auto& capability : fact.capabilities) {
      call.emplace_back(kModprobeCapability);
      call.push_back(capability);
    }
    calls.push_back(std::move(call));
  }
  if (fact.imex_channels && !fact.imex_channel0 && fact.modprobe_imex_option.value_or(false))
    calls.push_back({std::string(kModprobeImexChannels), std::string(kModprobeImexChannel0)});
  return calls;
}

std::optional<std::string> imex_channel_gap(const NvidiaNodesFact& fact) {
  if (!fact.imex_channels || fact.imex_channel0 || fact.modprobe_imex_option.value_or(false))
    return std::nullopt;
  if (!fact.modprobe_installed) return fmt::format("{} is not installed", kNvidiaModprobe);
  return fmt::format("{}{} has no {} ({}; only {} have it)", kNvidiaModprobe,
                     fact.modprobe_version.empty() ? "" : " " + fact.modprobe_version,
                     kModprobeImexChannels, kModprobeImexLongOption, kModprobeImexReleases);
}

}  // namespace gl
