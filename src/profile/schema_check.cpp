// SPDX-License-Identifier: Apache-2.0
#include "profile/schema_check.hpp"

#include <algorithm>
#include <tuple>
#include <vector>

#include "catalog/flashinfer_arch_list.hpp"
#include "profile/schema.hpp"
#include "profile/shapes.hpp"
#include "profile/toml_parse.hpp"
#include "util/did_you_mean.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// Names of env variables, caches and secrets.
constexpr size_t kMaxFreeKeyLength = 255;

// "tp" under [engine] most likely belongs to [parallelism].
std::optional<std::string> key_elsewhere(std::string_view key) {
  for (const auto& spec : profile_schema()) {
    auto dot = spec.path.rfind('.');
    if (dot != std::string_view::npos && spec.path.substr(dot + 1) == key)
      return std::string(spec.path);
  }
  return std::nullopt;
}

// At most this many problems are listed, then "and N more".
constexpr size_t kMaxSchemaErrors = 20;

// A problem and where it is, for the report's order (the file's, not toml++'s sorted keys).
struct Found {
  Location where;
  Error error;
};

class SchemaCheck {
 public:
  explicit SchemaCheck(const ValueReader& reader) : reader_(reader) {}

  // Every problem of every key, in the file's order: an operator fixes them in one edit. A key
  // whose value is wrong is not looked into further.
  void check_table(const toml::table& table, const std::string& parent,
                   std::vector<Found>& found) const {
    for (auto&& [key, node] : table) {
      const std::string path =
          parent.empty() ? std::string(key.str()) : parent + "." + std::string(key.str());
      const KeySpec* spec = find_key(path);
      if (!spec) {
        Location where = reader_.key_location(key, node);
        auto siblings = child_keys(parent);
        std::string hint;
        if (auto close = did_you_mean(key.str(), siblings))
          hint = " (did you mean '" + (parent.empty() ? *close : parent + "." + *close) + "'?)";
        else if (auto elsewhere = key_elsewhere(key.str()))
          hint = " (did you mean '" + *elsewhere + "'?)";
        found.push_back({where, fail_at(where, "unknown key '{}'{}", path, hint).error()});
        continue;
      }
      if (auto checked = check_value(node, *spec); !checked) {
        found.push_back({reader_.location(node), std::move(checked).error()});
        continue;
      }
      if (spec->type == KeyType::table) check_table(*node.as_table(), path, found);
    }
  }

 private:
  Result<void> check_value(const toml::node& node, const KeySpec& spec) const {
    const Location where = reader_.location(node);
    auto wrong = [&]() {
      return fail_at(where, "'{}' must be {}, not {}", spec.path, key_type_name(spec.type),
                     toml_type_name(node));
    };
    switch (spec.type) {
      case KeyType::table:
        return node.is_table() ? Result<void>{} : wrong();
      case KeyType::free_table: {
        if (!node.is_table()) return wrong();
        for (auto&& [key, value] : *node.as_table()) {
          if (key.str().size() > kMaxFreeKeyLength)
            return fail_at(reader_.key_location(key, value),
                           "a key in '{}' is {} bytes long, over the limit of {}", spec.path,
                           key.str().size(), kMaxFreeKeyLength);
          if (!value.is_string() && !value.is_integer() && !value.is_boolean())
            return fail_at(location_of(value, where), "'{}.{}' must be a string, not {}", spec.path,
                           key.str(), toml_type_name(value));
          GL_TRY_VOID(within_length(value, fmt::format("'{}.{}'", spec.path, key.str()),
                                    spec.max_length, where));
        }
        return {};
      }
      case KeyType::string:
        if (!node.is_string()) return wrong();
        GL_TRY_VOID(within_length(node, fmt::format("'{}'", spec.path), spec.max_length, where));
        return check_text(spec, *node.value<std::string>(), where);
      case KeyType::integer:
        if (!node.is_integer()) return wrong();
        return check_integer(spec, *node.value<int64_t>(), where);
      case KeyType::number:
        if (!node.is_number()) return wrong();
        return check_range(spec, *node.value<double>(), where);
      case KeyType::boolean:
        return node.is_boolean() ? Result<void>{} : wrong();
      case KeyType::duration:
        if (!node.is_integer() && !node.is_string()) return wrong();
        GL_TRY_VOID(within_length(node, fmt::format("'{}'", spec.path), spec.max_length, where));
        return check_duration(spec, node, where);
      case KeyType::memory:
        if (!node.is_integer() && !node.is_string()) return wrong();
        GL_TRY_VOID(within_length(node, fmt::format("'{}'", spec.path), spec.max_length, where));
        return check_text(spec, memory_text(node), where);
      case KeyType::string_array:
      case KeyType::device_array: {
        if (!node.is_array()) return wrong();
        size_t index = 0;
        for (auto&& item : *node.as_array()) {
          bool ok = item.is_string() || (spec.type == KeyType::device_array && item.is_integer());
          if (!ok)
            return fail_at(location_of(item, where), "'{}' must be {}, but holds {}", spec.path,
                           key_type_name(spec.type), toml_type_name(item));
          GL_TRY_VOID(within_length(item, fmt::format("'{}' element {}", spec.path, index),
                                    spec.max_length, where));
          GL_TRY_VOID(check_element(spec, item, index, where));
          ++index;
        }
        return {};
      }
    }
    return {};
  }

