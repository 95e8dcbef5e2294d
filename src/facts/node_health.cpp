// SPDX-License-Identifier: Apache-2.0
#include "facts/node_health.hpp"

#include <array>
#include <charconv>

#include "catalog/node_health.hpp"

namespace gl {
namespace {

std::optional<unsigned long> hex_field(std::string_view text) {
  unsigned long value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// "domain:bus:device[.function]" -> the three numbers.
std::optional<std::array<unsigned long, 3>> pci_address(std::string_view text) {
  if (auto dot = text.find('.'); dot != std::string_view::npos) text = text.substr(0, dot);
  std::array<unsigned long, 3> fields{};
  for (size_t i = 0; i < 3; ++i) {
    auto colon = text.find(':');
    if ((i < 2) != (colon != std::string_view::npos)) return std::nullopt;
    auto value = hex_field(text.substr(0, colon));
    if (!value) return std::nullopt;
    fields[i] = *value;
    text = i < 2 ? text.substr(colon + 1) : std::string_view();
  }
  return fields;
}

// /proc/stat's "btime SECONDS": when the running kernel booted.
std::optional<uint64_t> boot_usec(const NodeFs& node) {
  auto stat = node.read("/proc/stat");
  if (!stat) return std::nullopt;
  constexpr std::string_view kKey = "btime ";
  auto at = stat->find("\n" + std::string(kKey));
  if (at == std::string::npos) return std::nullopt;
  std::string_view rest = std::string_view(*stat).substr(at + 1 + kKey.size());
  uint64_t seconds = 0;
  auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), seconds);
  if (error != std::errc()) return std::nullopt;
  return seconds * 1'000'000;
}

bool fabric_reported(const std::vector<GpuFact>& gpus) {
  for (const auto& gpu : gpus)
    if (gpu.health.fabric_state &&
        *gpu.health.fabric_state != fabric_state_name(FabricState::not_supported))
      return true;
  return false;
}

}  // namespace

HostSources system_host_sources() {
  return {[] { return open_journal(); }, [] { return connect_systemd(ManagerScope::system); }};
}

std::optional<XidLine> parse_xid_line(std::string_view message) {
  auto at = message.find(kXidMarker);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = message.substr(at + kXidMarker.size());
  if (rest.starts_with("PCI:")) rest.remove_prefix(4);  // old drivers wrote the bare address
  auto close = rest.find("): ");
  if (close == std::string_view::npos || !pci_address(rest.substr(0, close))) return std::nullopt;
  XidLine line;
  line.pci = std::string(rest.substr(0, close));
  rest.remove_prefix(close + 3);
  auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), line.xid);
  if (error != std::errc() || end == rest.data()) return std::nullopt;
  return line;
}

bool same_pci_device(std::string_view nvml_bus_id, std::string_view kernel_pci) {
  auto nvml = pci_address(nvml_bus_id);
  auto kernel = pci_address(kernel_pci);
  return nvml && kernel && *nvml == *kernel;
}

NodeHealthFact probe_node_health(const NodeFs& node, const HostSources& host,
                                 const std::vector<GpuFact>& gpus) {
  NodeHealthFact fact;
  if (gpus.empty()) return fact;
  fact.boot_usec = boot_usec(node);
  if (host.journal) {
    auto journal = host.journal();
    auto lines = journal ? (*journal)->kernel_since(fact.boot_usec.value_or(0), kXidMarker)
                         : Result<std::vector<JournalEntry>>(std::unexpected(journal.error()));
    if (lines) {
      fact.kernel_log_read = true;
      for (const auto& entry : *lines) {
        auto xid = parse_xid_line(entry.message);
        if (!xid) continue;
        XidFact event{xid->xid, xid->pci, std::nullopt, entry.realtime_usec, entry.message};
        for (const auto& gpu : gpus)
          if (same_pci_device(gpu.pci_bus_id, xid->pci)) event.gpu = gpu.index;
        fact.xids.push_back(std::move(event));
      }
    } else {
      fact.problems.push_back("Xid lines: " + lines.error().message);
    }
  }
  // Only where a GPU reports NVLink fabric (Hopper and newer on NVSwitch): A100 NVSwitch systems
  // report none through NVML and are not judged, so a PCIe node never asks D-Bus.
  if (host.manager && fabric_reported(gpus)) {
    auto manager = host.manager();
    auto status = manager ? (*manager)->status(kFabricManagerUnit)
                          : Result<UnitStatus>(std::unexpected(manager.error()));
    if (status)
      fact.fabric_manager_state =
          status->load_state == "not-found" ? "not-found" : status->active_state;
    else
      fact.problems.push_back(std::string(kFabricManagerUnit) + ": " + status.error().message);
  }
  return fact;
}

}  // namespace gl
