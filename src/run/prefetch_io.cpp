// SPDX-License-Identifier: Apache-2.0
#include "run/prefetch_io.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/core.h>

#include "catalog/hub_cache.hpp"
#include "facts/environment.hpp"
#include "facts/model_probe.hpp"
#include "supervise/cgroup.hpp"
#include "util/errno_text.hpp"
#include "util/safe_file.hpp"
#include "util/try.hpp"
#include "util/unique_fd.hpp"

namespace gl {
namespace {
namespace fs = std::filesystem;

// A refs/REVISION file holds one commit hash.
constexpr size_t kRefLimit = 4096;
// mincore's answer is one byte a page: looked at this much of a file at a time.
constexpr uint64_t kResidencyWindow = 1ULL << 30;
constexpr size_t kReadBuffer = 4 << 20;

// `relative` split into names; nullopt when it climbs out (".." past its start) or is absolute.
std::optional<std::vector<std::string>> normalize(std::vector<std::string> base,
                                                  const fs::path& relative) {
  if (relative.is_absolute()) return std::nullopt;
  for (const auto& part : relative) {
    const std::string name = part.string();
    if (name.empty() || name == ".") continue;
    if (name == "..") {
      if (base.empty()) return std::nullopt;
      base.pop_back();
      continue;
    }
    base.push_back(name);
  }
  return base;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : "/") + name;
  return text;
}

// Opens `names` below `root_fd` one name at a time, never following a link: directories with
// O_DIRECTORY, the last one as a regular file unless `directory`.
Result<UniqueFd> open_below(int root_fd, const std::vector<std::string>& names, bool directory,
                            const std::string& shown) {
  UniqueFd current(::fcntl(root_fd, F_DUPFD_CLOEXEC, 0));
  if (current.get() < 0) return failf("Failed to open '{}': {}", shown, errno_text(errno));
  for (size_t i = 0; i < names.size(); ++i) {
    const bool last = i + 1 == names.size();
    const int flags =
        O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (last && !directory ? O_NONBLOCK : O_DIRECTORY);
    UniqueFd next(::openat(current.get(), names[i].c_str(), flags));
    if (next.get() < 0)
      return failf(
          "Failed to open '{}': {}", shown,
          errno == ELOOP ? std::string("a link on the way is not followed") : errno_text(errno));
    current = std::move(next);
  }
  if (!directory) {
    struct stat status {};
    if (::fstat(current.get(), &status) != 0)
      return failf("Failed to stat '{}': {}", shown, errno_text(errno));
    if (!S_ISREG(status.st_mode)) return failf("'{}' is not a regular file", shown);
  }
  return current;
}

// Keeps one descriptor (the model's root) whatever the file count: each file is opened again,
// the same way, for each piece read and checked to be the file that was listed (device and
// inode), so 200k shards never hit RLIMIT_NOFILE.
class RealPrefetchIo final : public PrefetchIo {
 public:
  struct Listed {
    std::vector<std::string> names;  // below root
    dev_t device = 0;
    ino_t inode = 0;
  };
  UniqueFd root;
  dev_t root_device = 0;
  std::vector<WeightFile> listed;
  std::vector<Listed> where;
  std::vector<std::string> left;

  Result<void> set_root(int root_fd) {
    root = UniqueFd(::fcntl(root_fd, F_DUPFD_CLOEXEC, 0));
    struct stat status {};
    if (root.get() < 0 || ::fstat(root.get(), &status) != 0)
      return failf("Failed to open the model's directory: {}", errno_text(errno));
    root_device = status.st_dev;
    return {};
  }

  Result<UniqueFd> reopen(size_t file) const {
    const auto& shown = listed[file].shown;
    GL_TRY(auto fd, open_below(root.get(), where[file].names, false, shown));
    struct stat status {};
    if (::fstat(fd.get(), &status) != 0)
      return failf("Failed to stat '{}': {}", shown, errno_text(errno));
    if (status.st_dev != where[file].device || status.st_ino != where[file].inode)
      return failf("Failed to read '{}': it was replaced since it was listed", shown);
    return fd;
  }

  const std::vector<WeightFile>& files() const override { return listed; }
  const std::vector<std::string>& skipped() const override { return left; }

