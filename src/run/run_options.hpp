// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the bridge does, from what the unit told `run` (plan/run_settings): timings, readiness,
// liveness, the rendezvous. The API key and the supervisor's part of the start are added by the
// caller, which reads them from the process's surroundings.

#include "plan/run_settings.hpp"
#include "run/bridge.hpp"
#include "util/error.hpp"

namespace gl {

// Fails where the settings contradict each other (--ready=generate without a probe).
Result<BridgeOptions> bridge_options(const RunSettings& settings);

}  // namespace gl
