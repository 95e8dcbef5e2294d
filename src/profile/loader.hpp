// SPDX-License-Identifier: Apache-2.0
#pragma once
// Finds profiles on the search path and merges one with its `extends` parents and its
// NAME.toml.d/*.toml drop-ins into a single TOML table that remembers where each value came from.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "util/error.hpp"

namespace gl {

struct ProfileEntry {
  std::string name;
  std::filesystem::path path;
  std::vector<std::filesystem::path> shadows;  // same name further down the search path
};

// Where profiles come from. The real one reads directories; tests and the fuzzer use memory.
class ProfileSource {
 public:
  virtual ~ProfileSource() = default;
  // Whether the whole search path may be read at all (see ProfileTrust).
  virtual Result<void> check_trusted() const { return {}; }
  virtual std::vector<ProfileEntry> list() const = 0;
  // `near` is the directory of the profile asking (for `extends`), searched first.
  virtual std::optional<std::filesystem::path> find(std::string_view name,
                                                    const std::filesystem::path& near) const = 0;
  virtual Result<std::string> read(const std::filesystem::path& path) const = 0;
  // Drop-ins for the profile at `path`, in the order they apply.
  virtual std::vector<std::filesystem::path> dropins(const std::filesystem::path& path) const = 0;
};

// ./profiles, $XDG_CONFIG_HOME/gpulaunch/profiles, /etc/gpulaunch/profiles,
// /usr/share/gpulaunch/profiles; earlier directories win, as /etc wins over /usr in systemd.
std::vector<std::filesystem::path> default_search_path();

// Whose profiles gpulaunch may read. As root it reads only what only root can change (the rule
// of sudo and sshd's StrictModes, util/safe_file.hpp): a profile decides what root installs and
// runs, so a user who could write one file, drop-in, `extends` parent or search-path directory
// would be root. Such a directory is refused, not skipped: skipping ./profiles would quietly
// install a different profile than the one the operator is looking at.
struct ProfileTrust {
  bool root_only = false;
  // root_only when the effective uid is 0.
  static ProfileTrust of_this_process();
};

class DirectorySource final : public ProfileSource {
 public:
  explicit DirectorySource(std::vector<std::filesystem::path> directories,
                           ProfileTrust trust = ProfileTrust::of_this_process());
  // With root_only, every existing search-path directory must be one only root can change.
  Result<void> check_trusted() const override;
  std::vector<ProfileEntry> list() const override;
  std::optional<std::filesystem::path> find(std::string_view name,
                                            const std::filesystem::path& near) const override;
  Result<std::string> read(const std::filesystem::path& path) const override;
  std::vector<std::filesystem::path> dropins(const std::filesystem::path& path) const override;

 private:
  std::vector<std::filesystem::path> directories_;
  ProfileTrust trust_;
};

struct MergedProfile {
  std::string name;
  std::filesystem::path path;  // the profile's own file, as found
  std::string file;            // the same, absolute: what errors name
  std::vector<std::string> sources;
  toml::table table;
};

// The merged profile as `up` installs it for `gpulaunch run` (state_paths::snapshot_file).
// load_merged refuses a profile whose snapshot would be over kMaxProfileBytes, which `run` could
// not read back.
std::string snapshot_text(const MergedProfile& merged);

// `name_or_path` is a profile name, or a path to a .toml file (anything containing '/').
Result<MergedProfile> load_merged(const ProfileSource& source, std::string_view name_or_path);

}  // namespace gl
