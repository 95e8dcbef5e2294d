// SPDX-License-Identifier: Apache-2.0
#pragma once
// What an engine's start-up output says about its progress: the lines each engine's row in
// catalog/engines lists.

#include <optional>
#include <string_view>

#include "catalog/engines.hpp"

namespace gl {

std::string_view phase_name(Phase phase);

struct ProgressUpdate {
  Phase phase;
  std::optional<int> percent;  // weight loading, where the engine prints one
  bool ends = false;           // the line says the phase is over
};

// nullopt for lines that say nothing about progress.
std::optional<ProgressUpdate> parse_progress_line(std::string_view line);

}  // namespace gl
