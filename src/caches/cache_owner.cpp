// SPDX-License-Identifier: Apache-2.0
#include "caches/cache_owner.hpp"

#include <grp.h>
#include <pwd.h>
#include <cerrno>
#include <cstring>
#include <vector>

namespace gl {

Result<DirectoryOwner> cache_owner(const Profile& profile) {
  DirectoryOwner owner;
  std::vector<char> buffer(16384);
  if (profile.service.user) {
    struct passwd entry {};
    struct passwd* found = nullptr;
    int error =
        ::getpwnam_r(profile.service.user->c_str(), &entry, buffer.data(), buffer.size(), &found);
    if (error != 0)
      return failf("Failed to look up service.user '{}': {}", *profile.service.user,
                   std::strerror(error));
    if (!found)
      return failf("Failed to look up service.user '{}': no such user", *profile.service.user);
    owner = {entry.pw_uid, entry.pw_gid};  // systemd's Group= default: the user's primary group
  }
  if (profile.service.group) {
    struct group entry {};
    struct group* found = nullptr;
    int error =
        ::getgrnam_r(profile.service.group->c_str(), &entry, buffer.data(), buffer.size(), &found);
    if (error != 0)
      return failf("Failed to look up service.group '{}': {}", *profile.service.group,
                   std::strerror(error));
    if (!found)
      return failf("Failed to look up service.group '{}': no such group", *profile.service.group);
    owner.gid = entry.gr_gid;
  }
  return owner;
}

}  // namespace gl