  // A string against the key's shape: control characters first, so no message prints them.
  static Result<void> check_text(const KeySpec& spec, const std::string& text,
                                 const Location& where) {
    if (spec.shape != Shape::any && has_control_or_nul(text))
      return fail_at(where, "'{}' must not contain control characters", spec.path);
    // FlashInfer's own grammar, with what it or nvcc would do and the value that works.
    if (spec.shape == Shape::arch_list)
      if (auto list = parse_flashinfer_arch_list(text); !list)
        return fail_at(
            where, "'{}' = \"{}\": {}{}", spec.path, text, list.error().message,
            list.error().corrected ? "; write \"" + *list.error().corrected + "\"" : std::string());
    if (!has_shape(spec.shape, text))
      return fail_at(where, "'{}' must {}, got '{}'", spec.path, shape_requirement(spec.shape),
                     text);
    return {};
  }

  // An element is reported at its array, as "entry N".
  static Result<void> check_element(const KeySpec& spec, const toml::node& item, size_t index,
                                    const Location& where) {
    if (item.is_integer()) {
      const long long value = *item.value<int64_t>();
      if (spec.range && (value < spec.range->low || value > spec.range->high))
        return fail_at(where, "'{}' entry {} must be between {} and {}, got {}", spec.path, index,
                       static_cast<long long>(spec.range->low),
                       static_cast<long long>(spec.range->high), value);
      return {};
    }
    const std::string& text = item.as_string()->get();
    if (spec.shape == Shape::any) {
      if (!has_shape(spec.shape, text))
        return fail_at(location_of(item, where),
                       "'{}' element {} contains a NUL byte, which no argv can carry", spec.path,
                       index);
      return {};
    }
    if (has_control_or_nul(text))
      return fail_at(where, "'{}' entry {} must not contain control characters", spec.path, index);
    if (!has_shape(spec.shape, text))
      return fail_at(where, "'{}' entry {} must {}, got '{}'", spec.path, index,
                     shape_requirement(spec.shape), text);
    return {};
  }

  static Result<void> check_integer(const KeySpec& spec, long long value, const Location& where) {
    if (!spec.range) return {};
    const auto low = static_cast<long long>(spec.range->low);
    const auto high = static_cast<long long>(spec.range->high);
    if (value < low || value > high)
      return fail_at(where, "'{}' must be between {} and {}, got {}", spec.path, low, high, value);
    return {};
  }

  static Result<void> check_range(const KeySpec& spec, double value, const Location& where) {
    if (!spec.range) return {};
    const Range& range = *spec.range;
    const bool below = range.above_low ? value <= range.low : value < range.low;
    if (!below && value <= range.high) return {};
    if (range.above_low)
      return fail_at(where, "'{}' must be above {} and at most {}, got {}", spec.path, range.low,
                     range.high, value);
    return fail_at(where, "'{}' must be between {} and {}, got {}", spec.path, range.low,
                   range.high, value);
  }

  static Result<void> check_duration(const KeySpec& spec, const toml::node& node,
                                     const Location& where) {
    auto value = duration_value(node);
    if (!value)
      return fail_at(where, "'{}' is not a duration: '{}' (use seconds or \"20min\")", spec.path,
                     *node.value<std::string>());
    if (!spec.range) return {};
    const Seconds low{static_cast<long long>(spec.range->low)};
    const Seconds high{static_cast<long long>(spec.range->high)};
    if (*value < low || *value > high)
      return fail_at(where, "'{}' must be between {} and {}, got {}", spec.path,
                     format_duration(low), format_duration(high), format_duration(*value));
    return {};
  }

  // Every string gets a bound before anything reads it (see KeySpec::max_length).
  static Result<void> within_length(const toml::node& node, const std::string& what, size_t limit,
                                    const Location& fallback) {
    const auto* text = node.as_string();
    if (!text || text->get().size() <= limit) return {};
    return fail_at(location_of(node, fallback), "{} is {} bytes long, over the limit of {}", what,
                   text->get().size(), limit);
  }

  const ValueReader& reader_;
};

}  // namespace

Result<void> check_against_schema(const ValueReader& reader) {
  std::vector<Found> found;
  SchemaCheck(reader).check_table(reader.table(), "", found);
  if (found.empty()) return {};
  const auto place = [](const Found& problem) {
    return std::tie(problem.where.path, problem.where.line, problem.where.column);
  };
  std::stable_sort(found.begin(), found.end(),
                   [&](const Found& a, const Found& b) { return place(a) < place(b); });
  // One line, as every error is (the journal and scripts read it so): the first problem, then
  // each other one with its own file:line:col.
  Error error = std::move(found.front().error);
  for (size_t i = 1; i < found.size() && i < kMaxSchemaErrors; ++i)
    error.message += "; also " + found[i].error.message;
  if (found.size() > kMaxSchemaErrors)
    error.message += fmt::format("; and {} more", found.size() - kMaxSchemaErrors);
  return std::unexpected(std::move(error));
}

}  // namespace gl
