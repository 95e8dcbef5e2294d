// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <vector>

#include "rules/finding.hpp"

namespace gl {

// ERRORS then WARNINGS, each finding with its rule, the conflicting facts and the fix.
void print_findings(const std::vector<Finding>& findings);

}  // namespace gl
