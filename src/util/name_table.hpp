// SPDX-License-Identifier: Apache-2.0
#pragma once
// An enum's names as a constexpr table of (value, name) pairs, looked up both ways: the names
// that reach files, command lines and events.

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace gl {

template <class Enum, std::size_t N>
using NameTable = std::array<std::pair<Enum, std::string_view>, N>;

// The name of `value`, or `fallback` for a value the table lacks.
template <class Enum, std::size_t N>
constexpr std::string_view name_in(const NameTable<Enum, N>& table, Enum value,
                                   std::string_view fallback) {
  for (const auto& [known, name] : table)
    if (known == value) return name;
  return fallback;
}

template <class Enum, std::size_t N>
constexpr std::optional<Enum> value_in(const NameTable<Enum, N>& table, std::string_view name) {
  for (const auto& [known, text] : table)
    if (text == name) return known;
  return std::nullopt;
}

}  // namespace gl
