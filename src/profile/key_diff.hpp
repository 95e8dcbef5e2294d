// SPDX-License-Identifier: Apache-2.0
#pragma once
// Two profile texts compared key by key: each parsed with toml++ (profile/toml_parse), flattened
// to dotted keys (`engine.max_requests`, `env."A.B"`), and the keys that were added, removed or
// changed listed with their values as TOML writes them. What `verify` and `diff` show when the
// merged profile's hash differs.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "util/error.hpp"

namespace gl {

enum class KeyChangeKind { added, removed, changed };

std::string_view key_change_name(KeyChangeKind kind);  // "added", "removed", "changed"

struct KeyChange {
  KeyChangeKind kind;
  std::string key;                       // dotted, each part quoted where TOML needs it
  std::optional<std::string> old_value;  // TOML text ("64", "\"fp8\"", "[0, 1]"); none if added
  std::optional<std::string> new_value;  // none if removed
};

// Every leaf of `table` as (dotted key, TOML text), in key order. An array is one leaf.
std::vector<std::pair<std::string, std::string>> flatten_profile_keys(const toml::table& table);

// The keys that differ, sorted by key.
std::vector<KeyChange> diff_profile_keys(const toml::table& old_table,
                                         const toml::table& new_table);

// Both texts parsed as profiles are (size cap, guard, toml++), errors naming `old_origin` or
// `new_origin` with the line and column.
Result<std::vector<KeyChange>> diff_profile_texts(std::string_view old_text,
                                                  const std::string& old_origin,
                                                  std::string_view new_text,
                                                  const std::string& new_origin);

}  // namespace gl
