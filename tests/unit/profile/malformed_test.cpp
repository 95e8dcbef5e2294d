// SPDX-License-Identifier: Apache-2.0
// Each file in tests/malformed/ is a bad profile whose first line, "#! error: ...", is the exact
// one-line error it must produce ({dir} stands for the directory).

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "profile/memory_source.hpp"
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
  for (auto at = expected.find("{dir}"); at != std::string::npos; at = expected.find("{dir}"))
    expected.replace(at, 5, kDir.string());

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

// Every schema problem in one run, in the file's order, each at its line; past 20 the rest are
// counted (issue 46).
TEST(MalformedMany, AProfileWithManyBadKeysNamesTwentyAndCountsTheRest) {
  std::string text = "[engine]\nkind = \"sglang\"\nvenv = \"/opt/venv\"\n";
  for (int i = 0; i < 25; ++i) text += "bogus_" + std::to_string(100 + i) + " = 1\n";
  MemorySource source({{"/p/many.toml", text}});
  auto profile = load_profile(source, "/p/many.toml");
  ASSERT_FALSE(profile);
  const std::string& message = profile.error().message;
  EXPECT_EQ(message.rfind("/p/many.toml:4:1: unknown key 'engine.bogus_100'", 0), 0u) << message;
  EXPECT_NE(message.find("; also /p/many.toml:23:1: unknown key 'engine.bogus_119'"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("bogus_120"), std::string::npos) << message;
  EXPECT_TRUE(message.ends_with("; and 5 more")) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace gl
