// SPDX-License-Identifier: Apache-2.0
#include "run/iteration_stats.hpp"

#include <string>

#include <nlohmann/json.hpp>

namespace gl {
namespace {

std::optional<double> iteration_of(const nlohmann::json& entry, std::string_view field) {
  if (entry.is_string()) {
    // The entry as JSON text: parse it once more, no deeper.
    auto inner = nlohmann::json::parse(entry.get<std::string>(), nullptr, false);
    if (inner.is_discarded() || !inner.is_object()) return std::nullopt;
    return iteration_of(inner, field);
  }
  if (!entry.is_object()) return std::nullopt;
  auto found = entry.find(std::string(field));
  if (found == entry.end() || !found->is_number()) return std::nullopt;
  return found->get<double>();
}

}  // namespace

IterationReading read_iteration_stats(std::string_view body, std::string_view field) {
  IterationReading reading;
  auto list = nlohmann::json::parse(body, nullptr, false);
  if (list.is_discarded() || !list.is_array()) return reading;
  reading.parsed = true;
  for (const auto& entry : list)
    if (auto iteration = iteration_of(entry, field))
      if (!reading.last_iteration || *iteration > *reading.last_iteration)
        reading.last_iteration = iteration;
  return reading;
}

}  // namespace gl
