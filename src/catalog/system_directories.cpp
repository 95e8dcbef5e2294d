// SPDX-License-Identifier: Apache-2.0
#include "catalog/system_directories.hpp"

#include <fmt/core.h>

#include "util/state_paths.hpp"

namespace gl {
namespace {

// Whole trees no cache lives in: the system's programs and configuration, and the state, logs
// and mail of other programs (/var/lib/dpkg is the package database; /var/lib/gpulaunch is
// root's own history and cache records).
constexpr std::string_view kSystemTrees[] = {
    "/bin",         "/boot",    "/dev",     "/etc",      "/lib",      "/lib32",
    "/lib64",       "/libx32",  "/proc",    "/sbin",     "/sys",      "/usr",
    "/var/backups", "/var/lib", "/var/log", "/var/mail", "/var/spool"};

// Directories that hold more than one owner's data: a cache may live below them, never be them.
constexpr std::string_view kSharedDirectories[] = {"/home",
                                                   "/media",
                                                   "/mnt",
                                                   "/opt",
                                                   "/root",
                                                   "/run",
                                                   "/run/user",
                                                   "/srv",
                                                   "/tmp",
                                                   "/var",
                                                   "/var/cache",
                                                   "/var/tmp",
                                                   state_paths::kCacheRoot};

bool is_at_or_under(std::string_view path, std::string_view prefix) {
  return path == prefix ||
         (path.size() > prefix.size() && path.starts_with(prefix) && path[prefix.size()] == '/');
}

std::string_view parent_of(std::string_view path) {
  auto slash = path.rfind('/');
  if (slash == std::string_view::npos) return {};
  return slash == 0 ? std::string_view("/") : path.substr(0, slash);
}

}  // namespace

std::optional<std::string> system_directory_reason(std::string_view path) {
  if (path == "/") return "it is the root directory";
  for (auto tree : kSystemTrees)
    if (is_at_or_under(path, tree)) return fmt::format("it is in the system directory '{}'", tree);
  for (auto directory : kSharedDirectories)
    if (path == directory) return std::string("it is a system directory");
  const auto parent = parent_of(path);
  if (parent == "/home" || parent == "/run/user") return std::string("it is a home directory");
  return std::nullopt;
}

}  // namespace gl
