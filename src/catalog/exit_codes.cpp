// SPDX-License-Identifier: Apache-2.0
#include "catalog/exit_codes.hpp"

namespace gl {
namespace {

struct RunExitCode {
  int code;
  bool prevents_restart;  // a restart would end the same way: systemd must not try
};

// `run`'s own statuses, ascending.
constexpr RunExitCode kRunExitCodes[] = {
    {kExitReadyTimeout, false},  // a slow load may finish next time
    {kExitConfig, true},        {kExitCrashLoop, true},
    {kExitGpuResidue, false},  // the other processes may have gone by the next start
    {kExitStalled, false},     // a wedge is usually transient (a kernel hang, a lost peer)
};

}  // namespace

bool is_setup_failure(int status) {
  return status >= kFirstSetupFailure && status <= kLastSetupFailure;
}

bool is_verdict_status(int status) {
  for (const auto& code : kRunExitCodes)
    if (code.code == status) return true;
  return is_setup_failure(status);
}

bool prevents_restart(int status) {
  for (const auto& code : kRunExitCodes)
    if (code.code == status) return code.prevents_restart;
  return is_setup_failure(status);
}

std::vector<int> run_restart_prevent_statuses() {
  std::vector<int> statuses;
  for (const auto& code : kRunExitCodes)
    if (code.prevents_restart) statuses.push_back(code.code);
  return statuses;
}

std::vector<int> setup_failure_statuses() {
  std::vector<int> statuses;
  for (int status = kFirstSetupFailure; status <= kLastSetupFailure; ++status)
    statuses.push_back(status);
  return statuses;
}

}  // namespace gl
