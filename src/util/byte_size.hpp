// SPDX-License-Identifier: Apache-2.0
#pragma once
// Sizes for people, in one spelling everywhere (`cache`, `warm`, `run`'s prefetch and compile
// progress): "512 B", "300.0 KiB", "1.5 GiB" (binary units, one decimal above bytes).

#include <cstdint>
#include <string>

namespace gl {

std::string format_bytes(std::uint64_t bytes);

}  // namespace gl
