// SPDX-License-Identifier: Apache-2.0
#include "profile/value_readers.hpp"

#include "profile/toml_parse.hpp"

namespace gl {

bool is_absolute_path(std::string_view text) {
  return !text.empty() && text.front() == '/';
}

std::optional<Seconds> duration_value(const toml::node& node) {
  if (node.is_integer()) return Seconds{*node.value<int64_t>()};
  if (auto text = node.value<std::string>()) return parse_duration(*text);
  return std::nullopt;
}

std::string memory_text(const toml::node& node) {
  if (node.is_integer()) return std::to_string(*node.value<int64_t>());
  return node.value<std::string>().value_or("");
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

std::optional<long long> ValueReader::integer_at(std::string_view path) const {
  if (const toml::node* node = node_at(path)) return node->value<int64_t>();
  return std::nullopt;
}

std::optional<double> ValueReader::number_at(std::string_view path) const {
  if (const toml::node* node = node_at(path)) return node->value<double>();
  return std::nullopt;
}

std::optional<bool> ValueReader::boolean_at(std::string_view path) const {
  if (const toml::node* node = node_at(path)) return node->value<bool>();
  return std::nullopt;
}

std::optional<Seconds> ValueReader::duration_at(std::string_view path) const {
  if (const toml::node* node = node_at(path)) return duration_value(*node);
  return std::nullopt;
}

std::optional<std::string> ValueReader::memory_at(std::string_view path) const {
  if (const toml::node* node = node_at(path)) return memory_text(*node);
  return std::nullopt;
}

std::vector<std::string> ValueReader::strings_at(std::string_view path) const {
  std::vector<std::string> values;
  if (const toml::node* node = node_at(path))
    for (auto&& item : *node->as_array()) {
      // gpus.devices may hold indices: as text, "0".
      if (item.is_integer())
        values.push_back(std::to_string(*item.value<int64_t>()));
      else
        values.push_back(*item.value<std::string>());
    }
  return values;
}

}  // namespace gl
