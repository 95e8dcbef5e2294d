// SPDX-License-Identifier: Apache-2.0
#pragma once
// The OOM kill counter of the calling process's own memory cgroup. On cgroup v1 and hybrid hosts
// systemd cannot tell an OOM kill from any SIGKILL; the counter can. ExecStopPost= runs in the
// unit's cgroup, so `record-exit` reads the unit's counter.

#include <optional>

namespace gl {

// memory.oom_control's `oom_kill N` (v1) or memory.events' `oom_kill N` (v2); nullopt when
// neither is readable.
std::optional<long long> own_cgroup_oom_kills();

}  // namespace gl
