// SPDX-License-Identifier: Apache-2.0
#include "profile/service_user.hpp"

#include <algorithm>

#include "util/sha256.hpp"

namespace gl {
namespace {

constexpr std::size_t kKeptNameCharacters = 11;
// The shortened form starts "gpulaunch--": a profile name never starts with '-'
// (profile/profile_name), so no name's plain user can be another name's shortened one.
constexpr std::string_view kShortenedMark = "-";
constexpr std::size_t kHashDigits = 8;

// systemd's strict rule for user names (valid_user_group_name): [A-Za-z_][A-Za-z0-9_-]*.
bool user_name_characters(std::string_view name) {
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

}  // namespace

std::string default_service_user(std::string_view profile_name) {
  std::string plain = std::string(kServiceUserPrefix) + std::string(profile_name);
  if (plain.size() <= kMaxUserNameLength && user_name_characters(profile_name)) return plain;
  std::string kept(profile_name.substr(0, kKeptNameCharacters));
  std::replace(kept.begin(), kept.end(), '.', '_');
  return std::string(kServiceUserPrefix) + std::string(kShortenedMark) + kept + "-" +
         sha256_hex(profile_name).substr(0, kHashDigits);
}

std::string service_user(const Profile& profile) {
  return profile.service.user.value_or(default_service_user(profile.name));
}

bool service_user_is_default(const Profile& profile) {
  return !profile.service.user.has_value();
}

}  // namespace gl
