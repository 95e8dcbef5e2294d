// SPDX-License-Identifier: Apache-2.0
#pragma once
// Files other programs read (units, state) are replaced whole or not at all.

#include <sys/types.h>
#include <filesystem>
#include <functional>
#include <string_view>

#include "util/error.hpp"

namespace gl {

// Writes a temporary file beside `path`, fsyncs it, renames it over `path` and fsyncs the
// directory, so a crash leaves either the old content or the new, never a half-written file.
Result<void> write_file_atomically(const std::filesystem::path& path, std::string_view content,
                                   mode_t mode = 0644);
// The same with the content streamed by `write` into the temporary file's descriptor (an archive
// too large to hold in memory): a failed or interrupted write leaves `path` as it was.
Result<void> write_file_atomically_with(const std::filesystem::path& path,
                                        const std::function<Result<void>(int fd)>& write,
                                        mode_t mode = 0644);

// Reads a whole regular file, refusing ones larger than `max_bytes` before reading them and
// anything else (FIFO, device, socket) without blocking or reading it.
Result<std::string> read_file(const std::filesystem::path& path, size_t max_bytes);

}  // namespace gl
