#include "engines/progress.hpp"

#include <array>
#include <cctype>
#include <utility>

namespace gl {
namespace {

// Substrings SGLang, vLLM and TensorRT-LLM print while starting, and the phase each begins.
constexpr std::array<std::pair<std::string_view, Phase>, 12> kMarkers{{
    {"Load weight begin", Phase::loading_weights},
    {"Loading weights", Phase::loading_weights},
    {"checkpoint shards", Phase::loading_weights},
    {"Starting to load model", Phase::loading_weights},
    {"Load weight end", Phase::loading_weights},
    {"Capture cuda graph begin", Phase::capturing_graphs},
    {"Capturing CUDA graph", Phase::capturing_graphs},
    {"Capturing CUDA graphs", Phase::capturing_graphs},
    {"Compiling a graph", Phase::compiling},
    {"torch.compile", Phase::compiling},
    {"fired up and ready to roll", Phase::waiting_for_health},
    {"Application startup complete", Phase::waiting_for_health},
}};

// "... 45% Completed ..." (tqdm as the engines configure it): the number before the first '%'.
std::optional<int> percent_in(std::string_view line) {
  auto sign = line.find('%');
  if (sign == std::string_view::npos || sign == 0) return std::nullopt;
  size_t start = sign;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(line[start - 1]))) --start;
  if (start == sign || sign - start > 3) return std::nullopt;
  int value = 0;
  for (size_t i = start; i < sign; ++i) value = value * 10 + (line[i] - '0');
  return value <= 100 ? std::optional<int>{value} : std::nullopt;
}

}  // namespace

std::string_view phase_name(Phase phase) {
  switch (phase) {
    case Phase::starting:
      return "starting";
    case Phase::loading_weights:
      return "loading weights";
    case Phase::capturing_graphs:
      return "capturing CUDA graphs";
    case Phase::compiling:
      return "compiling";
    case Phase::waiting_for_health:
      return "waiting for health";
    case Phase::serving:
      return "serving";
  }
  return "unknown";
}

std::optional<ProgressUpdate> parse_progress_line(std::string_view line) {
  for (const auto& [marker, phase] : kMarkers) {
    if (line.find(marker) == std::string_view::npos) continue;
    ProgressUpdate update{phase, std::nullopt};
    if (marker == "Load weight end")
      update.percent = 100;
    else if (phase == Phase::loading_weights)
      update.percent = percent_in(line);
    return update;
  }
  return std::nullopt;
}

}  // namespace gl
