// SPDX-License-Identifier: Apache-2.0
#pragma once
// Dotted versions as CUDA, drivers and Python packages print them: "12.8", "13.0.88",
// "0.6.7.post1", "2.9.0+cu130". Only the leading numeric parts count.

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace gl {

struct Version {
  int major = 0;
  int minor = 0;
  int patch = 0;

  auto operator<=>(const Version&) const = default;
  std::string str() const;          // "12.8.0"
  std::string major_minor() const;  // "12.8"
};

// Reads up to three leading dot-separated integers; nullopt when there is not even a major.
std::optional<Version> parse_version(std::string_view text);

// CUDA's integer encoding, as in cuda.h and NVML: 13000 -> 13.0, 12080 -> 12.8.
Version version_from_cuda_int(long long encoded);

}  // namespace gl
