// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one owner of a file descriptor: closed on destruction, moved, never copied.

namespace gl {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes now, for callers that must know whether close(2) failed (a write's last error):
  // close(2)'s result, errno set; the descriptor is given up either way.
  int close();

 private:
  int fd_ = -1;
};

}  // namespace gl
