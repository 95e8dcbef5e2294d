#pragma once
// Typed reads of a merged profile's table at a dotted key, with "file:line:col" errors. The
// structure check (schema_check) has already made sure each key holds its schema type.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "util/duration.hpp"
#include "util/error.hpp"

namespace gl {

// Control characters (or, with allow_newline_tab, only NUL) in a value.
bool has_control_or_nul(std::string_view text, bool allow_newline_tab);
bool is_absolute_path(std::string_view text);

class ValueReader {
 public:
  // `fallback`: where a missing key is reported, the profile's own file.
  ValueReader(const toml::table& table, Location fallback);

  const toml::table& table() const { return table_; }
  const toml::node* node_at(std::string_view path) const;
  // Where `path` is, or its section when it is missing, or the profile's file.
  Location where(std::string_view path) const;
  Location location(const toml::node& node) const;
  Location key_location(const toml::key& key, const toml::node& node) const;

  std::optional<std::string> string_at(std::string_view path) const;
  // A string without control characters.
  Result<std::optional<std::string>> text_at(std::string_view path) const;
  // text_at, and absolute when set and not empty.
  Result<std::optional<std::string>> path_at(std::string_view path) const;
  Result<std::optional<long long>> integer_at(std::string_view path, long long low,
                                              long long high) const;
  // Leaves `target` (the default) alone when the key is missing.
  Result<void> integer_into(std::string_view path, long long low, long long high,
                            long long& target) const;
  Result<void> duration_into(std::string_view path, Seconds low, Seconds high,
                             Seconds& target) const;
  std::vector<std::string> strings_at(std::string_view path) const;
  Result<void> no_nul(std::string_view path, const std::vector<std::string>& values) const;

 private:
  const toml::table& table_;
  Location fallback_;
};

}  // namespace gl
