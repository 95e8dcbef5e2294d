// SPDX-License-Identifier: Apache-2.0
#include "facts/node_os.hpp"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

#include <fmt/core.h>

#include "catalog/node_requirements.hpp"

namespace gl {

InfinibandFact probe_infiniband(const NodeFs& node) {
  InfinibandFact fact;
  fact.devices = node.list(std::string(kInfinibandClassDirectory));
  // Each line starts with the module's name and a space.
  if (auto modules = node.read(std::string(kModulesFile), 4 << 20)) {
    fact.modules_read = true;
    for (const auto& module : peer_memory_modules()) {
      const std::string head = std::string(module.module) + " ";
      for (size_t at = 0; at < modules->size();) {
        size_t end = modules->find('\n', at);
        if (end == std::string::npos) end = modules->size();
        if (std::string_view(*modules).substr(at, end - at).starts_with(head)) {
          fact.peer_memory.push_back(fmt::format("{} ({})", module.module, kModulesFile));
          break;
        }
        at = end + 1;
      }
    }
  }
  for (auto file : nccl_peer_memory_files())
    if (node.exists(std::string(file))) fact.peer_memory.push_back(std::string(file));
  return fact;
}

ShmFact probe_shm(const NodeFs& node) {
  ShmFact fact;
  fact.path = std::string(kShmDirectory);
  fact.exists = node.is_directory(fact.path);
  if (!fact.exists) return fact;
  struct statvfs stats {};
  const auto where = node.host_path(fact.path).value_or(std::filesystem::path());
  if (where.empty() || ::statvfs(where.c_str(), &stats) != 0) {
    fact.problem =
        fmt::format("Failed to statvfs '{}': {}", fact.path,
                    where.empty() ? "too many levels of symbolic links" : std::strerror(errno));
    return fact;
  }
  fact.size_bytes = static_cast<unsigned long long>(stats.f_blocks) * stats.f_frsize;
  return fact;
}

}  // namespace gl
