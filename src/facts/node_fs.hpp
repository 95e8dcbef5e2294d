// SPDX-License-Identifier: Apache-2.0
#pragma once
// The node's filesystem as probes see it: every path is the node's own ("/usr/local/cuda"),
// read under a root directory (`--root`, as `systemctl --root`), so node images and test
// fixtures are probed exactly like the live system. Absolute symlinks stay inside the root, and
// a path whose links do not resolve there is refused, never resolved by the host (issue 45).

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gl {

class NodeFs {
 public:
  explicit NodeFs(std::filesystem::path root = "/");

  // The same node, remembering every answer it gets (links, stats, listings, reads and the
  // directories a read opened), so one gather asks the kernel about each path once however many
  // probes look at it: it sees the node as it was at one moment, which is what a gather reports.
  // Copies share what was remembered; a NodeFs that lives longer than one gather must not be one.
  NodeFs remembering() const;

  const std::filesystem::path& root() const { return root_; }
  // Where the node's path lies on this machine, symlinks resolved inside the root. nullopt where
  // they do not resolve (more than kMaxLinks of them, ELOOP, or one unreadable): the rest of the
  // path is never handed to a call that follows the host's links, which would leave the root.
  std::optional<std::filesystem::path> host_path(const std::string& node_path) const;
  // The node's path with symlinks followed, as the node sees it; nullopt as for host_path.
  std::optional<std::string> resolve(const std::string& node_path) const;

  // Links followed in one resolution before it fails, as the kernel's MAXSYMLINKS (ELOOP).
  static constexpr int kMaxLinks = 40;

  // Each of these answers as for a missing path where the path does not resolve (host_path).
  bool exists(const std::string& node_path) const;
  bool is_directory(const std::string& node_path) const;
  bool is_executable_file(const std::string& node_path) const;
  // The whole file; nullopt when missing, unreadable, over `limit` bytes, or not a regular file.
  std::optional<std::string> read(const std::string& node_path, size_t limit = 1 << 20) const;
  // The first `bytes` of the file (all of it when shorter), of any size; nullopt as for read().
  std::optional<std::string> read_head(const std::string& node_path, size_t bytes) const;
  // Entry names, sorted; empty when not a directory.
  std::vector<std::string> list(const std::string& node_path) const;

  // What a device node is, read without following a link at the path itself (lstat).
  struct Device {
    bool character = false;  // S_ISCHR
    unsigned major = 0;
    unsigned minor = 0;
  };
  // nullopt when nothing is there; `character` false for anything but a character device.
  std::optional<Device> device(const std::string& node_path) const;

 private:
  struct Memory;
  std::optional<std::string> read_file(const std::string& node_path, size_t limit, bool head) const;
  // What lstat(2) says of one host path, as resolve() needs it.
  struct Link {
    bool symlink = false;
    bool walkable = false;  // a directory or a link: something below it may exist
    std::optional<std::filesystem::path> target;  // a link's, when it could be read
  };
  Link look(const std::filesystem::path& on_host) const;
  std::filesystem::file_status status(const std::filesystem::path& on_host) const;

  std::filesystem::path root_;
  std::shared_ptr<Memory> memory_;  // null: every call asks the kernel
};

// "/a//b/../c/" -> "/a/c".
std::string normal_path(const std::string& path);
std::string parent_path(const std::string& path);

}  // namespace gl
