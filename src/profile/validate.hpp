// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "profile/loader.hpp"
#include "profile/profile.hpp"
#include "util/error.hpp"

namespace gl {

// Checks every key against the schema and every value against its range and the others, and
// builds the Profile. The first problem comes back as "file:line:col: message".
Result<Profile> validate_profile(const MergedProfile& merged);

// load_merged + validate_profile.
Result<Profile> load_profile(const ProfileSource& source, std::string_view name_or_path);

}  // namespace gl
