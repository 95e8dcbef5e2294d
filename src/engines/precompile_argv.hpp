// SPDX-License-Identifier: Apache-2.0
#pragma once
// The command line of an engine's precompile step (catalog/precompile): the profile's Python
// with `-m MODULE`, then the flags the service's own command line has, so the step builds the
// kernels for the model, parallelism and kernel choices the service will run with.

#include <optional>
#include <string>
#include <vector>

#include "engines/engine_argv.hpp"
#include "util/error.hpp"

namespace gl {

// Refused, with the reason, where the engine has no step, where the profile runs from an image
// (not started by gpulaunch yet) and for a multi-node group (every rank runs its share of the
// step at once, against rank 0's rendezvous). `timeout_seconds` bounds the step's own wait for
// its server (the row's timeout flag); nullopt leaves the upstream default.
Result<std::vector<std::string>> precompile_argv(const Profile& profile,
                                                 const LaunchOptions& options,
                                                 std::optional<long long> timeout_seconds);

}  // namespace gl
