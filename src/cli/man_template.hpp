// SPDX-License-Identifier: Apache-2.0
#pragma once
// The manual's text files are roff with placeholders: {{NAME.roff}} is another text, expanded in
// turn, and {{name}} a value the code computes (a constant, a table), inserted as it is.

#include <map>
#include <span>
#include <string>
#include <string_view>

#include "cli/embedded_text.hpp"
#include "util/error.hpp"

namespace gl {

using ManValues = std::map<std::string, std::string, std::less<>>;

// Expands the text named `name`. An unknown placeholder, an unclosed "{{" or a text that includes
// itself is an error at "NAME:line:col".
Result<std::string> expand_man_text(std::string_view name, std::span<const EmbeddedText> texts,
                                    const ManValues& values);

}  // namespace gl
