#pragma once
// The facts a profile's check needs, gathered on this node.

#include "facts/environment.hpp"
#include "facts/facts.hpp"
#include "profile/profile.hpp"

namespace gl {

Facts probe_node_for(const Profile& profile, const ShellEnvironment& shell);

}  // namespace gl
