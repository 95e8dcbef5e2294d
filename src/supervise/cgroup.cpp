// SPDX-License-Identifier: Apache-2.0
#include "supervise/cgroup.hpp"

#include <fstream>
#include <sstream>
#include <string>

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

// The own cgroup's directory for the memory controller (v1) or the unified hierarchy (v2),
// with the names of its limit and usage files.
struct MemoryFiles {
  std::string limit;
  std::string usage;
};

std::optional<MemoryFiles> own_memory_files() {
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line;
  while (std::getline(cgroups, line)) {
    auto first = line.find(':');
    auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controllers == "memory")
      return MemoryFiles{"/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes",
                         "/sys/fs/cgroup/memory" + path + "/memory.usage_in_bytes"};
    if (controllers.empty())
      return MemoryFiles{"/sys/fs/cgroup" + path + "/memory.max",
                         "/sys/fs/cgroup" + path + "/memory.current"};
  }
  return std::nullopt;
}

}  // namespace

std::optional<unsigned long long> own_cgroup_memory_room() {
  auto files = own_memory_files();
  if (!files) return std::nullopt;
  auto limit = number_in(files->limit);
  auto usage = number_in(files->usage);
  if (!limit || !usage || *limit >= kUnlimitedV1) return std::nullopt;
  return *limit > *usage ? *limit - *usage : 0;
}

std::optional<long long> own_cgroup_oom_kills() {
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line;
  while (std::getline(cgroups, line)) {
    // "N:controllers:/path": v1 names the memory controller, v2 has an empty list.
    auto first = line.find(':');
    auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controllers == "memory")
      if (auto value = counter_in("/sys/fs/cgroup/memory" + path + "/memory.oom_control"))
        return value;
    if (controllers.empty())
      if (auto value = counter_in("/sys/fs/cgroup" + path + "/memory.events")) return value;
  }
  return std::nullopt;
}

}  // namespace gl
