// SPDX-License-Identifier: Apache-2.0
#include "profile/profile_name.hpp"

#include <algorithm>
#include <filesystem>

#include "util/try.hpp"

namespace gl {

namespace {

constexpr std::string_view kUnitPrefix = "gpulaunch-";
constexpr std::string_view kUnitSuffix = ".service";

constexpr std::string_view kRule =
    "letters, digits, '-', '_', '.', not starting with '.' or '-', at most 64 characters";

}  // namespace

bool is_valid_profile_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxProfileNameLength || name.front() == '.' ||
      name.front() == '-')
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

Result<void> check_profile_name(std::string_view name) {
  if (is_valid_profile_name(name)) return {};
  return failf("'{}' is not a valid profile name ({})", name, kRule);
}

bool is_profile_path(std::string_view argument) {
  return argument.find('/') != std::string_view::npos ||
         (argument.size() > kProfileSuffix.size() && argument.ends_with(kProfileSuffix));
}

Result<std::string> profile_name_of(std::string_view name_or_path) {
  if (!is_profile_path(name_or_path)) {
    GL_TRY_VOID(check_profile_name(name_or_path));
    return std::string(name_or_path);
  }
  const std::filesystem::path path{std::string(name_or_path)};
  if (path.extension() != kProfileSuffix)
    return failf("'{}' is neither a profile name nor a path to a NAME{} file", name_or_path,
                 kProfileSuffix);
  std::string name = path.stem().string();
  GL_TRY_VOID(check_profile_name(name));
  return name;
}

std::string unit_name_for(std::string_view name) {
  return std::string(kUnitPrefix) + std::string(name) + std::string(kUnitSuffix);
}

std::string unit_name_pattern() {
  return unit_name_for("*");
}

std::optional<std::string> profile_of_unit(std::string_view unit) {
  if (!unit.starts_with(kUnitPrefix) || !unit.ends_with(kUnitSuffix)) return std::nullopt;
  unit.remove_prefix(kUnitPrefix.size());
  unit.remove_suffix(kUnitSuffix.size());
  if (!is_valid_profile_name(unit)) return std::nullopt;
  return std::string(unit);
}

}  // namespace gl
