// SPDX-License-Identifier: Apache-2.0
#include "plan/sandbox_plan.hpp"

#include <algorithm>

namespace gl {
namespace {

bool holds(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

std::vector<const SandboxAllowance*> sandbox_plan(const Profile& profile, const SandboxNode& node,
                                                  const std::vector<std::string>& engine_argv) {
  std::vector<const SandboxAllowance*> rows;
  for (const auto& allowance : sandbox_allowances()) {
    bool in = holds(profile.service.allow, allowance.name);
    switch (allowance.when) {
      case AllowanceWhen::always:
        in = true;
        break;
      case AllowanceWhen::node_has_device:
        in = in || holds(node.devices, allowance.name);
        break;
      case AllowanceWhen::mps_daemon:
        in = in || node.mps_daemon;
        break;
      case AllowanceWhen::engine_flag:
        in = in || holds(engine_argv, allowance.engine_flag);
        break;
      case AllowanceWhen::profile_allows:
        break;
    }
    if (in) rows.push_back(&allowance);
  }
  return rows;
}

}  // namespace gl
