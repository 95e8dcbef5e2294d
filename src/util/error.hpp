// SPDX-License-Identifier: Apache-2.0
#pragma once
// Expected failures travel as values; the CLI layer prints them once.

#include <expected>
#include <string>
#include <utility>

#include <fmt/core.h>

namespace gl {

struct Error {
  std::string message;  // one line, complete: "path:line:col: what" or "Failed to X 'path': why"
  // The errno of the system call that failed, where one did (fail_errno); 0 otherwise. Callers
  // that tell "missing" from "refused" ask it, never the message's text.
  int errno_value = 0;
};

template <class T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(std::string message) {
  return std::unexpected<Error>(Error{std::move(message)});
}

template <class... Args>
std::unexpected<Error> failf(fmt::format_string<Args...> format, Args&&... args) {
  return fail(fmt::format(format, std::forward<Args>(args)...));
}

// A failed system call's error: the message (which names the errno's text itself) and the errno.
template <class... Args>
std::unexpected<Error> fail_errno(int errno_value, fmt::format_string<Args...> format,
                                  Args&&... args) {
  return std::unexpected<Error>(
      Error{fmt::format(format, std::forward<Args>(args)...), errno_value});
}

// A place in a source file, for "path:line:col: message" errors.
struct Location {
  std::string path;
  unsigned line = 1;
  unsigned column = 1;

  std::string str() const { return fmt::format("{}:{}:{}", path, line, column); }
};

template <class... Args>
std::unexpected<Error> fail_at(const Location& where, fmt::format_string<Args...> format,
                               Args&&... args) {
  return fail(where.str() + ": " + fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace gl
