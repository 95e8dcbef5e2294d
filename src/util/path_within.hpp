// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whether a normal absolute path is a directory or lies below it, by its text (no file system).

#include <string>
#include <string_view>

namespace gl {

inline bool path_within(std::string_view path, std::string_view directory) {
  return path == directory || (path.size() > directory.size() && path.starts_with(directory) &&
                               path[directory.size()] == '/');
}

}  // namespace gl
