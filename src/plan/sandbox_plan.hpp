// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which of catalog/sandbox_allowances' rows one engine unit carries: every `always` row, the
// node's optional devices and MPS daemon, the engine's memory locking, and what the profile's
// service.allow names.

#include <string>
#include <vector>

#include "catalog/sandbox_allowances.hpp"
#include "profile/profile.hpp"

namespace gl {

// The rows in table order.
std::vector<const SandboxAllowance*> sandbox_plan(const Profile& profile, const SandboxNode& node,
                                                  const std::vector<std::string>& engine_argv);

}  // namespace gl
