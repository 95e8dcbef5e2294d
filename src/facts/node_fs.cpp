// SPDX-License-Identifier: Apache-2.0
#include "facts/node_fs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cerrno>
#include <unordered_map>

#include "util/safe_file.hpp"
#include "util/unique_fd.hpp"

namespace gl {
namespace fs = std::filesystem;

struct NodeFs::Memory {
  std::unordered_map<std::string, std::optional<std::string>> resolved;  // node path -> resolve()
  std::unordered_map<std::string, Link> links;                           // host path -> lstat
  std::unordered_map<std::string, fs::file_status> statuses;             // host path -> stat
  std::unordered_map<std::string, std::vector<std::string>> listings;
  std::unordered_map<std::string, std::optional<std::string>> reads;  // host path, NUL, limit
  // Directories reached from "/" one component at a time, none through a link (as
  // open_directory_nofollow walks), each opened once; an invalid fd: it could not be. At most
  // kMaxDirectories stay open (a PCI bus scan reaches hundreds): past that, reads walk as
  // read_regular_nofollow does.
  static constexpr size_t kMaxDirectories = 128;
  static constexpr int kNotRemembered = -2;
  std::unordered_map<std::string, UniqueFd> directories;

  // The fd of `directory`; -1 when a component is missing or refused, kNotRemembered when it
  // could not be kept open (too many open, or out of descriptors).
  int directory_fd(const fs::path& directory) {
    auto remember = [&](const std::string& path, int fd) {
      if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOMEM)) return kNotRemembered;
      return directories.emplace(path, UniqueFd(fd)).first->second.get();
    };
    std::string reached = "/";
    int current = 0;
    if (auto found = directories.find(reached); found != directories.end())
      current = found->second.get();
    else
      current = remember(reached, ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    for (const auto& part : directory.relative_path()) {
      if (part.empty() || part == ".") continue;
      if (current < 0) return current;
      if (reached.back() != '/') reached += '/';
      reached += part.string();
      if (auto found = directories.find(reached); found != directories.end()) {
        current = found->second.get();
        continue;
      }
      if (directories.size() >= kMaxDirectories) return kNotRemembered;
      current =
          remember(reached, ::openat(current, part.c_str(),
                                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    }
    return current;
  }
};

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

NodeFs NodeFs::remembering() const {
  NodeFs copy(root_);
  copy.memory_ = std::make_shared<Memory>();
  return copy;
}

NodeFs::Link NodeFs::look(const fs::path& on_host) const {
  if (memory_)
    if (auto found = memory_->links.find(on_host.string()); found != memory_->links.end())
      return found->second;
  Link link;
  std::error_code error;
  const auto status = fs::symlink_status(on_host, error);
  link.symlink = fs::is_symlink(status);
  link.walkable = link.symlink || (!error && fs::is_directory(status));
  if (link.symlink)
    if (auto target = fs::read_symlink(on_host, error); !error) link.target = std::move(target);
  if (memory_) memory_->links.emplace(on_host.string(), link);
  return link;
}

fs::file_status NodeFs::status(const fs::path& on_host) const {
  if (memory_)
    if (auto found = memory_->statuses.find(on_host.string()); found != memory_->statuses.end())
      return found->second;
  std::error_code error;
  auto status = fs::status(on_host, error);
  // exists(), is_directory() and is_executable_file() say false on any error.
  if (error) status = fs::file_status(fs::file_type::not_found);
  if (memory_) memory_->statuses.emplace(on_host.string(), status);
  return status;
}

std::optional<std::string> NodeFs::resolve(const std::string& node_path) const {
  if (memory_)
    if (auto found = memory_->resolved.find(node_path); found != memory_->resolved.end())
      return found->second;
  // Walks the path one component at a time so an absolute link target is re-rooted.
  std::vector<std::string> pending;
  for (const auto& part : fs::path(normal_path(node_path)).relative_path()) pending.push_back(part);
  std::reverse(pending.begin(), pending.end());
  fs::path resolved = "/";
  int hops = 0;
  // Below a component that is missing or no directory nothing exists, so nothing is a link:
  // the rest is appended without asking the kernel (until a ".." climbs back out).
  bool below_nothing = false;
  while (!pending.empty()) {
    std::string part = pending.back();
    pending.pop_back();
    if (part == "." || part.empty()) continue;
    if (part == "..") {
      resolved = resolved.parent_path();
      below_nothing = false;
      continue;
    }
    fs::path candidate = resolved / part;
    if (below_nothing) {
      resolved = candidate;
      continue;
    }
    const Link link = look(root_ / candidate.relative_path());
    if (link.symlink) {
      // ELOOP, as the kernel would answer (or a link that cannot be read): never the rest
      // handed on with a link in it, which a call following the host's links would leave by.
      if (++hops > kMaxLinks || !link.target) {
        if (memory_) memory_->resolved.emplace(node_path, std::nullopt);
        return std::nullopt;
      }
      if (link.target->is_absolute()) resolved = "/";
      std::vector<std::string> parts;
      for (const auto& piece : link.target->relative_path()) parts.push_back(piece);
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) pending.push_back(*it);
      continue;
    }
    below_nothing = !link.walkable;
    resolved = candidate;
  }
  std::string answer = normal_path(resolved.string());
  if (memory_) memory_->resolved.emplace(node_path, answer);
  return answer;
}

std::optional<fs::path> NodeFs::host_path(const std::string& node_path) const {
  if (root_ == "/" || root_.empty()) return fs::path(normal_path(node_path));
  auto resolved = resolve(node_path);
  if (!resolved) return std::nullopt;
  return root_ / fs::path(*resolved).relative_path();
}

bool NodeFs::exists(const std::string& node_path) const {
  const auto host = host_path(node_path);
  return host && fs::exists(status(*host));
}

bool NodeFs::is_directory(const std::string& node_path) const {
  const auto host = host_path(node_path);
  return host && fs::is_directory(status(*host));
}

bool NodeFs::is_executable_file(const std::string& node_path) const {
  const auto host = host_path(node_path);
  if (!host) return false;
  auto status = this->status(*host);
  if (!fs::is_regular_file(status)) return false;
  auto permissions = status.permissions();
  return (permissions & (fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec)) !=
         fs::perms::none;
}

std::optional<std::string> NodeFs::read(const std::string& node_path, size_t limit) const {
  return read_file(node_path, limit, false);
}

std::optional<std::string> NodeFs::read_head(const std::string& node_path, size_t bytes) const {
  return read_file(node_path, bytes, true);
}

std::optional<std::string> NodeFs::read_file(const std::string& node_path, size_t limit,
                                             bool head) const {
  // Links are followed inside the root by resolve(); the open itself follows none, so a link
  // swapped in meanwhile is refused, and a FIFO or device is never read (root reads venvs).
  const auto resolved = resolve(node_path);
  if (!resolved) return std::nullopt;
  const fs::path path = root_ / fs::path(*resolved).relative_path();
  const std::string key = path.string() + '\0' + std::to_string(limit) + (head ? "h" : "");
  if (memory_)
    if (auto found = memory_->reads.find(key); found != memory_->reads.end()) return found->second;
  std::optional<std::string> content;
  const fs::path directory = path.parent_path();
  const bool walkable =
      directory.is_absolute() && std::none_of(directory.begin(), directory.end(),
                                              [](const fs::path& part) { return part == ".."; });
  // The same walk and open as read_regular_nofollow, from the directories already opened.
  const int fd = memory_ && walkable ? memory_->directory_fd(directory) : Memory::kNotRemembered;
  const auto read_in = [&](int directory_fd) {
    const std::string name = path.filename().string();
    return head ? read_regular_head_at(directory_fd, name, limit, path.string())
                : read_regular_at(directory_fd, name, limit, path.string());
  };
  if (fd >= 0) {
    if (auto read = read_in(fd); read && *read) content = std::move((*read)->content);
  } else if (fd == Memory::kNotRemembered) {
    if (auto parent = open_directory_nofollow(directory))
      if (auto read = read_in(parent->get()); read && *read) content = std::move((*read)->content);
  }
  if (memory_) memory_->reads.emplace(key, content);
  return content;
}

std::vector<std::string> NodeFs::list(const std::string& node_path) const {
  const auto resolved = host_path(node_path);
  if (!resolved) return {};
  const fs::path& host = *resolved;
  if (memory_)
    if (auto found = memory_->listings.find(host.string()); found != memory_->listings.end())
      return found->second;
  std::vector<std::string> names;
  std::error_code error;
  for (fs::directory_iterator it(host, error), end; !error && it != end; it.increment(error))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  if (memory_) memory_->listings.emplace(host.string(), names);
  return names;
}

std::optional<NodeFs::Device> NodeFs::device(const std::string& node_path) const {
  // The directories above are resolved inside the root; the node itself is never followed.
  const std::string normal = normal_path(node_path);
  const auto parent = host_path(parent_path(normal));
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
