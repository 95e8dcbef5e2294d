#pragma once
// The engine's command line, built from the profile with each engine's full flag names
// (field-facts section 6).

#include <string>
#include <vector>

#include "profile/profile.hpp"

namespace gl {

struct LaunchOptions {
  long long node_rank = 0;
};

std::vector<std::string> engine_argv(const Profile& profile, const LaunchOptions& options = {});

// Per engine; engine_argv dispatches to these.
std::vector<std::string> sglang_argv(const Profile& profile, const LaunchOptions& options);
std::vector<std::string> vllm_argv(const Profile& profile, const LaunchOptions& options);
std::vector<std::string> trtllm_argv(const Profile& profile, const LaunchOptions& options);

// The interpreter or launcher inside the profile's venv, or the one the profile names.
std::string venv_program(const Profile& profile, const std::string& program);

}  // namespace gl
