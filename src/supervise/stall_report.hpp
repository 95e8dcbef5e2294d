// SPDX-License-Identifier: Apache-2.0
#pragma once
// The line `run` prints when the engine stopped making forward progress, just before it asks
// every engine process for its Python thread stacks (SIGABRT under PYTHONFAULTHANDLER) and
// exits with kExitStalled. `record-exit` finds it in the invocation's journal: it says which
// liveness signal fired and what was seen, and its journal cursor is where the dump starts.

#include <optional>
#include <string>
#include <string_view>

#include "util/duration.hpp"

namespace gl {

// Which liveness signal saw the stall.
enum class StallSignal {
  generate,  // the generation probe got no answer within server.liveness_timeout
  metrics,   // requests in flight while the generation token counter did not move
};

std::string_view stall_signal_name(StallSignal signal);
std::optional<StallSignal> parse_stall_signal(std::string_view name);

struct StallReport {
  StallSignal signal = StallSignal::generate;
  Seconds still_for{0};                // how long nothing moved
  std::optional<long long> in_flight;  // requests running, when the engine has metrics
  std::optional<double> tokens;        // the generation token counter's last value
};

// "gpulaunch: stalled: no forward progress for 64s (signal=metrics in_flight=3 tokens=12345);
// dumping every thread's stack, then killing the engine"
std::string stall_line(const StallReport& report);
// The report a stall line carries; nullopt for any other line.
std::optional<StallReport> parse_stall_line(std::string_view line);

}  // namespace gl
