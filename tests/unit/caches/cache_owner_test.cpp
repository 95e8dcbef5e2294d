// SPDX-License-Identifier: Apache-2.0
#include "caches/cache_owner.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

TEST(CacheOwner, WithoutAServiceUserTheProfilesOwnUserWhichMustExist) {
  Profile profile;
  profile.name = "gl-no-such-profile";
  auto owner = cache_owner(profile);
  ASSERT_FALSE(owner);  // never root: `up` creates gpulaunch-NAME before the first start
  EXPECT_EQ(owner.error().message,
            "Failed to look up the service user 'gpulaunch-gl-no-such-profile': no such user");
}

TEST(CacheOwner, TheUsersIdsAndTheGroupWhenNamed) {
  Profile profile;
  profile.service.user = "nobody";  // in every Debian passwd
  auto owner = cache_owner(profile);
  ASSERT_TRUE(owner) << owner.error().message;
  EXPECT_EQ(owner->uid, 65534u);
  profile.service.group = "root";
  owner = cache_owner(profile);
  ASSERT_TRUE(owner);
  EXPECT_EQ(owner->uid, 65534u);
  EXPECT_EQ(owner->gid, 0u);
}

TEST(CacheOwner, AnUnknownUserIsAnError) {
  Profile profile;
  profile.service.user = "gl-no-such-user";
  auto owner = cache_owner(profile);
  ASSERT_FALSE(owner);
  EXPECT_EQ(owner.error().message,
            "Failed to look up the service user 'gl-no-such-user': no such user");
}

}  // namespace
}  // namespace gl
