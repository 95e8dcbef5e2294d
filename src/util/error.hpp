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
