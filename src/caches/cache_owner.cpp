// SPDX-License-Identifier: Apache-2.0
#include "caches/cache_owner.hpp"

#include "profile/service_user.hpp"
#include "util/system_users.hpp"
#include "util/try.hpp"

namespace gl {

Result<DirectoryOwner> cache_owner(const Profile& profile) {
  const std::string user = service_user(profile);
  GL_TRY(auto account, lookup_user(user));
  if (!account) return failf("Failed to look up the service user '{}': no such user", user);
  // systemd's Group= default: the user's primary group.
  DirectoryOwner owner{account->uid, account->gid};
  if (profile.service.group) {
    GL_TRY(auto group, lookup_group(*profile.service.group));
    if (!group)
      return failf("Failed to look up service.group '{}': no such group", *profile.service.group);
    owner.gid = *group;
  }
  return owner;
}

}  // namespace gl
