// SPDX-License-Identifier: Apache-2.0
#pragma once
// Rules that span keys or sections, run once every section is read: which engine kinds take
// which keys, how ranks split over nodes and GPUs. They may fill in a default that depends on
// several sections (gpus.count from the layout).

#include "profile/profile.hpp"
#include "profile/value_readers.hpp"
#include "util/error.hpp"

namespace gl {

Result<void> check_cross_rules(const ValueReader& reader, Profile& profile);

}  // namespace gl
