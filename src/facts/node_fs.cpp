// SPDX-License-Identifier: Apache-2.0
#include "facts/node_fs.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>

#include "util/safe_file.hpp"

namespace gl {
namespace fs = std::filesystem;

std::string normal_path(const std::string& path) {
  if (path.empty()) return path;
  std::string text = fs::path(path).lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

std::string parent_path(const std::string& path) {
  auto normal = normal_path(path);
  auto slash = normal.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : normal.substr(0, slash);
}

NodeFs::NodeFs(fs::path root) : root_(std::move(root)) {}

std::optional<std::string> NodeFs::resolve(const std::string& node_path) const {
  // Walks the path one component at a time so an absolute link target is re-rooted.
  std::vector<std::string> pending;
  for (const auto& part : fs::path(normal_path(node_path)).relative_path()) pending.push_back(part);
  std::reverse(pending.begin(), pending.end());
  fs::path resolved = "/";
  int hops = 0;
  while (!pending.empty()) {
    std::string part = pending.back();
    pending.pop_back();
    if (part == "." || part.empty()) continue;
    if (part == "..") {
      resolved = resolved.parent_path();
      continue;
    }
    fs::path candidate = resolved / part;
    std::error_code error;
    fs::path on_host = root_ / candidate.relative_path();
    if (fs::is_symlink(fs::symlink_status(on_host, error))) {
      // ELOOP, as the kernel would answer: never the rest handed on with a link in it.
      if (++hops > kMaxLinks) return std::nullopt;
      fs::path target = fs::read_symlink(on_host, error);
      if (error) return std::nullopt;
      if (target.is_absolute()) resolved = "/";
      std::vector<std::string> parts;
      for (const auto& piece : target.relative_path()) parts.push_back(piece);
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) pending.push_back(*it);
      continue;
    }
    resolved = candidate;
  }
  return normal_path(resolved.string());
}

std::optional<fs::path> NodeFs::host_path(const std::string& node_path) const {
  if (root_ == "/" || root_.empty()) return fs::path(normal_path(node_path));
  auto resolved = resolve(node_path);
  if (!resolved) return std::nullopt;
  return root_ / fs::path(*resolved).relative_path();
}

bool NodeFs::exists(const std::string& node_path) const {
  std::error_code error;
  auto host = host_path(node_path);
  return host && fs::exists(*host, error);
}

bool NodeFs::is_directory(const std::string& node_path) const {
  std::error_code error;
  auto host = host_path(node_path);
  return host && fs::is_directory(*host, error);
}

bool NodeFs::is_executable_file(const std::string& node_path) const {
  std::error_code error;
  auto host = host_path(node_path);
  if (!host) return false;
  auto status = fs::status(*host, error);
  if (error || !fs::is_regular_file(status)) return false;
  auto permissions = status.permissions();
  return (permissions & (fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec)) !=
         fs::perms::none;
}

std::optional<std::string> NodeFs::read(const std::string& node_path, size_t limit) const {
  // Links are followed inside the root by resolve(); the open itself follows none, so a link
  // swapped in meanwhile is refused, and a FIFO or device is never read (root reads venvs).
  auto resolved = resolve(node_path);
  if (!resolved) return std::nullopt;
  auto read = read_regular_nofollow(root_ / fs::path(*resolved).relative_path(), limit);
  if (!read || !*read) return std::nullopt;
  return std::move((*read)->content);
}

std::vector<std::string> NodeFs::list(const std::string& node_path) const {
  std::vector<std::string> names;
  std::error_code error;
  auto host = host_path(node_path);
  if (!host) return names;
  for (fs::directory_iterator it(*host, error), end; !error && it != end; it.increment(error))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<NodeFs::Device> NodeFs::device(const std::string& node_path) const {
  // The directories above are resolved inside the root; the node itself is never followed.
  const std::string normal = normal_path(node_path);
  auto parent = host_path(parent_path(normal));
  if (!parent) return std::nullopt;
  const fs::path host = *parent / fs::path(normal).filename();
  struct stat status {};
  if (::lstat(host.c_str(), &status) != 0) return std::nullopt;
  Device device;
  device.character = S_ISCHR(status.st_mode);
  device.major = ::major(status.st_rdev);
  device.minor = ::minor(status.st_rdev);
  return device;
}

}  // namespace gl
