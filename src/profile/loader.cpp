// SPDX-License-Identifier: Apache-2.0
#include "profile/loader.hpp"

#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>
#include <system_error>

#include "profile/merge.hpp"
#include "profile/profile_name.hpp"
#include "profile/toml_parse.hpp"
#include "util/atomic_file.hpp"
#include "util/did_you_mean.hpp"
#include "util/safe_file.hpp"
#include "util/try.hpp"

namespace gl {
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxExtendsDepth = 16;
constexpr std::string_view kRootOnly =
    "as root gpulaunch reads only profiles that only root can change";
constexpr std::string_view kSuffix = kProfileSuffix;

std::string absolute_text(const fs::path& path) {
  std::error_code ignored;
  fs::path absolute = fs::absolute(path, ignored);
  return (absolute.empty() ? path : absolute.lexically_normal()).string();
}

class Merger {
 public:
  explicit Merger(const ProfileSource& source) : source_(source) {}

  Result<MergedProfile> load_file(const fs::path& path, std::string name,
                                  std::vector<std::string> chain) {
    const std::string shown = absolute_text(path);
    GL_TRY(const std::string text, source_.read(path));
    GL_TRY(toml::table table, parse_toml(text, shown));

    MergedProfile merged;
    merged.name = name;
    merged.path = path;
    merged.file = shown;
    chain.push_back(name);

    if (toml::node* extends = table.get("extends")) {
      const Location where = location_of(*extends, Location{shown});
      auto parent_name = extends->value<std::string>();
      if (!parent_name)
        return fail_at(where, "'extends' must be a string, not {}", toml_type_name(*extends));
      if (std::find(chain.begin(), chain.end(), *parent_name) != chain.end()) {
        std::string cycle;
        for (const auto& link : chain) cycle += link + " -> ";
        return fail_at(where, "'extends' cycle: {}{}", cycle, *parent_name);
      }
      if (chain.size() >= kMaxExtendsDepth)
        return fail_at(where, "'extends' chain is deeper than {} profiles", kMaxExtendsDepth);
      auto parent_path = source_.find(*parent_name, path.parent_path());
      if (!parent_path) {
        std::vector<std::string> names;
        for (const auto& entry : source_.list()) names.push_back(entry.name);
        return fail_at(where, "profile '{}' named by 'extends' not found{}", *parent_name,
                       did_you_mean_suffix(*parent_name, names));
      }
      GL_TRY(MergedProfile parent, load_file(*parent_path, *parent_name, chain));
      table.erase("extends");
      merged.sources = std::move(parent.sources);
      merged.table = std::move(parent.table);
    }
    merged.sources.push_back(shown);
    merge_into(merged.table, std::move(table));

    for (const auto& dropin_path : source_.dropins(path)) {
      const std::string dropin_shown = absolute_text(dropin_path);
      GL_TRY(const std::string dropin_text, source_.read(dropin_path));
      GL_TRY(toml::table dropin, parse_toml(dropin_text, dropin_shown));
      if (toml::node* extends = dropin.get("extends"))
        return fail_at(location_of(*extends, Location{dropin_shown}),
                       "'extends' belongs in the profile itself, not in a drop-in");
      merged.sources.push_back(dropin_shown);
      merge_into(merged.table, std::move(dropin));
    }
    return merged;
  }

 private:
  const ProfileSource& source_;
};

Result<MergedProfile> load_unchecked(const ProfileSource& source, std::string_view name_or_path) {
  Merger merger(source);
  auto name = profile_name_of(name_or_path);
  if (is_profile_path(name_or_path)) {
    fs::path path{std::string(name_or_path)};
    if (!name) return failf("{}:1:1: {}", absolute_text(path), name.error().message);
    return merger.load_file(path, std::move(*name), {});
  }
  GL_TRY_VOID(name);
  auto path = source.find(name_or_path, {});
  if (!path) {
    std::vector<std::string> names;
    for (const auto& entry : source.list()) names.push_back(entry.name);
    return failf("profile '{}' not found on the search path{}", name_or_path,
                 did_you_mean_suffix(name_or_path, names));
  }
  return merger.load_file(*path, std::string(name_or_path), {});
}

}  // namespace

std::vector<fs::path> default_search_path() {
  std::vector<fs::path> directories{"profiles"};
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) {
    directories.push_back(fs::path(xdg) / "gpulaunch/profiles");
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    directories.push_back(fs::path(home) / ".config/gpulaunch/profiles");
  }
  directories.emplace_back("/etc/gpulaunch/profiles");
  directories.emplace_back("/usr/share/gpulaunch/profiles");
  return directories;
}

ProfileTrust ProfileTrust::of_this_process() {
  return ProfileTrust{::geteuid() == 0};
}

DirectorySource::DirectorySource(std::vector<fs::path> directories, ProfileTrust trust)
    : directories_(std::move(directories)), trust_(trust) {}

