// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a program root does not trust answered when it had to run (an nvcc with no version file
// beside it), remembered by which file it was: path, device, inode, size, mtime and ctime. A
// warm `check` therefore starts no process. The file is root's (state_paths::probe_cache_file):
// written only by root, through a root-owned directory, and read only when root owns it.

#include <sys/types.h>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gl {

// The file a program is, as far as a later run can tell without reading it. ctime is in the
// key too: a user who rewrites the file can set its mtime back, never its ctime.
struct ProgramIdentity {
  std::string path;  // the node's path, links resolved
  unsigned long long device = 0;
  unsigned long long inode = 0;
  long long size = 0;
  long long mtime_ns = 0;
  long long ctime_ns = 0;

  auto operator<=>(const ProgramIdentity&) const = default;
};

// stat(2) of `host_path` (links followed: the file exec would run); nullopt when missing.
std::optional<ProgramIdentity> identify_program(const std::filesystem::path& host_path,
                                                const std::string& node_path);

// What `nvcc --version` and `nvcc --list-gpu-arch` said.
struct NvccAnswer {
  std::optional<std::string> version;     // "13.0"
  std::optional<std::vector<int>> archs;  // nullopt: it does not know --list-gpu-arch
  std::vector<std::string> problems;
};

class ProbeCache {
 public:
  // `file`: where answers persist across runs; nullopt keeps them for this run only. It is read
  // at the first find() or store(): a check whose toolkits all have version files never opens it.
  explicit ProbeCache(std::optional<std::filesystem::path> file = std::nullopt);

  const NvccAnswer* find(const ProgramIdentity& program) const;
  void store(const ProgramIdentity& program, NvccAnswer answer);
  // Writes the file when something was stored and gpulaunch runs as root; an error leaves the
  // old file, so the next run asks again (the cache only saves time).
  void save() const;

 private:
  void load() const;

  std::optional<std::filesystem::path> file_;
  mutable bool loaded_ = false;
  mutable std::map<ProgramIdentity, NvccAnswer> answers_;
  bool changed_ = false;
};

}  // namespace gl
