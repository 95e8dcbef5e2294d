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

}  // namespace

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
