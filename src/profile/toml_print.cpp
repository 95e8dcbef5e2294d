// SPDX-License-Identifier: Apache-2.0
#include "profile/toml_print.hpp"

#include <charconv>
#include <cmath>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

#include <fmt/core.h>

namespace gl {
namespace {

// Each float becomes a string holding a marker no profile contains; after printing, the marker
// (with the quotes around it) is replaced by the float's shortest text.
struct FloatSwap {
  std::string marker;
  std::string text;
};

std::string shortest(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string text(buffer, error == std::errc{} ? end : buffer);
  // TOML floats need a fraction or an exponent: 2 -> 2.0.
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

// The marker to put in place of `node` when it is a float; nothing otherwise.
std::optional<std::string> swap_out(const toml::node& node, const std::string& nonce,
                                    std::vector<FloatSwap>& swaps) {
  const auto* value = node.as_floating_point();
  if (!value) return std::nullopt;
  swaps.push_back({fmt::format("{}-{}", nonce, swaps.size()), shortest(value->get())});
  return swaps.back().marker;
}

void swap_floats(toml::node& node, const std::string& nonce, std::vector<FloatSwap>& swaps) {
  if (auto* table = node.as_table()) {
    for (auto&& [key, child] : *table) {
      if (auto marker = swap_out(child, nonce, swaps))
        table->insert_or_assign(key, *marker);
      else
        swap_floats(child, nonce, swaps);
    }
  } else if (auto* array = node.as_array()) {
    for (size_t i = 0; i < array->size(); ++i) {
      if (auto marker = swap_out(*array->get(i), nonce, swaps))
        array->replace(array->cbegin() + static_cast<std::ptrdiff_t>(i), *marker);
      else
        swap_floats(*array->get(i), nonce, swaps);
    }
  }
}

}  // namespace

std::string print_toml(const toml::table& table) {
  toml::table copy = table;
  std::random_device random;
  const std::string nonce = fmt::format("gl-float-{:08x}{:08x}", random(), random());
  std::vector<FloatSwap> swaps;
  swap_floats(copy, nonce, swaps);
  std::ostringstream stream;
  stream << copy;
  std::string text = std::move(stream).str();
  // toml++ quotes a plain string either way ('...' when it can, "..." otherwise).
  for (const auto& swap : swaps) {
    const auto at = text.find(swap.marker);
    if (at == std::string::npos || at == 0) continue;
    text.replace(at - 1, swap.marker.size() + 2, swap.text);
  }
  return text;
}

}  // namespace gl
