// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every key a profile may hold, as one table of data: validation, did-you-mean and the
// gpulaunch.toml(5) page all read it.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "profile/shapes.hpp"

namespace gl {

enum class KeyType {
  table,       // a section
  free_table,  // a section whose keys are the user's (env)
  string,
  integer,
  number,  // float or integer
  boolean,
  string_array,
  device_array,  // integers or strings
  duration,      // integer seconds or "20min"
  memory,        // "900G", "80%", "infinity"
};

// The values a number may take: integers, numbers, durations in seconds, device indices.
struct Range {
  double low;
  double high;
  bool above_low = false;  // low itself is out (mem_fraction > 0)
};

struct KeySpec {
  std::string_view path;  // dotted: "parallelism.tp"
  KeyType type;
  // Longest string in bytes: the value, each element of an array, each value of a free table.
  size_t max_length = 0;
  // What a string, each string of an array, or a memory size must look like.
  Shape shape = Shape::text;
  std::optional<Range> range;
  // A valid value other than the default, as TOML: the schema test sets each key to it and
  // expects a different Profile. Empty for sections.
  std::string_view sample;
  std::string_view help;
};

std::span<const KeySpec> profile_schema();
const KeySpec* find_key(std::string_view path);

// The keys directly under `parent` ("" for the top level), for did-you-mean.
std::vector<std::string> child_keys(std::string_view parent);

std::string_view key_type_name(KeyType type);

}  // namespace gl
