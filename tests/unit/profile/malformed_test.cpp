// SPDX-License-Identifier: Apache-2.0
// Each file in tests/malformed/ is a bad profile whose first line, "#! error: ...", is the exact
// one-line error it must produce ({dir} stands for the directory).

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "profile/validate.hpp"

namespace gl {
namespace {
namespace fs = std::filesystem;

const fs::path kDir = fs::path(GL_SOURCE_DIR) / "tests/malformed";

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& item : fs::directory_iterator(kDir))
    if (item.path().extension() == ".toml") names.push_back(item.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

class Malformed : public ::testing::TestWithParam<std::string> {};

TEST_P(Malformed, GivesItsOneLineLocatedError) {
  const fs::path file = kDir / (GetParam() + ".toml");
  std::string first_line;
  std::getline(std::ifstream(file), first_line);
  const std::string prefix = "#! error: ";
  ASSERT_TRUE(first_line.starts_with(prefix)) << file << " lacks its '#! error:' line";
  std::string expected = first_line.substr(prefix.size());
  expected.replace(expected.find("{dir}"), 5, kDir.string());

  DirectorySource source({kDir});
  auto profile = load_profile(source, file.string());
  ASSERT_FALSE(profile) << file << " was accepted";
  EXPECT_EQ(profile.error().message, expected);
  EXPECT_EQ(profile.error().message.find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Profiles, Malformed, ::testing::ValuesIn(case_names()),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(MalformedCorpus, IsLargeEnough) {
  EXPECT_GE(case_names().size(), 30u);
}

}  // namespace
}  // namespace gl
