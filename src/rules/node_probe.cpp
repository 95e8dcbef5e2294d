// SPDX-License-Identifier: Apache-2.0
#include "rules/node_probe.hpp"

#include "facts/gather.hpp"
#include "rules/check.hpp"

namespace gl {

Facts probe_node_for(const Profile& profile, const LaunchPlan& plan,
                     const ShellEnvironment& shell) {
  return gather_facts(NodeFs("/"), facts_request(profile, plan, shell));
}

Facts probe_node_for_start(const Profile& profile, const LaunchPlan& plan,
                           const ShellEnvironment& shell) {
  auto request = facts_request(profile, plan, shell);
  request.host = system_host_sources();
  return gather_facts(NodeFs("/"), request);
}

}  // namespace gl