  Result<uint64_t> resident_bytes(size_t file) override {
    const uint64_t size = listed[file].size;
    if (size == 0) return 0;
    const long page = ::sysconf(_SC_PAGESIZE);
    GL_TRY(auto fd, reopen(file));
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd.get(), 0);
    if (map == MAP_FAILED)
      return failf("Failed to map '{}': {}", listed[file].shown, errno_text(errno));
    uint64_t resident = 0;
    std::vector<unsigned char> pages;
    for (uint64_t offset = 0; offset < size; offset += kResidencyWindow) {
      const uint64_t length = std::min(kResidencyWindow, size - offset);
      pages.assign((length + page - 1) / page, 0);
      if (::mincore(static_cast<char*>(map) + offset, length, pages.data()) != 0) {
        const int error = errno;
        ::munmap(map, size);
        return failf("Failed to read the page cache state of '{}': {}", listed[file].shown,
                     errno_text(error));
      }
      for (size_t i = 0; i < pages.size(); ++i)
        if (pages[i] & 1)
          resident += std::min<uint64_t>(page, length - i * static_cast<uint64_t>(page));
    }
    ::munmap(map, size);
    return resident;
  }

  Result<void> read_range(size_t file, uint64_t offset, uint64_t length) override {
    thread_local std::vector<char> buffer(kReadBuffer);
    GL_TRY(auto fd, reopen(file));
    while (length > 0) {
      const ssize_t got =
          ::pread(fd.get(), buffer.data(), std::min<uint64_t>(length, buffer.size()), offset);
      if (got < 0) {
        if (errno == EINTR) continue;
        return failf("Failed to read '{}': {}", listed[file].shown, errno_text(errno));
      }
      if (got == 0)
        return failf("Failed to read '{}': it is shorter than when it was opened",
                     listed[file].shown);
      offset += static_cast<uint64_t>(got);
      length -= static_cast<uint64_t>(got);
    }
    return {};
  }

  std::optional<uint64_t> memory_available() override {
    std::optional<uint64_t> available;
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    uint64_t kib = 0;
    std::string unit;
    while (!available && meminfo >> key >> kib) {
      std::getline(meminfo, unit);
      if (key == "MemAvailable:") available = kib * 1024;
    }
    // In the unit (MemoryMax=), its cgroup's room is the tighter bound.
    if (auto room = own_cgroup_memory_room())
      available = available ? std::min<uint64_t>(*available, *room) : *room;
    return available;
  }

  // Lists the file `names` names below the root (set_root): opened once to check it, then
  // closed. A file on another filesystem than the model's directory (a FUSE or network mount
  // inside it, which could block root's reads forever) is left with a line.
  Result<void> add(const std::vector<std::string>& names, const std::string& shown) {
    GL_TRY(auto fd, open_below(root.get(), names, false, shown));
    struct stat status {};
    if (::fstat(fd.get(), &status) != 0)
      return failf("Failed to stat '{}': {}", shown, errno_text(errno));
    if (status.st_dev != root_device)
      return failf("'{}' is on another filesystem than the model's directory: not read", shown);
    listed.push_back({shown, static_cast<uint64_t>(status.st_size)});
    where.push_back({names, status.st_dev, status.st_ino});
    return {};
  }
};

