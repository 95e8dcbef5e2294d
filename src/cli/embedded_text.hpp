// SPDX-License-Identifier: Apache-2.0
#pragma once
// Text files compiled into the binary at build time (cmake/embed_text.cmake).

#include <span>
#include <string_view>

namespace gl {

struct EmbeddedText {
  std::string_view name;  // the file's name, e.g. "warm.roff"
  std::string_view text;
};

// The manual's pages and sections, src/cli/doc/*.roff.
std::span<const EmbeddedText> man_texts();

}  // namespace gl
