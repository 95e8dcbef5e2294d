// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where gpulaunch keeps what it writes about a profile, spelled once. Two kinds of place:
//
// - root-owned (0755, root:root), written only by root and later trusted by root: the history
//   (events.jsonl, supervisor.json), the JIT caches' fingerprint stamps, the profile snapshot `up`
//   installs. The engine and every other non-root user can read them and write none of them.
// - engine-owned: the service's HOME and working directory (systemd's StateDirectory=, chowned to
//   service.user) and the cache root (CacheDirectory=). Root treats all of it as hostile.

#include <filesystem>
#include <string>
#include <string_view>

namespace gl::state_paths {

inline constexpr std::string_view kStateRoot = "/var/lib/gpulaunch";
inline constexpr std::string_view kCacheRoot = "/var/cache/gpulaunch";
// A tmpfs: what must not outlive a boot (root-owned too).
inline constexpr std::string_view kRuntimeRoot = "/run/gpulaunch";

// /var/lib/gpulaunch/NAME: root-owned; holds the history and the stamps.
std::filesystem::path profile_directory(std::string_view profile);
std::filesystem::path events_file(std::string_view profile);       // .../NAME/events.jsonl
std::filesystem::path supervisor_file(std::string_view profile);   // .../NAME/supervisor.json
std::filesystem::path gate_record_file(std::string_view profile);  // .../NAME/gate.json
// .../NAME/caches: one fingerprint stamp per profile's cache root, written by root.
std::filesystem::path cache_stamp_directory(std::string_view profile);

// .../NAME/engine: the engine's HOME and working directory, owned by service.user.
std::filesystem::path engine_home(std::string_view profile);
// The StateDirectory= value that makes systemd create engine_home() (relative to /var/lib).
std::string engine_state_directory_setting(std::string_view profile);

// /run/gpulaunch/NAME: root-owned, 0755.
std::filesystem::path runtime_directory(std::string_view profile);
// .../NAME/history-unrecorded: record-exit could not record a stop (disk full); until it can,
// `run` stays down rather than restart outside the crash-loop budget.
std::filesystem::path unrecorded_marker(std::string_view profile);
// .../NAME/caches-refused: prepare-caches (ExecStartPre=-+) refused to start, with why. A failing
// ExecStartPre= is restarted whatever RestartPreventExitStatus= says (that reads the main
// process), so `run` reads this and exits with the configuration-error status instead.
std::filesystem::path caches_refused_marker(std::string_view profile);

// /run/gpulaunch/xids-acknowledged: when the operator last set this boot's Xid lines aside
// (`check --node --acknowledge-xids`, after resetting a GPU); gone at the next boot with them.
std::filesystem::path xids_acknowledged_file();

// /var/lib/gpulaunch/snapshots/NAME.toml: the merged profile as `up` installed it.
std::filesystem::path snapshot_file(std::string_view profile);
// /var/lib/gpulaunch/snapshots: one snapshot per installed profile (`check --all` reads them).
std::filesystem::path snapshot_directory();

// /var/lib/gpulaunch/.probe-cache.json: what untrusted programs (an nvcc with no version file)
// answered, keyed by the file they were; root-owned. The dot keeps it apart from profile names.
std::filesystem::path probe_cache_file();

// node_exporter's textfile collector directory as Debian's prometheus-node-exporter sets it (its
// --collector.textfile.directory default, /etc/default/prometheus-node-exporter's ARGS empty):
// root-owned; every *.prom file in it is served at the next scrape.
inline constexpr std::string_view kTextfileDirectory = "/var/lib/prometheus/node-exporter";
// gpulaunch_NAME.prom: one profile's metrics file's name in a textfile directory.
std::string metrics_file_name(std::string_view profile);

// /var/cache/gpulaunch/NAME: the default cache root (CacheDirectory=, owned by service.user).
std::filesystem::path default_cache_root(std::string_view profile);
// The CacheDirectory= value for default_cache_root().
std::string cache_directory_setting(std::string_view profile);

}  // namespace gl::state_paths
