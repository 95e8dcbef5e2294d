// SPDX-License-Identifier: Apache-2.0
#pragma once
// What only the running host can say about its GPUs: the NVIDIA kernel module's Xid lines since
// boot (the kernel's journal) and the Fabric Manager's state (systemd over D-Bus). Read when the
// node is this host; an image under --root has neither.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "facts/facts.hpp"
#include "facts/node_fs.hpp"
#include "systemd/journal.hpp"
#include "systemd/manager.hpp"
#include "util/error.hpp"

namespace gl {

// Opened only when a fact needs them, so a node without GPUs or NVSwitch pays for neither.
struct HostSources {
  std::function<Result<std::unique_ptr<Journal>>()> journal;
  std::function<Result<std::unique_ptr<SystemdManager>>()> manager;
};
// The system's journal and manager.
HostSources system_host_sources();

// One "NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus." line.
struct XidLine {
  std::string pci;  // "0000:3b:00"
  int xid = 0;
};
std::optional<XidLine> parse_xid_line(std::string_view message);

// Whether NVML's bus id ("00000000:3B:00.0") and the kernel's ("0000:3b:00") name one device:
// domain, bus and device compared as numbers.
bool same_pci_device(std::string_view nvml_bus_id, std::string_view kernel_pci);

// The Xid lines since boot (boot time from /proc/stat's btime), each mapped to the GPU at its
// address, and the Fabric Manager's ActiveState when a GPU reports NVLink fabric.
NodeHealthFact probe_node_health(const NodeFs& node, const HostSources& host,
                                 const std::vector<GpuFact>& gpus);

}  // namespace gl
