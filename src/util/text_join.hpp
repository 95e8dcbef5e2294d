// SPDX-License-Identifier: Apache-2.0
#pragma once
// Items joined into one line of text, through fmt::join ("0,1,2", "a, b or c" built by callers).

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace gl {

template <class Range>
std::string join(const Range& items, std::string_view separator) {
  return fmt::format("{}", fmt::join(items, separator));
}

}  // namespace gl
