// SPDX-License-Identifier: Apache-2.0
#include "rules/service_view.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "facts/port_holders.hpp"

namespace gl {

std::string unit_cgroup(std::string_view proc_pid_cgroup, std::string_view unit) {
  const std::string path = unified_cgroup(proc_pid_cgroup);
  const std::string component = "/" + std::string(unit);
  for (size_t at = path.find(component); at != std::string::npos;
       at = path.find(component, at + 1)) {
    const size_t end = at + component.size();
    if (end == path.size() || path[end] == '/') return path.substr(0, end);
  }
  return "";
}

void see_as_service(Facts& facts, SystemdManager& manager, const NodeFs& node,
                    const std::string& unit) {
  auto status = manager.status(unit);
  if (!status || !status->running() || status->main_pid == 0) return;
  const std::string cgroup = unit_cgroup(
      node.read("/proc/" + std::to_string(status->main_pid) + "/cgroup").value_or(""), unit);
  if (cgroup.empty()) return;
  for (auto& port : facts.ports) {
    if (!port.taken) continue;
    const auto holders = port_holders(node, port.port);
    if (!held_only_within(holders, cgroup)) continue;
    std::vector<long long> pids;
    for (const auto& holder : holders) pids.push_back(holder.pid);
    port.held_by_service = fmt::format("{} (PID {})", unit, fmt::join(pids, ", "));
  }
}

}  // namespace gl
