// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fingerprint of a profile on a node, from the node's facts (src/facts/).

#include "caches/fingerprint.hpp"
#include "facts/facts.hpp"
#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"

namespace gl {

// The toolkit is the one the JIT libraries pick in the unit's environment (rules/jit_toolkit, as
// `check` and the lock judge it); the GPU architectures are those of the GPUs the engine gets.
// Unknown facts stay "" (and learning one later counts as a change).
FingerprintInputs fingerprint_inputs(const Profile& profile, const LaunchPlan& plan,
                                     const Facts& facts);

}  // namespace gl