// The names in `directory_fd`, sorted (the order shards are numbered in).
Result<std::vector<std::string>> list_names(int directory_fd, const std::string& shown) {
  const int copy = ::fcntl(directory_fd, F_DUPFD_CLOEXEC, 0);
  DIR* dir = copy < 0 ? nullptr : ::fdopendir(copy);
  if (!dir) {
    const int error = errno;
    if (copy >= 0) ::close(copy);
    return failf("Failed to list '{}': {}", shown, errno_text(error));
  }
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

// The weight files of the directory `directory` (names below `root_fd`). A link is followed
// only as far as its text says and only while that stays below the root.
Result<std::unique_ptr<PrefetchIo>> weights_in(int root_fd,
                                               const std::vector<std::string>& directory,
                                               const std::string& shown) {
  GL_TRY(auto dir_fd, open_below(root_fd, directory, true, shown));
  GL_TRY(auto names, list_names(dir_fd.get(), shown));
  auto io = std::make_unique<RealPrefetchIo>();
  GL_TRY_VOID(io->set_root(root_fd));
  for (const auto& name : names) {
    if (!is_weight_file(name)) continue;
    const std::string file_shown = shown + "/" + name;
    struct stat status {};
    if (::fstatat(dir_fd.get(), name.c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0) continue;
    std::vector<std::string> target = directory;
    target.push_back(name);
    if (S_ISLNK(status.st_mode)) {
      std::string text(4096, '\0');
      const ssize_t length = ::readlinkat(dir_fd.get(), name.c_str(), text.data(), text.size());
      if (length < 0 || static_cast<size_t>(length) >= text.size()) {
        io->left.push_back(fmt::format("Failed to read the link '{}'", file_shown));
        continue;
      }
      text.resize(static_cast<size_t>(length));
      auto resolved = normalize(directory, text);
      if (!resolved) {
        io->left.push_back(fmt::format("'{}' links out of the model's directory ('{}'): not read",
                                       file_shown, text));
        continue;
      }
      target = *resolved;
    } else if (!S_ISREG(status.st_mode)) {
      continue;
    }
    if (auto added = io->add(target, file_shown); !added) io->left.push_back(added.error().message);
  }
  if (io->listed.empty() && io->left.empty())
    return failf("'{}' holds no weight files (*.safetensors, *.bin, *.gguf)", shown);
  return std::unique_ptr<PrefetchIo>(std::move(io));
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
    text.pop_back();
  return text;
}

Result<std::unique_ptr<PrefetchIo>> hub_weights(
    const std::string& repo_id, const std::optional<std::string>& revision,
    const std::vector<std::pair<std::string, std::string>>& environment) {
  const std::string wanted = revision.value_or("main");
  auto hub = hub_cache_directory(environment);
  if (!hub)
    return failf("Model '{}' is a hub id, and the unit's environment names no hub cache (HF_HOME)",
                 repo_id);
  const fs::path repo = fs::path(*hub) / hub_repo_folder(repo_id);
  const std::string download = fmt::format(
      "Model '{}' is not downloaded yet: '{}' has no snapshot of revision '{}'. Download it "
      "first as the service user: HF_HUB_CACHE='{}' hf download {} --revision {}",
      repo_id, repo.string(), wanted, *hub, repo_id, wanted);
  auto repo_fd = open_directory_nofollow(repo);
  if (!repo_fd) return fail(download);
  // refs/REVISION names the commit a branch or tag was downloaded at; a commit hash is its own
  // snapshot.
  std::string commit = wanted;
  auto ref_names = normalize({"refs"}, wanted);
  if (!ref_names) return fail(download);
  if (auto ref = open_below(repo_fd->get(), *ref_names, false, wanted)) {
    std::string text(kRefLimit, '\0');
    const ssize_t got = ::read(ref->get(), text.data(), text.size());
    if (got > 0) commit = trimmed(text.substr(0, static_cast<size_t>(got)));
  }
  auto snapshot = normalize({"snapshots"}, commit);
  if (!snapshot || snapshot->size() != 2) return fail(download);
  if (!open_below(repo_fd->get(), *snapshot, true, commit)) return fail(download);
  return weights_in(repo_fd->get(), *snapshot, (repo / joined(*snapshot)).string());
}

}  // namespace

Result<std::unique_ptr<PrefetchIo>> open_model_weights(
    const std::string& model_path, const std::optional<std::string>& revision,
    const std::vector<std::pair<std::string, std::string>>& environment) {
  if (model_path.empty() || model_path.front() != '/')
    return hub_weights(model_path, revision, environment);
  // The profile's own path may go through links the operator made (/models -> /data/models);
  // nothing below it is followed except as weights_in allows.
  std::error_code error;
  const fs::path where = fs::canonical(model_path, error);
  if (error)
    return failf(
        "Model '{}' is not local yet: {}. Download it there first (hf download ... "
        "--local-dir '{}')",
        model_path, error.message(), model_path);
  const auto status = fs::status(where, error);
  if (fs::is_regular_file(status)) {
    GL_TRY(auto parent, open_directory_nofollow(where.parent_path()));
    auto io = std::make_unique<RealPrefetchIo>();
    GL_TRY_VOID(io->set_root(parent.get()));
    GL_TRY_VOID(io->add({where.filename().string()}, model_path));
    return std::unique_ptr<PrefetchIo>(std::move(io));
  }
  // A directory inside a hub cache (.../models--ORG--NAME/snapshots/COMMIT) links into the
  // repo folder's blobs/: that folder is the model's then.
  const fs::path parent = where.parent_path();
  if (parent.filename() == "snapshots" &&
      parent.parent_path().filename().string().starts_with("models--")) {
    GL_TRY(auto repo_fd, open_directory_nofollow(parent.parent_path()));
    return weights_in(repo_fd.get(), {"snapshots", where.filename().string()}, model_path);
  }
  GL_TRY(auto directory, open_directory_nofollow(where));
  return weights_in(directory.get(), {}, model_path);
}

}  // namespace gl
