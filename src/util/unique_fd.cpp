// SPDX-License-Identifier: Apache-2.0
#include "util/unique_fd.hpp"

#include <unistd.h>

namespace gl {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

int UniqueFd::close() {
  if (fd_ < 0) return 0;
  return ::close(release());
}

}  // namespace gl
