// SPDX-License-Identifier: Apache-2.0
#include "supervise/cgroup.hpp"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace gl {
namespace {

std::optional<long long> counter_in(const std::string& path) {
  std::ifstream file(path);
  std::string key;
  long long value = 0;
  while (file >> key >> value)
    if (key == "oom_kill") return value;
  return std::nullopt;
}

std::optional<unsigned long long> number_in(const std::string& path) {
  std::ifstream file(path);
  unsigned long long value = 0;
  if (file >> value) return value;
  return std::nullopt;  // "max" (v2's unlimited) or unreadable
}

// v1 writes "no limit" as the largest page-aligned 63-bit number.
constexpr unsigned long long kUnlimitedV1 = 1ULL << 62;

// The own cgroup's directories for memory, in /proc/self/cgroup's order ("N:controllers:/path"):
// v1 names the memory controller, v2 has an empty controller list.
struct MemoryCgroup {
  bool v1 = false;
  std::string directory;
};

std::vector<MemoryCgroup> own_memory_cgroups() {
  std::vector<MemoryCgroup> found;
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line;
  while (std::getline(cgroups, line)) {
    auto first = line.find(':');
    auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controllers == "memory") found.push_back({true, "/sys/fs/cgroup/memory" + path});
    if (controllers.empty()) found.push_back({false, "/sys/fs/cgroup" + path});
  }
  return found;
}

}  // namespace

std::optional<unsigned long long> own_cgroup_memory_room() {
  const auto cgroups = own_memory_cgroups();
  if (cgroups.empty()) return std::nullopt;
  const auto& cgroup = cgroups.front();
  auto limit = number_in(cgroup.directory + (cgroup.v1 ? "/memory.limit_in_bytes" : "/memory.max"));
  auto usage =
      number_in(cgroup.directory + (cgroup.v1 ? "/memory.usage_in_bytes" : "/memory.current"));
  if (!limit || !usage || *limit >= kUnlimitedV1) return std::nullopt;
  return *limit > *usage ? *limit - *usage : 0;
}

std::optional<long long> own_cgroup_oom_kills() {
  for (const auto& cgroup : own_memory_cgroups())
    if (auto value =
            counter_in(cgroup.directory + (cgroup.v1 ? "/memory.oom_control" : "/memory.events")))
      return value;
  return std::nullopt;
}

}  // namespace gl
