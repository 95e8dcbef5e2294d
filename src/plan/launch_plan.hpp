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

// A health answer gets this long beyond the engine's own bound (SGLang polls once a second and
// answers after its timeout), and never less than kMinHealthTimeout in all.
inline constexpr Seconds kHealthAnswerMargin{3};
inline constexpr Seconds kMinHealthTimeout{5};
// The watchdog is at least this many health timeouts: `run` probes a serving engine every
// quarter of it (run/readiness), so one probe may take the whole timeout and fail, and the next
// one still feeds the watchdog in time.
inline constexpr int kWatchdogHealthTimeouts = 5;

struct HealthTiming {
  Seconds answer;    // what the engine itself allows one answer (its row, or its variable)
  Seconds timeout;   // run's probe timeout
  Seconds watchdog;  // WatchdogSec; 0 when server.watchdog is 0
};

// From the engine's row (catalog/engines: health_answer, health_answer_variable, read in the
// unit's `environment` as the engine would) and server.watchdog, raised to
// kWatchdogHealthTimeouts x timeout when shorter.
HealthTiming health_timing(const Profile& profile,
                           const std::vector<std::pair<std::string, std::string>>& environment);

// A liveness timeout is at least this many of the engine's metrics refresh (catalog
// MetricsInterface::refresh): the running gauge may lag that long, and a look may fall just before
// the refresh.
inline constexpr int kLivenessRefreshTimes = 2;

// What `run` does to tell a wedged engine from a busy one (server.liveness), decided from the
// profile and the engine's row (catalog/engines' liveness facts) for this rank.
struct LivenessPlan {
  LivenessMode mode = LivenessMode::health;
  Seconds interval{kDefaultLivenessInterval};
  Seconds timeout{kDefaultLivenessTimeout};
  // The generation probe: a path, and a JSON body when it is a POST; empty when neither
  // liveness nor readiness uses it.
  std::string probe_path;
  std::string probe_body;
  // The engine's Prometheus metrics, where `run` reads them: empty path when it does not.
  std::string metrics_path;
  MetricsFormat metrics_format = MetricsFormat::prometheus;
  std::string in_flight_metric;  // empty: the metrics vouch for progress only
  std::string tokens_metric;
  // The options file the engine reads its metrics switch from (MetricsInterface's options file):
  // the flag's value in engine.args where they name one (`check` says what that file must hold),
  // and gpulaunch's own, which `run` writes before each start, otherwise.
  std::string user_options_file;
  ReadyOn ready = ReadyOn::health;
  // The API key the probe and the metrics reads carry (profile/api_key): the [secrets] entry `run`
  // reads from $CREDENTIALS_DIRECTORY, and the variable it sets to the key for the engine (empty:
  // the engine reads the credential's file itself). Empty credential: none sent.
  std::string key_credential;
  std::string key_variable;
  // A rank above 0 whose health server is a stub (catalog LivenessFacts::ranks_stub_health):
  // its liveness is "health" alone, rank 0's watches the group.
  bool rank0_watches = false;

  // Whether a stall can end the engine: then the unit dumps Python stacks on SIGABRT and
  // refuses core dumps.
  bool can_stall() const { return mode == LivenessMode::generate || mode == LivenessMode::metrics; }
};

// How long `run` lets the engine's processes write their stacks after SIGABRT before SIGKILL.
inline constexpr Seconds kStallDumpGrace{5};
// WatchdogSec is at least this many tenths of (liveness_timeout + kStallDumpGrace) where a stall
// can fire: the watchdog was last fed at most a quarter of it before the probe that failed was
// sent, so three quarters of it (1.125 x) still cover the timeout and the dump; otherwise
// systemd's watchdog would kill the engine first, with no stack dump and no stall class.
inline constexpr long long kWatchdogLivenessTenths = 15;

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
  std::string health_url;  // what `run` and `up` poll
  // How long `run` waits for one health answer, and the unit's WatchdogSec (0: none), both
  // sized on the engine's own answer time (health_timing).
  Seconds health_timeout{kMinHealthTimeout};
  Seconds watchdog{0};
  LivenessPlan liveness;
  std::vector<std::string> gpus;  // assigned_gpus(): indices or UUIDs, as CUDA_VISIBLE_DEVICES
  // A headless rank's: `run` waits for its engine to hold a connection there instead of health.
  std::optional<Rendezvous> rendezvous;
  // LaunchOptions::infiniband: the unit allows /dev/infiniband's devices and unlimited memlock
  // (catalog/node_requirements); off, it allows neither.
  bool infiniband = false;
  // LaunchOptions::engine_version: the release the argv's flags were fitted to (engines/'
  // fitted_flag); nullopt: the conservative spellings.
  std::optional<std::string> engine_version;
  // The file `run` writes in the engine's home before each start and the engine's argv names
  // (MetricsInterface::options_file_*): path and text; empty path when none.
  std::string engine_options_path;
  std::string engine_options_text;
  // The sandbox allowances the unit carries (plan/sandbox_plan), in table order.
  std::vector<const SandboxAllowance*> sandbox;
};

// The name the engine serves the model under (what a completion request names as "model").
std::string served_model_name(const Profile& profile, const LaunchPlan& plan);

// `run`'s options for a headless rank (the unit passes them, `status` reads them back):
// --rendezvous=HOST:PORT, --rendezvous-any-port when any port on HOST counts.
inline constexpr std::string_view kRunRendezvousOption = "--rendezvous";
inline constexpr std::string_view kRunRendezvousAnyPortOption = "--rendezvous-any-port";

