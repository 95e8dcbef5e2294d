// SPDX-License-Identifier: Apache-2.0
#include "cli/profile_lookup.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/core.h>

#include "profile/installed_snapshot.hpp"
#include "profile/profile_name.hpp"
#include "profile/validate.hpp"
#include "util/did_you_mean.hpp"
#include "util/safe_file.hpp"
#include "util/state_paths.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// A name (never a path) on the search path.
bool on_search_path(const ProfileSource& source, std::string_view name) {
  return source.find(name, {}).has_value();
}

Error unknown_profile(const ProfileSource& source, std::string_view name) {
  std::vector<std::string> names;
  for (const auto& entry : source.list()) names.push_back(entry.name);
  for (auto& installed : installed_profile_names()) names.push_back(std::move(installed));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return Error{fmt::format("profile '{}' not found: neither on the search path nor installed{}",
                           name, did_you_mean_suffix(name, names))};
}

}  // namespace

std::vector<std::string> installed_profile_names() {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(state_paths::snapshot_directory(), error)) {
    const std::string file = entry.path().filename().string();
    if (!file.ends_with(kProfileSuffix)) continue;
    std::string name = file.substr(0, file.size() - kProfileSuffix.size());
    if (is_valid_profile_name(name)) names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<void> check_known_profile(const CliContext& context, std::string_view name_or_path) {
  if (is_profile_path(name_or_path)) {
    if (exists_no_follow(std::filesystem::path(std::string(name_or_path)))) return {};
    return failf("profile file '{}' does not exist", name_or_path);
  }
  GL_TRY_VOID(check_profile_name(name_or_path));
  const DirectorySource source = context.profile_source();
  // Known: on the search path, installed, or with a history root keeps (a profile run from its
  // snapshot file alone; `down --purge` removes it with the rest).
  if (on_search_path(source, name_or_path) ||
      exists_no_follow(state_paths::snapshot_file(name_or_path)) ||
      exists_no_follow(state_paths::profile_directory(name_or_path)))
    return {};
  return std::unexpected(unknown_profile(source, name_or_path));
}

Result<void> check_known_service(const CliContext& context, std::string_view name,
                                 ManagerScope scope) {
  auto known = check_known_profile(context, name);
  if (known || is_profile_path(name) || !is_valid_profile_name(name)) return known;
  auto manager = connect_systemd(scope);
  if (!manager) return known;
  auto state = (*manager)->status(unit_name_for(name));
  if (state && state->load_state != "not-found") return {};
  return known;
}

Result<MergedProfile> load_merged_or_installed(const CliContext& context,
                                               std::string_view name_or_path) {
  const DirectorySource source = context.profile_source();
  if (is_profile_path(name_or_path) || on_search_path(source, name_or_path))
    return load_merged(source, name_or_path);
  GL_TRY_VOID(check_profile_name(name_or_path));
  GL_TRY(auto installed,
         load_installed_merged(name_or_path, state_paths::snapshot_file(name_or_path)));
  if (!installed) return std::unexpected(unknown_profile(source, name_or_path));
  return std::move(*installed);
}

Result<Profile> load_profile_or_installed(const CliContext& context,
                                          std::string_view name_or_path) {
  GL_TRY(auto merged, load_merged_or_installed(context, name_or_path));
  return validate_profile(merged);
}

}  // namespace gl
