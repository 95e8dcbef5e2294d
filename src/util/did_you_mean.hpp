// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gl {

// The closest candidate by edit distance, if it is close enough to be a plausible typo.
std::optional<std::string> did_you_mean(std::string_view wrong,
                                        std::span<const std::string> candidates);

// " (did you mean 'x'?)" or "" — ready to append to a message.
std::string did_you_mean_suffix(std::string_view wrong, std::span<const std::string> candidates);

}  // namespace gl
