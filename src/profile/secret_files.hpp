// SPDX-License-Identifier: Apache-2.0
#pragma once
// The files behind `[secrets]`: systemd reads each as root (LoadCredential=) and hands it to the
// engine, so each must be a file only root can read and change. `up` and `check` look at them;
// `render` and `lock` never open them (a lock records a secret's name, never its value).

#include <sys/types.h>

#include <string>
#include <string_view>

#include "profile/profile.hpp"
#include "util/error.hpp"

namespace gl {

// systemd puts a unit's credentials in /run/credentials/UNIT (its %d specifier and
// $CREDENTIALS_DIRECTORY; systemd v252 src/core/execute.c, get_credential_directory).
inline constexpr std::string_view kCredentialsRoot = "/run/credentials";
// The unit's credentials directory (%d): /run/credentials/UNIT.
std::string credentials_directory(const Profile& profile);
// Where the [secrets] entry `name` lies while the profile's unit runs.
std::string credential_path(const Profile& profile, std::string_view name);

// Each secret's file must exist, be a regular file owned by `owner` (root, or the caller of a
// --user manager) with no group or other permission bits (0600 or 0400), and, for root, sit where
// no other user can replace it (user_writable_reason). Only stats: the content is never read.
Result<void> check_secret_files(const Profile& profile, uid_t owner);
// The same for this process's effective uid.
Result<void> check_secret_files(const Profile& profile);

// An API key file (an engine's key, which `run`'s probes and the upgrade gate send): its first
// line, trailing blanks and a CR dropped (llama.cpp's --api-key-file reads one key a line); read
// no more than kMaxApiKeyBytes of it.
inline constexpr size_t kMaxApiKeyBytes = 64 * 1024;
std::string api_key_of(std::string_view content);

}  // namespace gl
