// SPDX-License-Identifier: Apache-2.0
#include "run/engine_verdict.hpp"

#include <cstring>

#include <fmt/core.h>

#include "supervise/exit_status.hpp"

namespace gl {

EngineVerdict engine_verdict(const EngineEnd& end) {
  if (end.forced_exit) return {*end.forced_exit, end.forced_why};
  if (end.stopping) return {0, "engine stopped"};
  const int status = end.wait_status;
  const int code = exit_status_for_engine(status, end.saw_usage_error);
  if (auto signal = terminating_signal(status))
    return {code, fmt::format("engine was killed by signal {} ({})", *signal, strsignal(*signal))};
  if (code == kExitConfig)
    return {code, "engine rejected its command line (a configuration error, not retried)"};
  if (auto engine_code = exit_code_of(status); engine_code && *engine_code != code)
    return {code, fmt::format("engine exited with status {}, one of gpulaunch's own: counted as "
                              "a crash",
                              *engine_code)};
  return {code, fmt::format("engine exited with status {}", code)};
}

}  // namespace gl
