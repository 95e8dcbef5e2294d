#include "profile/loader.hpp"

#include <gtest/gtest.h>

#include "profile/validate.hpp"
#include "unit/temp_dir.hpp"

namespace gl {
namespace {

using gl::testing::TempDir;

constexpr const char* kBase = R"(
description = "base"
[engine]
kind = "sglang"
venv = "/opt/venv"
args = ["--trust-remote-code"]
[model]
path = "/models/m"
[parallelism]
tp = 8
[server]
port = 30000
)";

TEST(Loader, ExtendsInheritsAndOverridesKeyByKey) {
  TempDir dir;
  dir.write("p/base.toml", kBase);
  dir.write("p/child.toml",
            "extends = \"base\"\n[parallelism]\ntp = 4\n[server]\nhost = \"0.0.0.0\"\n");
  DirectorySource source({dir.path() / "p"});
  auto profile = load_profile(source, "child");
  ASSERT_TRUE(profile) << profile.error().message;
  EXPECT_EQ(profile->parallelism.tp, 4);
  EXPECT_EQ(profile->server.host, "0.0.0.0");
  EXPECT_EQ(profile->server.port, 30000);  // from the parent
  EXPECT_EQ(profile->engine.args, std::vector<std::string>{"--trust-remote-code"});
  ASSERT_EQ(profile->sources.size(), 2u);
  EXPECT_EQ(profile->sources[0], (dir.path() / "p/base.toml").string());
  EXPECT_EQ(profile->sources[1], (dir.path() / "p/child.toml").string());
}

TEST(Loader, DropInsApplyInLexicalOrderAndEarlierDirectoriesMaskLaterOnes) {
  TempDir dir;
  dir.write("usr/k.toml", kBase);
  dir.write("usr/k.toml.d/20-port.toml", "[server]\nport = 1111\n");
  dir.write("usr/k.toml.d/30-tp.toml", "[parallelism]\ntp = 2\n");
  dir.write("etc/k.toml.d/10-host.toml", "[server]\nhost = \"10.0.0.1\"\nport = 9999\n");
  dir.write("etc/k.toml.d/30-tp.toml", "[parallelism]\ntp = 1\n");  // masks usr's 30-tp
  DirectorySource source({dir.path() / "etc", dir.path() / "usr"});
  auto profile = load_profile(source, "k");
  ASSERT_TRUE(profile) << profile.error().message;
  EXPECT_EQ(profile->server.host, "10.0.0.1");
  EXPECT_EQ(profile->server.port, 1111);  // 20-port comes after 10-host
  EXPECT_EQ(profile->parallelism.tp, 1);
  std::vector<std::string> expected{(dir.path() / "usr/k.toml").string(),
                                    (dir.path() / "etc/k.toml.d/10-host.toml").string(),
                                    (dir.path() / "usr/k.toml.d/20-port.toml").string(),
                                    (dir.path() / "etc/k.toml.d/30-tp.toml").string()};
  EXPECT_EQ(profile->sources, expected);
}

TEST(Loader, ListShowsTheWinningFileAndWhatItShadows) {
  TempDir dir;
  dir.write("etc/a.toml", kBase);
  dir.write("usr/a.toml", kBase);
  dir.write("usr/b.toml", kBase);
  dir.write("usr/not-a-profile.txt", "");
  DirectorySource source({dir.path() / "etc", dir.path() / "usr"});
  auto entries = source.list();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].name, "a");
  EXPECT_EQ(entries[0].path, dir.path() / "etc/a.toml");
  ASSERT_EQ(entries[0].shadows.size(), 1u);
  EXPECT_EQ(entries[0].shadows[0], dir.path() / "usr/a.toml");
  EXPECT_EQ(entries[1].name, "b");
}

TEST(Loader, UnknownProfileSuggestsANearName) {
  TempDir dir;
  dir.write("p/k26-ar.toml", kBase);
  DirectorySource source({dir.path() / "p"});
  auto profile = load_profile(source, "k26-rr");
  ASSERT_FALSE(profile);
  EXPECT_EQ(profile.error().message,
            "profile 'k26-rr' not found on the search path (did you mean 'k26-ar'?)");
}

TEST(Loader, ProfileByPathFindsParentsBesideIt) {
  TempDir dir;
  dir.write("elsewhere/base.toml", kBase);
  auto child = dir.write("elsewhere/mine.toml", "extends = \"base\"\n");
  DirectorySource source({dir.path() / "empty"});
  auto profile = load_profile(source, child.string());
  ASSERT_TRUE(profile) << profile.error().message;
  EXPECT_EQ(profile->name, "mine");
}

}  // namespace
}  // namespace gl
