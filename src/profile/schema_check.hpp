// SPDX-License-Identifier: Apache-2.0
#pragma once
// The structure of a merged profile against the key table (schema.hpp): unknown sections and
// keys with a did-you-mean, each value's type, each string's length bound.

#include "profile/value_readers.hpp"
#include "util/error.hpp"

namespace gl {

Result<void> check_against_schema(const ValueReader& reader);

}  // namespace gl