// `run`'s liveness options (the unit passes them from LivenessPlan; absent: mode health, as
// units rendered before them): --liveness=generate|metrics|health|off, the interval and timeout
// in seconds, the generation probe's path and, for a POST, its JSON body, the metrics path and
// the names of the in-flight gauge and the token counter, and --ready=health|generate.
inline constexpr std::string_view kRunLivenessOption = "--liveness";
inline constexpr std::string_view kRunLivenessIntervalOption = "--liveness-interval";
inline constexpr std::string_view kRunLivenessTimeoutOption = "--liveness-timeout";
inline constexpr std::string_view kRunLivenessProbeOption = "--liveness-probe";
inline constexpr std::string_view kRunLivenessProbeBodyOption = "--liveness-probe-body";
inline constexpr std::string_view kRunLivenessMetricsOption = "--liveness-metrics";
inline constexpr std::string_view kRunLivenessInFlightOption = "--liveness-in-flight";
inline constexpr std::string_view kRunLivenessTokensOption = "--liveness-tokens";
// The metrics' format where it is not Prometheus text (catalog MetricsFormat's names).
inline constexpr std::string_view kRunLivenessMetricsFormatOption = "--liveness-metrics-format";
// The engine's options file `run` writes before it starts the engine (LaunchPlan's
// engine_options_path and engine_options_text).
inline constexpr std::string_view kRunEngineOptionsFileOption = "--engine-options-file";
inline constexpr std::string_view kRunEngineOptionsTextOption = "--engine-options-text";
inline constexpr std::string_view kRunReadyOption = "--ready";
// The API key's credential and the engine's variable for it (LivenessPlan::key_credential).
inline constexpr std::string_view kRunApiKeyCredentialOption = "--api-key-credential";
inline constexpr std::string_view kRunApiKeyVariableOption = "--api-key-variable";
// A rank whose liveness rank 0 watches (LivenessPlan::rank0_watches): `run` and `status` say so.
inline constexpr std::string_view kRunRank0WatchesOption = "--liveness-by-rank0";
// A stop or restart (server.drain_timeout): systemd sends SIGTERM to `run` alone (KillMode=mixed),
// which forwards it to the engine, lets it drain for the drain time and then kStopKillGrace more,
// its own teardown once the drain ends (vLLM gives its engine cores 5 s and its workers 4 s
// after the API server is done), and SIGKILLs the engine's process group after that.
inline constexpr Seconds kStopKillGrace{10};
// TimeoutStopSec= is the drain time, kStopKillGrace and this margin: systemd's SIGKILL to the
// whole cgroup only backs up `run`'s, and the same timeout bounds each ExecStopPost= command
// (record-exit reads the journal, and a multi-node rank tells its peers over ssh).
inline constexpr Seconds kStopTimeoutMargin{30};
// The unit's TimeoutStopSec=: the longest a stop of this profile's engine takes.
inline Seconds stop_timeout(const Profile& profile) {
  return profile.server.drain_timeout + kStopKillGrace + kStopTimeoutMargin;
}
// `run`'s option for the drain time in seconds; absent (units rendered before it): 80 s, which
// with kStopKillGrace stays within those units' TimeoutStopSec=2min.
inline constexpr std::string_view kRunDrainTimeoutOption = "--drain-timeout";
// `run`'s option for the installed engine release the unit's argv was built for
// (LaunchOptions::engine_version), where the command knew it: step-down spells the knobs it
// inserts as that release takes them. Absent: the conservative spellings.
inline constexpr std::string_view kRunEngineVersionOption = "--engine-version";
inline constexpr Seconds kRunDefaultDrainTimeout{80};
// Python's faulthandler, on in every engine process when a stall can fire: SIGABRT then writes
// every thread's stack to stderr (the journal) before the process dies.
inline constexpr std::string_view kPythonFaultHandlerVariable = "PYTHONFAULTHANDLER";

inline constexpr std::string_view kSystemPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// What root's helpers (ExecStartPre=+, ExecStopPost=+, peer-failed over ssh, the boot-time check)
// run with instead of the engine's environment: `env -i` and this PATH only.
inline constexpr std::string_view kCleanEnvProgram = "/usr/bin/env";
inline constexpr std::string_view kRootHelperPath = "/usr/sbin:/usr/bin:/sbin:/bin";

// FlashInfer never downloads a cubin while this is set to anything non-empty (flashinfer
// v0.6.18 jit/cubin_loader.py, get_artifact): "0" disables downloads too. The plan sets it to 1
// when the environment says the node is offline (hub_offline); `check` then wants the cubins
// already where FlashInfer reads them.
inline constexpr std::string_view kFlashinferNoDownload = "FLASHINFER_NO_DOWNLOAD";
inline constexpr std::string_view kFlashinferCubinDirVariable = "FLASHINFER_CUBIN_DIR";

// Whether huggingface_hub would run offline in `environment` (HF_HUB_OFFLINE or
// TRANSFORMERS_OFFLINE): the operator's own word that the node cannot download.
bool hub_offline(const std::vector<std::pair<std::string, std::string>>& environment);

// Built once per command and passed to everything that reads it (the unit, the check, the
// lock, the cache fingerprint).
LaunchPlan make_launch_plan(const Profile& profile, const LaunchOptions& options = {});

// Where the unit's FlashInfer reads and downloads cubins unless the flashinfer-cubin package is
// installed: [env]'s FLASHINFER_CUBIN_DIR, which wins over the package, or the default below the
// "flashinfer" cache. `explicit_choice` says which.
struct CubinDirectory {
  std::string path;
  bool explicit_choice = false;
};
std::optional<CubinDirectory> flashinfer_cubin_directory(const LaunchPlan& plan);

}  // namespace gl
