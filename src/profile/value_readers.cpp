#include "profile/value_readers.hpp"

#include <algorithm>

#include "profile/toml_parse.hpp"
#include "util/try.hpp"

namespace gl {

bool has_control_or_nul(std::string_view text, bool allow_newline_tab) {
  return std::any_of(text.begin(), text.end(), [&](char c) {
    auto u = static_cast<unsigned char>(c);
    if (allow_newline_tab) return u == 0;
    return u < 0x20 || u == 0x7f;
  });
}

bool is_absolute_path(std::string_view text) {
  return !text.empty() && text.front() == '/';
}

ValueReader::ValueReader(const toml::table& table, Location fallback)
    : table_(table), fallback_(std::move(fallback)) {}

const toml::node* ValueReader::node_at(std::string_view path) const {
  return table_.at_path(path).node();
}

Location ValueReader::where(std::string_view path) const {
  if (const toml::node* node = node_at(path)) return location_of(*node, fallback_);
  // A missing key: point at its section if there is one.
  auto dot = path.rfind('.');
  if (dot != std::string_view::npos) return where(path.substr(0, dot));
  return fallback_;
}

Location ValueReader::location(const toml::node& node) const {
  return location_of(node, fallback_);
}

Location ValueReader::key_location(const toml::key& key, const toml::node& node) const {
  const auto& source = key.source();
  if (source.path && source.begin.line != 0)
    return Location{*source.path, source.begin.line, source.begin.column};
  return location_of(node, fallback_);
}

std::optional<std::string> ValueReader::string_at(std::string_view path) const {
  if (const toml::node* node = node_at(path)) return node->value<std::string>();
  return std::nullopt;
}

Result<std::optional<std::string>> ValueReader::text_at(std::string_view path) const {
  auto value = string_at(path);
  if (value && has_control_or_nul(*value, false))
    return fail_at(where(path), "'{}' must not contain control characters", path);
  return value;
}

Result<std::optional<std::string>> ValueReader::path_at(std::string_view path) const {
  auto value = text_at(path);
  if (!value || !*value) return value;
  if (!is_absolute_path(**value))
    return fail_at(where(path), "'{}' must be an absolute path, got '{}'", path, **value);
  return value;
}

Result<std::optional<long long>> ValueReader::integer_at(std::string_view path, long long low,
                                                         long long high) const {
  const toml::node* node = node_at(path);
  if (!node) return std::optional<long long>{};
  long long value = *node->value<int64_t>();
  if (value < low || value > high)
    return fail_at(where(path), "'{}' must be between {} and {}, got {}", path, low, high, value);
  return std::optional<long long>{value};
}

Result<void> ValueReader::integer_into(std::string_view path, long long low, long long high,
                                       long long& target) const {
  GL_TRY(auto value, integer_at(path, low, high));
  if (value) target = *value;
  return {};
}

Result<void> ValueReader::duration_into(std::string_view path, Seconds low, Seconds high,
                                        Seconds& target) const {
  const toml::node* node = node_at(path);
  if (!node) return {};
  std::optional<Seconds> value;
  if (node->is_integer()) {
    value = Seconds{*node->value<int64_t>()};
  } else {
    value = parse_duration(*node->value<std::string>());
    if (!value)
      return fail_at(where(path), "'{}' is not a duration: '{}' (use seconds or \"20min\")", path,
                     *node->value<std::string>());
  }
  if (*value < low || *value > high)
    return fail_at(where(path), "'{}' must be between {} and {}, got {}", path,
                   format_duration(low), format_duration(high), format_duration(*value));
  target = *value;
  return {};
}

std::vector<std::string> ValueReader::strings_at(std::string_view path) const {
  std::vector<std::string> values;
  if (const toml::node* node = node_at(path))
    for (auto&& item : *node->as_array()) values.push_back(*item.value<std::string>());
  return values;
}

Result<void> ValueReader::no_nul(std::string_view path,
                                 const std::vector<std::string>& values) const {
  const toml::node* node = node_at(path);
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].find('\0') != std::string::npos)
      return fail_at(location(*node->as_array()->get(i)),
                     "'{}' element {} contains a NUL byte, which no argv can carry", path, i);
  return {};
}

}  // namespace gl
