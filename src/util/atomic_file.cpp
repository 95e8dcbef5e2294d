// SPDX-License-Identifier: Apache-2.0
#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "util/errno_text.hpp"
#include "util/safe_file.hpp"
#include "util/unique_fd.hpp"

namespace gl {
Result<void> write_file_atomically(const std::filesystem::path& path, std::string_view content,
                                   mode_t mode) {
  return write_file_atomically_with(
      path, [&](int fd) { return write_all(fd, content, path.string()); }, mode);
}

Result<void> write_file_atomically_with(const std::filesystem::path& path,
                                        const std::function<Result<void>(int fd)>& write,
                                        mode_t mode) {
  const std::filesystem::path directory = path.has_parent_path() ? path.parent_path() : ".";
  std::string temp_template = (directory / ("." + path.filename().string() + ".XXXXXX")).string();
  UniqueFd fd(::mkstemp(temp_template.data()));
  if (!fd)
    return failf("Failed to create a temporary file in '{}': {}", directory.string(),
                 errno_text(errno));
  const std::string temp = temp_template;
  auto discard = [&](Error error) -> Result<void> {
    fd = UniqueFd();
    ::unlink(temp.c_str());
    return std::unexpected(std::move(error));
  };
  if (::fchmod(fd.get(), mode) != 0)
    return discard({fmt::format("Failed to set mode of '{}': {}", temp, errno_text(errno))});
  if (auto written = write(fd.get()); !written) return discard(written.error());
  if (::fsync(fd.get()) != 0)
    return discard({fmt::format("Failed to sync '{}': {}", temp, errno_text(errno))});
  if (fd.close() != 0) {
    int error = errno;
    ::unlink(temp.c_str());
    return failf("Failed to close '{}': {}", temp, errno_text(error));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::unlink(temp.c_str());
    return failf("Failed to rename '{}' to '{}': {}", temp, path.string(), errno_text(error));
  }
  if (UniqueFd dir_fd(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); dir_fd)
    ::fsync(dir_fd.get());  // best effort: the rename is already visible
  return {};
}

Result<std::string> read_file(const std::filesystem::path& path, size_t max_bytes) {
  // O_NONBLOCK: a FIFO nobody writes opens at once (and is refused below) instead of blocking.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return failf("Failed to open '{}': {}", path.string(), errno_text(errno));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0)
    return failf("Failed to stat '{}': {}", path.string(), errno_text(errno));
  if (S_ISDIR(info.st_mode)) return failf("Failed to read '{}': is a directory", path.string());
  // A FIFO, socket or device (/dev/zero) has no size to bound.
  if (!S_ISREG(info.st_mode))
    return failf("Refusing to read '{}': not a regular file", path.string());
  if (static_cast<size_t>(info.st_size) > max_bytes)
    return failf("{}:1:1: file is {} bytes, over the limit of {} bytes", path.string(),
                 info.st_size, max_bytes);
  std::string content;
  char buffer[65536];
  for (;;) {
    // At most one byte past the limit: enough to tell that the file grew over it.
    ssize_t got = ::read(fd.get(), buffer, std::min(sizeof buffer, max_bytes + 1 - content.size()));
    if (got < 0) {
      if (errno == EINTR) continue;
      int error = errno;
      return failf("Failed to read '{}': {}", path.string(), errno_text(error));
    }
    if (got == 0) break;
    content.append(buffer, static_cast<size_t>(got));
    if (content.size() > max_bytes) {  // the file grew while we read it
      return failf("{}:1:1: file is over the limit of {} bytes", path.string(), max_bytes);
    }
  }
  return content;
}

}  // namespace gl
