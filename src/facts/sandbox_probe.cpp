// SPDX-License-Identifier: Apache-2.0
#include "facts/sandbox_probe.hpp"

#include <charconv>
#include <string_view>

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

// /proc/devices: "MAJOR NAME" lines; whether `name` has a major.
bool registers(const std::string& devices, std::string_view name) {
  for (size_t at = 0; at < devices.size();) {
    size_t end = devices.find('\n', at);
    if (end == std::string::npos) end = devices.size();
    std::string_view line = trim(std::string_view(devices).substr(at, end - at));
    if (auto space = line.find(' '); space != std::string_view::npos)
      if (trim(line.substr(space + 1)) == name) return true;
    at = end + 1;
  }
  return false;
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

NvidiaNodesFact probe_nvidia_nodes(const NodeFs& node) {
  NvidiaNodesFact fact;
  fact.driver_loaded = node.exists(std::string(kDriverVersionFile));
  fact.modprobe_installed = node.is_executable_file(std::string(kNvidiaModprobe));
  fact.devices_unit_installed = node.exists(std::string(kNvidiaDevicesUnitPath));
  if (!fact.driver_loaded) {
    // At boot before udev loaded the module: nvidia-modprobe loads it and makes one node per
    // controller.
    const auto controllers = static_cast<int>(pci_gpu_addresses(node).size());
    for (int minor = 0; minor < controllers; ++minor) fact.minors.push_back(minor);
    return fact;
  }
  const auto devices = node.read(std::string(kProcDevices)).value_or("");
  fact.uvm_registered = registers(devices, kUvmMajorName);
  fact.imex_channels = registers(devices, kImexChannelsMajorName);
  fact.uvm_node = node.exists(std::string(kUvmNode));
  // nvidia-uvm registers its major only once loaded: without it there is no node either.
  if (!fact.uvm_registered || !fact.uvm_node) fact.missing.emplace_back(kUvmNode);
  const std::string gpus(kDriverGpusDirectory);
  for (const auto& address : node.list(gpus)) {
    const auto information = node.read(gpus + "/" + address + "/information");
    if (!information) continue;
    const auto at = information->find(kDeviceMinorField);
    if (at == std::string::npos) continue;
    const auto end = information->find('\n', at);
    const auto minor =
        parse_int(std::string_view(*information)
                      .substr(at + kDeviceMinorField.size(),
                              end == std::string::npos ? std::string::npos
                                                       : end - at - kDeviceMinorField.size()));
    if (!minor) continue;
    fact.minors.push_back(*minor);
    const std::string path = std::string(kGpuNodePrefix) + std::to_string(*minor);
    if (!node.exists(path)) fact.missing.push_back(path);
  }
  for (auto capability : {kMigConfigCapability, kMigMonitorCapability})
    if (node.exists(std::string(capability))) fact.capabilities.emplace_back(capability);
  return fact;
}

std::vector<std::string> nvidia_modprobe_args(const NvidiaNodesFact& fact) {
  std::vector<std::string> args{std::string(kModprobeUnifiedMemory)};
  for (int minor : fact.minors) {
    args.emplace_back(kModprobeMinor);
    args.push_back(std::to_string(minor));
  }
  for (const auto& capability : fact.capabilities) {
    args.emplace_back(kModprobeCapability);
    args.push_back(capability);
  }
  if (fact.imex_channels) {
    args.emplace_back(kModprobeImexChannels);
    args.emplace_back(kImexDefaultChannels);
  }
  return args;
}

}  // namespace gl
