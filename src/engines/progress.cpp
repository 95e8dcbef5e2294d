// SPDX-License-Identifier: Apache-2.0
#include "engines/progress.hpp"

#include <cctype>

namespace gl {
namespace {

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
    case Phase::process:
      return "starting";
    case Phase::weights:
      return "loading weights";
    case Phase::cuda_graphs:
      return "capturing CUDA graphs";
    case Phase::jit_compile:
      return "compiling kernels";
    case Phase::torch_compile:
      return "torch.compile";
    case Phase::health:
      return "waiting for health";
    case Phase::serving:
      return "serving";
  }
  return "unknown";
}

// Every engine's markers: the bridge reads output without caring which engine printed it.
std::optional<ProgressUpdate> parse_progress_line(std::string_view line) {
  for (const EngineRow& row : engine_rows())
    for (const ProgressMarker& marker : row.progress) {
      if (line.find(marker.text) == std::string_view::npos) continue;
      ProgressUpdate update{marker.phase, std::nullopt, marker.edge == ProgressMarker::Edge::ends};
      if (marker.percent == ProgressMarker::Percent::complete)
        update.percent = 100;
      else if (marker.percent == ProgressMarker::Percent::in_line)
        update.percent = percent_in(line);
      return update;
    }
  return std::nullopt;
}

}  // namespace gl
