// SPDX-License-Identifier: Apache-2.0
#include "profile/secret_files.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

#include "util/safe_file.hpp"

namespace gl {

std::string credentials_directory(const Profile& profile) {
  return std::string(kCredentialsRoot) + "/" + profile.unit_name();
}

std::string credential_path(const Profile& profile, std::string_view name) {
  return credentials_directory(profile) + "/" + std::string(name);
}

Result<void> check_secret_files(const Profile& profile, uid_t owner) {
  for (const auto& [name, file] : profile.secrets) {
    struct stat info {};
    if (::stat(file.c_str(), &info) != 0)
      return failf("Failed to check secret '{}' file '{}': {}", name, file, std::strerror(errno));
    auto refuse = [&](const std::string& why) {
      return failf("Refusing secret '{}' file '{}': {}", name, file, why);
    };
    if (!S_ISREG(info.st_mode)) return refuse("it is not a regular file");
    const std::string wanted = owner == 0 ? "root" : fmt::format("uid {}", owner);
    if (info.st_uid != owner || (info.st_mode & 077) != 0)
      return refuse(fmt::format(
          "it is owned by uid {} with mode {:04o}; it must be owned by {} with mode 0600 or 0400",
          info.st_uid, info.st_mode & 07777, wanted));
    if (owner == 0)
      if (auto reason = user_writable_reason(file)) return refuse(*reason);
  }
  return {};
}

Result<void> check_secret_files(const Profile& profile) {
  return check_secret_files(profile, ::geteuid());
}

std::string api_key_of(std::string_view content) {
  std::string_view key = content.substr(0, content.find('\n'));
  while (!key.empty() && (key.back() == '\r' || key.back() == ' ' || key.back() == '\t'))
    key.remove_suffix(1);
  return std::string(key);
}

}  // namespace gl
