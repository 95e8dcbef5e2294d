// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reads of a merged profile's table at a dotted key, once schema_check has checked every value
// against its type, range and shape: they convert, they do not fail. Locations for the errors
// the section readers and cross rules still give.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "util/duration.hpp"
#include "util/error.hpp"

namespace gl {

bool is_absolute_path(std::string_view text);

// An integer of seconds or a string like "20min"; nullopt when the string is not a duration.
std::optional<Seconds> duration_value(const toml::node& node);
// A memory size as systemd reads it: an integer is bytes.
std::string memory_text(const toml::node& node);

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
  std::optional<long long> integer_at(std::string_view path) const;
  std::optional<double> number_at(std::string_view path) const;
  std::optional<bool> boolean_at(std::string_view path) const;
  std::optional<Seconds> duration_at(std::string_view path) const;
  std::optional<std::string> memory_at(std::string_view path) const;
  std::vector<std::string> strings_at(std::string_view path) const;

 private:
  const toml::table& table_;
  Location fallback_;
};

}  // namespace gl
