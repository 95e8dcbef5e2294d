// SPDX-License-Identifier: Apache-2.0
#pragma once
// An errno's text ("No such file or directory"), as "Failed to X 'path': why" names it.

#include <cstring>
#include <string>

namespace gl {

inline std::string errno_text(int error) {
  return std::strerror(error);
}

}  // namespace gl
