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

// What the calling process's own memory cgroup still lets it use: memory.max less
// memory.current (v2), memory.limit_in_bytes less memory.usage_in_bytes (v1); nullopt when
// unlimited or unreadable. The page cache a process reads is charged to its cgroup, so a unit's
// MemoryMax= bounds what a prefetch in `run` can keep.
std::optional<unsigned long long> own_cgroup_memory_room();

}  // namespace gl
