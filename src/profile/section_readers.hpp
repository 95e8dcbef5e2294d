// SPDX-License-Identifier: Apache-2.0
#pragma once
// One reader per profile section: converts the checked values into Profile fields and fills in
// the defaults. Rules that span sections live in cross_rules.

#include "profile/profile.hpp"
#include "profile/value_readers.hpp"
#include "util/error.hpp"

namespace gl {

// Every section in order ([engine] first: later defaults depend on the kind).
Result<void> read_sections(const ValueReader& reader, Profile& profile);

}  // namespace gl
