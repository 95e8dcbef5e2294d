// SPDX-License-Identifier: Apache-2.0
#include "supervise/transient_run.hpp"

#include <chrono>

#include "util/try.hpp"

namespace gl {
namespace {

// waitid(2)'s si_code values, as ExecMainCode= carries them.
constexpr int32_t kExited = 1;  // CLD_EXITED
constexpr int32_t kKilled = 2;  // CLD_KILLED
constexpr int32_t kDumped = 3;  // CLD_DUMPED

}  // namespace

Result<int> run_transient(SystemdManager& manager, const TransientService& service,
                          const std::function<bool()>& interrupted) {
  GL_TRY(auto job, manager.start_transient(service));
  bool stopping = false;
  for (;;) {
    if (!stopping && interrupted && interrupted()) {
      // Stopped whether its start job is done or not: a queued start is cancelled with it.
      GL_TRY_VOID(manager.enqueue("StopUnit", service.unit));
      stopping = true;
    }
    GL_TRY_VOID(manager.wait(std::chrono::milliseconds(200)));
    const auto result = manager.job_result(job);
    if (!result) continue;  // the start job still runs: the unit is not up yet
    GL_TRY(auto status, manager.status(service.unit));
    // CollectMode=inactive removes a unit that ended well at once; a failed one stays.
    if (status.load_state != "loaded") {
      if (*result == "done") return 0;
      return failf("Transient unit '{}' did not run the command: its start job {}", service.unit,
                   *result);
    }
    if (status.active_state != "inactive" && status.active_state != "failed") continue;
    if (status.active_state == "failed") GL_TRY_VOID(manager.reset_failed(service.unit));
    switch (status.exec_main_code) {
      case kExited:
        return status.exec_main_status;
      case kKilled:
      case kDumped:
        return 128 + status.exec_main_status;
      default:
        return failf("Transient unit '{}' did not run the command: its start job {}", service.unit,
                     *result == "done" ? "ended without it" : *result);
    }
  }
}

}  // namespace gl
