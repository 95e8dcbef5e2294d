// SPDX-License-Identifier: Apache-2.0
// The one rule for profile names, and what a command-line argument stands for.

#include "profile/profile_name.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace gl {
namespace {

TEST(ProfileName, NamesAreFileUnitAndDirectoryNamesWithoutTraversal) {
  for (const std::string& name :
       std::vector<std::string>{"k26-ar", "a", "K_2.6", std::string(64, 'x')})
    EXPECT_TRUE(is_valid_profile_name(name)) << name;
  for (const std::string& name : std::vector<std::string>{"", ".", "..", ".hidden", "-flag", "a/b",
                                                          "a b", "a\\b", "é", std::string(65, 'x')})
    EXPECT_FALSE(is_valid_profile_name(name)) << name;
}

TEST(ProfileName, AnArgumentIsANameOrAPathToANameDotToml) {
  EXPECT_EQ(profile_name_of("k26-ar").value(), "k26-ar");
  EXPECT_EQ(profile_name_of("/etc/gpulaunch/profiles/k26-ar.toml").value(), "k26-ar");
  EXPECT_EQ(profile_name_of("k26.v2").value(), "k26.v2");  // a name: its dot is not a suffix
  EXPECT_EQ(profile_name_of("..").error().message,
            "'..' is not a valid profile name (letters, digits, '-', '_', '.', not starting with "
            "'.' or '-', at most 64 characters)");
  EXPECT_EQ(profile_name_of("a/b").error().message,
            "'a/b' is neither a profile name nor a path to a NAME.toml file");
  EXPECT_EQ(profile_name_of("../x.toml/..").error().message,
            "'../x.toml/..' is neither a profile name nor a path to a NAME.toml file");
  EXPECT_FALSE(profile_name_of("dir/.hidden.toml"));
}

TEST(ProfileName, AUnitNameReadsBackAsItsProfile) {
  EXPECT_EQ(unit_name_for("k26-ar"), "gpulaunch-k26-ar.service");
  EXPECT_EQ(profile_of_unit(unit_name_for("k26-ar")), "k26-ar");
  EXPECT_EQ(profile_of_unit(unit_name_for("k26.v2")), "k26.v2");
  // The glob `status` lists matches units that are no profile's: they are left out.
  EXPECT_EQ(unit_name_pattern(), "gpulaunch-*.service");
  for (const char* unit : {"gpulaunch-check@k26.service", "gpulaunch-.service", "sshd.service",
                           "gpulaunch-k26.socket", "gpulaunch-k26.service.d"})
    EXPECT_EQ(profile_of_unit(unit), std::nullopt) << unit;
}

}  // namespace
}  // namespace gl
