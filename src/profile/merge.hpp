// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <toml++/toml.h>

namespace gl {

// Folds `overlay` into `base` as systemd drop-ins do: tables merge key by key, anything else
// replaces. Nodes are moved, which keeps their source locations for later errors.
void merge_into(toml::table& base, toml::table&& overlay);

}  // namespace gl
