// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a start of the profile consists of, independent of how it is started: the engine's
// argv, the whole environment it gets, and the directories it owns.

#include <optional>
#include <string>
#include <string_view>
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
  long long node_rank = 0;  // of a multi-node profile: the argv is this rank's
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
  std::string health_url;         // what `run` and `up` poll
  std::vector<std::string> gpus;  // assigned_gpus(): indices or UUIDs, as CUDA_VISIBLE_DEVICES
  // A headless rank's: `run` waits for its engine to hold a connection there instead of health.
  std::optional<Rendezvous> rendezvous;
};

// `run`'s options for a headless rank (the unit passes them, `status` reads them back):
// --rendezvous=HOST:PORT, --rendezvous-any-port when any port on HOST counts.
inline constexpr std::string_view kRunRendezvousOption = "--rendezvous";
inline constexpr std::string_view kRunRendezvousAnyPortOption = "--rendezvous-any-port";

inline constexpr std::string_view kSystemPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// What root's helpers (ExecStartPre=+, ExecStopPost=+, peer-failed over ssh, the boot-time check)
// run with instead of the engine's environment: `env -i` and this PATH only.
inline constexpr std::string_view kCleanEnvProgram = "/usr/bin/env";
inline constexpr std::string_view kRootHelperPath = "/usr/sbin:/usr/bin:/sbin:/bin";

// Built once per command and passed to everything that reads it (the unit, the check, the
// lock, the cache fingerprint).
LaunchPlan make_launch_plan(const Profile& profile, const LaunchOptions& options = {});

}  // namespace gl
