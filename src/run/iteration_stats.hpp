// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `run` needs from trtllm-serve's /metrics (catalog MetricsFormat::iteration_stats): a JSON
// list of the iteration statistics recorded since the last read, each an object (or, in some
// releases, the object's JSON text) numbering its iteration. Nothing else is interpreted.

#include <optional>
#include <string_view>

namespace gl {

struct IterationReading {
  bool parsed = false;  // the body is a JSON list
  // The highest iteration number in it; nullopt when the list holds none (no iteration ran
  // since the last read: an idle engine, or one that stands still).
  std::optional<double> last_iteration;
};

// `field`: the iteration number's name ("iter").
IterationReading read_iteration_stats(std::string_view body, std::string_view field);

}  // namespace gl
