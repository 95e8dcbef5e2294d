// SPDX-License-Identifier: Apache-2.0
#pragma once
// Who a profile's engine runs as: its own system user by default, so two engines never share a
// uid (each could read and write the other's memory, files and caches where Yama's
// ptrace_scope is 0). service.user names another account; service.share_user = true says that
// sharing it with another installed profile is intended (rules/node_checks refuses it silently).
//
// A static user rather than DynamicUser=: systemd would allocate the uid at each start and
// bind-mount StateDirectory=/CacheDirectory= from /var/lib/private, and the history root writes
// beside them, the caches outside the cache root (ReadWritePaths=), the GPU device groups and
// `prepare-caches`, which creates and moves the caches as root before the start, all need a uid
// that exists and stays the same while the unit is stopped.

#include <cstddef>
#include <string>
#include <string_view>

#include "profile/profile.hpp"

namespace gl {

inline constexpr std::string_view kServiceUserPrefix = "gpulaunch-";
// systemd's and shadow's limit for a user name (UT_NAMESIZE less its terminating NUL).
inline constexpr std::size_t kMaxUserNameLength = 31;

// gpulaunch-NAME when that is a valid user name of at most 31 characters; otherwise
// gpulaunch--, the first 11 characters of NAME ('.' as '_'), '-' and the first 8 hex digits of
// SHA-256(NAME): 31 characters, the same for a name every time. No profile name starts with '-',
// so a plain user is never a shortened one (issue 45: "a_b-" and the 8 hex digits of "a.b" once
// gave "a.b"'s user); two shortened names meet only where SHA-256 prefixes collide, and two
// profiles that meet on one user so are refused like any silent sharing.
std::string default_service_user(std::string_view profile_name);

// The unit's User=: service.user, else default_service_user(name).
std::string service_user(const Profile& profile);

// Whether gpulaunch creates and owns that user (the default one), or the administrator does.
bool service_user_is_default(const Profile& profile);

}  // namespace gl
