// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the end of an engine means: `run`'s exit status (supervise/exit_status) and the reason
// its last line gives, from how the engine ended and what the bridge itself did to it.

#include <optional>
#include <string>

namespace gl {

struct EngineEnd {
  int wait_status = 0;           // waitpid's
  bool saw_usage_error = false;  // the engine printed its argument parser's usage error
  bool stopping = false;         // a stop signal was forwarded to it
  // The bridge ended it itself (watchdog, ready timeout, stall): the status, and why.
  std::optional<int> forced_exit;
  std::string forced_why;
};

struct EngineVerdict {
  int status;
  std::string why;  // for run_verdict_line
};

EngineVerdict engine_verdict(const EngineEnd& end);

}  // namespace gl
