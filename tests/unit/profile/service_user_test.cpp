// SPDX-License-Identifier: Apache-2.0
// Who a profile's engine runs as, and the user `up` creates for it.

#include "profile/service_user.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fakes/util/fake_system_users.hpp"
#include "profile/profile_name.hpp"
#include "util/system_users.hpp"

namespace gl {
namespace {

TEST(ServiceUser, EachProfileGetsItsOwnUserByDefault) {
  Profile profile;
  profile.name = "k26-ar";
  EXPECT_EQ(service_user(profile), "gpulaunch-k26-ar");
  EXPECT_TRUE(service_user_is_default(profile));
  profile.service.user = "llm";
  EXPECT_EQ(service_user(profile), "llm");
  EXPECT_FALSE(service_user_is_default(profile));
}

TEST(ServiceUser, LongOrDottedNamesAreShortenedTheSameWayEveryTime) {
  const std::string fits(21, 'a');  // gpulaunch- + 21 = 31, the limit
  EXPECT_EQ(default_service_user(fits), "gpulaunch-" + fits);
  const std::string longer(22, 'a');
  const std::string shortened = default_service_user(longer);
  EXPECT_EQ(shortened.size(), kMaxUserNameLength);
  EXPECT_EQ(shortened.substr(0, 23), "gpulaunch--aaaaaaaaaaa-");
  EXPECT_EQ(default_service_user(longer), shortened);
  // A '.' is no user name character: kept as '_', and the hash keeps "a.b" apart from "a_b".
  EXPECT_EQ(default_service_user("k26.v2").substr(0, 18), "gpulaunch--k26_v2-");
  EXPECT_NE(default_service_user("k26.v2"), default_service_user("k26_v2"));
  EXPECT_EQ(default_service_user("k26_v2"), "gpulaunch-k26_v2");
}

TEST(ServiceUser, EveryValidProfileNameGivesAValidDistinctUserName) {
  std::set<std::string> seen;
  const std::vector<std::string> names{"a",
                                       "K_2.6",
                                       std::string(64, 'x'),
                                       std::string(63, 'x') + "y",
                                       "llama-3.1-70b-instruct-fp8-tp8",
                                       "llama-3.1-70b-instruct-fp8-tp4"};
  for (const auto& name : names) {
    ASSERT_TRUE(is_valid_profile_name(name)) << name;
    const std::string user = default_service_user(name);
    EXPECT_LE(user.size(), kMaxUserNameLength) << user;
    for (char c : user)
      EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') << user;
    EXPECT_TRUE(seen.insert(user).second) << user;
  }
}

// Issue 45: two distinct profile names never map to one user. Over generated names of every
// length and character, each with the adversarial names built from its own user: the shortened
// user's tail taken as a profile name ("a_b-" and 8 hex digits of SHA-256("a.b") once mapped to
// "a.b"'s user), with '_' and '.' swapped, and cut to fit.
TEST(ServiceUser, DistinctNamesNeverShareAUserEvenWhenBuiltFromAnotherNamesUser) {
  std::mt19937 random(45);
  const std::string characters =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.";
  std::vector<std::string> names{"a.b", "a_b", "a-b", "k26.v2", "k26_v2"};
  for (int i = 0; i < 4000; ++i) {
    std::string name(1 + random() % kMaxProfileNameLength, 'x');
    for (char& c : name) c = characters[random() % characters.size()];
    if (name.front() == '.' || name.front() == '-') name.front() = 'n';
    names.push_back(name);
  }
  const std::size_t generated = names.size();
  for (std::size_t i = 0; i < generated; ++i) {
    const std::string user = default_service_user(names[i]);
    for (std::string tail :
         {user.substr(kServiceUserPrefix.size()), user.substr(kServiceUserPrefix.size() + 1)}) {
      names.push_back(tail);
      std::string dotted = tail;
      std::replace(dotted.begin(), dotted.end(), '_', '.');
      names.push_back(dotted);
      names.push_back(tail.substr(0, tail.size() / 2));
    }
  }
  std::map<std::string, std::string> owner;  // user -> the first name that mapped to it
  std::size_t checked = 0;
  for (const auto& name : names) {
    if (!is_valid_profile_name(name)) continue;
    ++checked;
    const std::string user = default_service_user(name);
    auto [at, inserted] = owner.emplace(user, name);
    EXPECT_TRUE(inserted || at->second == name)
        << "'" << name << "' and '" << at->second << "' both map to " << user;
  }
  EXPECT_GT(checked, generated);  // the adversarial names were valid profile names too
}

TEST(SystemUsers, TheProfilesUserIsCreatedOnceInTheGpuGroupsThatExist) {
  FakeSystemUsers users;  // video exists, render does not (no udev rule made it)
  auto made = ensure_system_user(users, "gpulaunch-k26-ar", "gpulaunch engine k26-ar",
                                 "/var/lib/gpulaunch");
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_TRUE(*made);
  ASSERT_EQ(users.created.size(), 1u);
  EXPECT_EQ(users.created[0].groups, std::vector<std::string>{"video"});
  EXPECT_EQ(sysusers_lines(users.created[0]),
            (std::vector<std::string>{
                "u gpulaunch-k26-ar - \"gpulaunch engine k26-ar\" /var/lib/gpulaunch",
                "m gpulaunch-k26-ar video"}));
  // The next `up` finds it and leaves it as it is.
  made = ensure_system_user(users, "gpulaunch-k26-ar", "gpulaunch engine k26-ar",
                            "/var/lib/gpulaunch");
  ASSERT_TRUE(made);
  EXPECT_FALSE(*made);
  EXPECT_EQ(users.created.size(), 1u);
}

TEST(SystemUsers, AFailedCreationIsAnError) {
  FakeSystemUsers users;
  users.fail_create = true;
  auto made = ensure_system_user(users, "gpulaunch-x", "gpulaunch engine x", "/var/lib/gpulaunch");
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().message, "Failed to create system user 'gpulaunch-x': refused");
}

TEST(SystemUsers, LooksUpTheNodesAccounts) {
  auto nobody = lookup_user("nobody");  // in every Debian passwd
  ASSERT_TRUE(nobody && *nobody);
  EXPECT_EQ((*nobody)->uid, 65534u);
  auto missing = lookup_user("gl-no-such-user");
  ASSERT_TRUE(missing);
  EXPECT_FALSE(*missing);
  auto root = lookup_group("root");
  ASSERT_TRUE(root && *root);
  EXPECT_EQ(**root, 0u);
}

}  // namespace
}  // namespace gl
