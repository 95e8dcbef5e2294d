// SPDX-License-Identifier: Apache-2.0
#pragma once
// Forwarding a failure to the caller without spelling `return std::unexpected(x.error())`.

#include <expected>
#include <utility>

#include "util/error.hpp"

// GL_TRY(target, expr) evaluates a Result `expr`, returns its
// error from the enclosing function, or assigns its value to `target` (a declaration such as
// `auto x` or an lvalue). GL_TRY_VOID(expr) does the same for a Result<void>. Plain statements,
// no GNU statement expression; GL_TRY expands to several, so it needs braces under an `if`.
#define GL_TRY_CONCAT_INNER(a, b) a##b
#define GL_TRY_CONCAT(a, b) GL_TRY_CONCAT_INNER(a, b)
#define GL_TRY_NAMED(tmp, target, expr)                                  \
  auto tmp = (expr);                                                     \
  if (!tmp) return std::unexpected<::gl::Error>(std::move(tmp).error()); \
  target = std::move(*tmp)
#define GL_TRY(target, expr) GL_TRY_NAMED(GL_TRY_CONCAT(gl_try_, __COUNTER__), target, expr)
#define GL_TRY_VOID(expr)                                                  \
  do {                                                                     \
    if (auto gl_try_void = (expr); !gl_try_void)                           \
      return std::unexpected<::gl::Error>(std::move(gl_try_void).error()); \
  } while (false)
