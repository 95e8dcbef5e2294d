#pragma once
// What an engine's start-up output says about its progress, as data per known line.

#include <optional>
#include <string_view>

namespace gl {

enum class Phase {
  starting,
  loading_weights,
  capturing_graphs,
  compiling,
  waiting_for_health,
  serving
};

std::string_view phase_name(Phase phase);

struct ProgressUpdate {
  Phase phase;
  std::optional<int> percent;  // weight loading, where the engine prints one
};

// nullopt for lines that say nothing about progress.
std::optional<ProgressUpdate> parse_progress_line(std::string_view line);

}  // namespace gl
