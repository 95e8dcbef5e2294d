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

Result<int> run_transient(SystemdManager& manager, const TransientService& service) {
  auto job = manager.start_transient(service);
  if (!job) return std::unexpected(job.error());
  bool seen_loaded = false;
  for (;;) {
    GL_TRY_VOID(manager.wait(std::chrono::seconds(1)));
    const auto result = manager.job_result(*job);
    if (!result) continue;  // the start job still runs: the unit is not up yet
    auto status = manager.status(service.unit);
    if (!status) return std::unexpected(status.error());
    if (status->load_state != "loaded") {
      if (seen_loaded || *result != "done")
        return failf("Transient unit '{}' ended, but its exit status is gone ({})", service.unit,
                     *result);
      continue;
    }
    seen_loaded = true;
    if (status->active_state != "inactive" && status->active_state != "failed") continue;
    switch (status->exec_main_code) {
      case kExited:
        return status->exec_main_status;
      case kKilled:
      case kDumped:
        return 128 + status->exec_main_status;
      default:
        return failf("Transient unit '{}' did not run the command: its start job {}", service.unit,
                     *result == "done" ? "ended without it" : *result);
    }
  }
}

}  // namespace gl
