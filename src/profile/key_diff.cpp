// SPDX-License-Identifier: Apache-2.0
#include "profile/key_diff.hpp"

#include <map>

#include <fmt/core.h>

#include "profile/toml_parse.hpp"
#include "profile/toml_print.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

bool bare_key(std::string_view key) {
  if (key.empty()) return false;
  for (const char c : key)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-'))
      return false;
  return true;
}

// A key part as TOML spells it: bare where it can be, else a basic string.
std::string key_part(std::string_view key) {
  if (bare_key(key)) return std::string(key);
  std::string quoted = "\"";
  for (const char c : key) {
    if (c == '"' || c == '\\')
      quoted += fmt::format("\\{}", c);
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      quoted += fmt::format("\\u{:04X}", static_cast<unsigned char>(c));
    else
      quoted += c;
  }
  return quoted + "\"";
}

// One value as TOML text, floats in their shortest form (print_toml's rule).
std::string value_text(const toml::node& node) {
  toml::table holder;
  holder.insert("v", node);
  std::string text = print_toml(holder);
  constexpr std::string_view kPrefix = "v = ";
  if (text.starts_with(kPrefix)) text.erase(0, kPrefix.size());
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

bool holds_tables(const toml::array& array) {
  for (const auto& element : array)
    if (element.is_table() || (element.is_array() && holds_tables(*element.as_array())))
      return true;
  return false;
}

void flatten(const toml::node& node, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out) {
  if (const auto* table = node.as_table()) {
    for (const auto& [key, child] : *table) {
      const std::string part = key_part(key.str());
      flatten(child, prefix.empty() ? part : prefix + "." + part, out);
    }
    return;
  }
  // An array of tables ([[x]]) compares element by element, `x[0].key`; any other array is one
  // value, as its order matters.
  if (const auto* array = node.as_array(); array && holds_tables(*array)) {
    for (size_t i = 0; i < array->size(); ++i)
      flatten(*array->get(i), fmt::format("{}[{}]", prefix, i), out);
    return;
  }
  out.emplace_back(prefix, value_text(node));
}

}  // namespace

std::string_view key_change_name(KeyChangeKind kind) {
  switch (kind) {
    case KeyChangeKind::added:
      return "added";
    case KeyChangeKind::removed:
      return "removed";
    case KeyChangeKind::changed:
      return "changed";
  }
  return "changed";
}

std::vector<std::pair<std::string, std::string>> flatten_profile_keys(const toml::table& table) {
  std::vector<std::pair<std::string, std::string>> out;
  flatten(table, "", out);
  return out;
}

std::vector<KeyChange> diff_profile_keys(const toml::table& old_table,
                                         const toml::table& new_table) {
  const auto old_keys = flatten_profile_keys(old_table);
  const auto new_keys = flatten_profile_keys(new_table);
  const std::map<std::string, std::string> before(old_keys.begin(), old_keys.end());
  const std::map<std::string, std::string> after(new_keys.begin(), new_keys.end());
  std::vector<KeyChange> changes;
  auto old_it = before.begin();
  auto new_it = after.begin();
  while (old_it != before.end() || new_it != after.end()) {
    if (new_it == after.end() || (old_it != before.end() && old_it->first < new_it->first)) {
      changes.push_back({KeyChangeKind::removed, old_it->first, old_it->second, std::nullopt});
      ++old_it;
    } else if (old_it == before.end() || new_it->first < old_it->first) {
      changes.push_back({KeyChangeKind::added, new_it->first, std::nullopt, new_it->second});
      ++new_it;
    } else {
      if (old_it->second != new_it->second)
        changes.push_back({KeyChangeKind::changed, old_it->first, old_it->second, new_it->second});
      ++old_it;
      ++new_it;
    }
  }
  return changes;
}

Result<std::vector<KeyChange>> diff_profile_texts(std::string_view old_text,
                                                  const std::string& old_origin,
                                                  std::string_view new_text,
                                                  const std::string& new_origin) {
  GL_TRY(auto old_table, parse_toml(old_text, old_origin));
  GL_TRY(auto new_table, parse_toml(new_text, new_origin));
  return diff_profile_keys(old_table, new_table);
}

}  // namespace gl
