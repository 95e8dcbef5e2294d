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

class DirectorySource final : public ProfileSource {
 public:
  explicit DirectorySource(std::vector<std::filesystem::path> directories);
  std::vector<ProfileEntry> list() const override;
  std::optional<std::filesystem::path> find(std::string_view name,
                                            const std::filesystem::path& near) const override;
  Result<std::string> read(const std::filesystem::path& path) const override;
  std::vector<std::filesystem::path> dropins(const std::filesystem::path& path) const override;

 private:
  std::vector<std::filesystem::path> directories_;
};

struct MergedProfile {
  std::string name;
  std::filesystem::path path;  // the profile's own file, as found
  std::string file;            // the same, absolute: what errors name
  std::vector<std::string> sources;
  toml::table table;
};

// `name_or_path` is a profile name, or a path to a .toml file (anything containing '/').
Result<MergedProfile> load_merged(const ProfileSource& source, std::string_view name_or_path);

}  // namespace gl