Result<void> DirectorySource::check_trusted() const {
  if (!trust_.root_only) return {};
  for (const auto& directory : directories_) {
    std::error_code error;
    if (!fs::exists(fs::symlink_status(directory, error))) continue;
    if (auto reason = user_writable_reason(directory))
      return failf("Refusing profile directory '{}': {}; {}", absolute_text(directory), *reason,
                   kRootOnly);
  }
  return {};
}

std::vector<ProfileEntry> DirectorySource::list() const {
  std::map<std::string, ProfileEntry> entries;
  for (const auto& directory : directories_) {
    std::error_code error;
    std::vector<fs::path> files;
    for (const auto& item : fs::directory_iterator(directory, error)) {
      const fs::path& file = item.path();
      std::error_code type_error;
      if (file.extension() == kSuffix && fs::is_regular_file(file, type_error))
        files.push_back(file);
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      std::string name = file.stem().string();
      if (!is_valid_profile_name(name)) continue;
      auto [it, inserted] = entries.try_emplace(name, ProfileEntry{name, file, {}});
      if (!inserted) it->second.shadows.push_back(file);
    }
  }
  std::vector<ProfileEntry> result;
  for (auto& [name, entry] : entries) result.push_back(std::move(entry));
  return result;
}

std::optional<fs::path> DirectorySource::find(std::string_view name, const fs::path& near) const {
  if (!is_valid_profile_name(name)) return std::nullopt;
  std::vector<fs::path> directories;
  if (!near.empty()) directories.push_back(near);
  directories.insert(directories.end(), directories_.begin(), directories_.end());
  for (const auto& directory : directories) {
    fs::path candidate = directory / (std::string(name) + std::string(kSuffix));
    std::error_code error;
    if (fs::is_regular_file(candidate, error)) return candidate;
  }
  return std::nullopt;
}

Result<std::string> DirectorySource::read(const fs::path& path) const {
  if (!trust_.root_only) return read_file(path, kMaxProfileBytes);
  const std::string shown = absolute_text(path);
  if (auto reason = user_writable_reason(path))
    return failf("Refusing profile '{}': {}; {}", shown, *reason, kRootOnly);
  // Every component is root's, so the resolved path stays what was judged; open it without
  // following anything, never blocking on a FIFO, bounded.
  std::error_code error;
  const fs::path resolved = fs::canonical(fs::absolute(path), error);
  if (error) return failf("Failed to open '{}': {}", shown, error.message());
  GL_TRY(auto read, read_regular_nofollow(resolved, kMaxProfileBytes));
  if (!read) return failf("Failed to open '{}': No such file or directory", shown);
  return std::move(read->content);
}

std::vector<fs::path> DirectorySource::dropins(const fs::path& path) const {
  // As systemd does: NAME.toml.d/ in every search directory; a file name in an earlier directory
  // masks the same name in later ones; all apply in lexical order of their file names.
  const std::string directory_name = path.filename().string() + ".d";
  const fs::path own = path.parent_path() / directory_name;
  std::vector<fs::path> directories;
  bool own_listed = false;
  for (const auto& directory : directories_) {
    directories.push_back(directory / directory_name);
    std::error_code error;
    own_listed =
        own_listed || fs::equivalent(directories.back(), own, error) || directories.back() == own;
  }
  // A profile named by path, outside the search path, still gets its own drop-ins first.
  if (!own_listed) directories.insert(directories.begin(), own);
  std::map<std::string, fs::path> by_name;
  for (const auto& directory : directories) {
    std::error_code error;
    for (const auto& item : fs::directory_iterator(directory, error)) {
      std::error_code type_error;
      if (item.path().extension() != kSuffix || !fs::is_regular_file(item.path(), type_error))
        continue;
      by_name.try_emplace(item.path().filename().string(), item.path());
    }
  }
  std::vector<fs::path> result;
  for (auto& [name, file] : by_name) result.push_back(std::move(file));
  return result;
}

std::string snapshot_text(const MergedProfile& merged) {
  std::ostringstream text;
  text << "# Snapshot of profile '" << merged.name << "' written by `gpulaunch up`; merged from:\n";
  for (const auto& source : merged.sources) text << "#   " << source << "\n";
  text << merged.table << "\n";
  return text.str();
}

namespace {

// Each file is under the cap, but a parent and drop-ins together may not be: refuse here, at
// `show`, `render` and `up`, rather than have `run` fail on the snapshot with exit 78.
Result<MergedProfile> within_snapshot_limit(Result<MergedProfile> merged) {
  if (!merged) return merged;
  const size_t size = snapshot_text(*merged).size();
  if (size > kMaxProfileBytes)
    return failf(
        "{}:1:1: the merged profile is {} bytes, over the limit of {} bytes ({} files "
        "merged)",
        merged->file, size, kMaxProfileBytes, merged->sources.size());
  return merged;
}

}  // namespace

Result<MergedProfile> load_merged(const ProfileSource& source, std::string_view name_or_path) {
  GL_TRY_VOID(source.check_trusted());
  return within_snapshot_limit(load_unchecked(source, name_or_path));
}

}  // namespace gl
