// SPDX-License-Identifier: Apache-2.0
#include "util/state_paths.hpp"

namespace gl::state_paths {
namespace {

constexpr std::string_view kEngineSubdirectory = "engine";
constexpr std::string_view kSnapshots = "snapshots";

std::string under_var_lib(std::string_view root) {
  return std::string(root.substr(std::string_view("/var/lib/").size()));
}

std::string under_var_cache(std::string_view root) {
  return std::string(root.substr(std::string_view("/var/cache/").size()));
}

}  // namespace

std::filesystem::path profile_directory(std::string_view profile) {
  return std::filesystem::path(kStateRoot) / profile;
}

std::filesystem::path probe_cache_file() {
  return std::filesystem::path(kStateRoot) / ".probe-cache.json";
}

std::filesystem::path events_file(std::string_view profile) {
  return profile_directory(profile) / "events.jsonl";
}

std::filesystem::path supervisor_file(std::string_view profile) {
  return profile_directory(profile) / "supervisor.json";
}

std::filesystem::path gate_record_file(std::string_view profile) {
  return profile_directory(profile) / "gate.json";
}

std::filesystem::path cache_stamp_directory(std::string_view profile) {
  return profile_directory(profile) / "caches";
}

std::filesystem::path engine_home(std::string_view profile) {
  return profile_directory(profile) / kEngineSubdirectory;
}

std::string engine_state_directory_setting(std::string_view profile) {
  return under_var_lib(kStateRoot) + "/" + std::string(profile) + "/" +
         std::string(kEngineSubdirectory);
}

std::filesystem::path xids_acknowledged_file() {
  return std::filesystem::path(kRuntimeRoot) / "xids-acknowledged";
}

std::filesystem::path runtime_directory(std::string_view profile) {
  return std::filesystem::path(kRuntimeRoot) / profile;
}

std::filesystem::path unrecorded_marker(std::string_view profile) {
  return runtime_directory(profile) / "history-unrecorded";
}

std::filesystem::path caches_refused_marker(std::string_view profile) {
  return runtime_directory(profile) / "caches-refused";
}

std::filesystem::path snapshot_directory() {
  return std::filesystem::path(kStateRoot) / kSnapshots;
}

std::filesystem::path snapshot_file(std::string_view profile) {
  return snapshot_directory() / (std::string(profile) + ".toml");
}

std::filesystem::path default_cache_root(std::string_view profile) {
  return std::filesystem::path(kCacheRoot) / profile;
}

std::string cache_directory_setting(std::string_view profile) {
  return under_var_cache(kCacheRoot) + "/" + std::string(profile);
}

std::string metrics_file_name(std::string_view profile) {
  return "gpulaunch_" + std::string(profile) + ".prom";
}

}  // namespace gl::state_paths
