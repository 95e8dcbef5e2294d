// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace gl {

// A unified diff of an installed unit against the new one, as diff(1) prints it.
std::string unit_diff(const std::string& installed, const std::string& updated,
                      const std::string& label);

}  // namespace gl
