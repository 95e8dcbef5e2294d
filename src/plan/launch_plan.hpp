#pragma once
// What a start of the profile consists of, independent of how it is started: the engine's
// argv, the whole environment it gets, and the directories it owns.

#include <string>
#include <utility>
#include <vector>

#include "engines/engine_argv.hpp"
#include "profile/profile.hpp"

namespace gl {

struct CacheLocation {
  std::string name;       // from the JIT cache table
  std::string directory;  // absolute
  bool keys_itself;
};

struct LaunchPlan {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> environment;  // in a fixed, readable order
  // The engine's HOME and working directory (state_paths::engine_home), owned by service.user;
  // the history root keeps is elsewhere, where the engine cannot write.
  std::string engine_home;
  // The merged profile as `up` installed it, for `run` (which cannot see the caller's
  // ./profiles): /var/lib/gpulaunch/snapshots/NAME.toml
  std::string snapshot_path;
  std::string cache_root;
  std::vector<CacheLocation> caches;
  std::string health_url;  // what `run` and `up` poll
};

inline constexpr std::string_view kSystemPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// What root's helpers (ExecStartPre=+, ExecStopPost=+, peer-failed over ssh, the boot-time check)
// run with instead of the engine's environment: `env -i` and this PATH only.
inline constexpr std::string_view kCleanEnvProgram = "/usr/bin/env";
inline constexpr std::string_view kRootHelperPath = "/usr/sbin:/usr/bin:/sbin:/bin";

LaunchPlan make_launch_plan(const Profile& profile, const LaunchOptions& options = {});

// Where `up` keeps the merged profile of `profile_name` (LaunchPlan::snapshot_path).
std::string snapshot_path_for(const std::string& profile_name);

}  // namespace gl
