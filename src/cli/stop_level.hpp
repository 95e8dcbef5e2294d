// SPDX-License-Identifier: Apache-2.0
#pragma once
// How loud record-exit's line for a classified stop is, under systemd (supervise_command) and
// under `run --foreground` (run_foreground) alike.

#include "log/logger.hpp"
#include "supervise/exit_class.hpp"

namespace gl {

// A failure the restart policy retries is a warning, a stop that stays down (configuration,
// set-up, spent budget) an error, a clean one news.
inline logging::Level stop_level(ExitClass value) {
  if (value == ExitClass::clean) return logging::Level::info;
  return is_terminal(value) || !counts_as_failure(value) ? logging::Level::error
                                                         : logging::Level::warning;
}

}  // namespace gl
