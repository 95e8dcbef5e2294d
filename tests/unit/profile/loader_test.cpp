// SPDX-License-Identifier: Apache-2.0
#include "profile/loader.hpp"

#include <sys/stat.h>
#include <unistd.h>

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

// As root, a profile is read only if only root can change it and every directory above it: a
// user who could write a drop-in, a parent or a search-path directory would choose what root
// installs. The real rule (util/safe_file.hpp's user_writable_reason) on chown'd directories.
class TrustedProfiles : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
    dir_.write("etc/k26-ar.toml", kBase);
  }
  std::string at(const std::string& relative) const { return (dir_.path() / relative).string(); }
  Result<Profile> load_as_root(std::vector<std::filesystem::path> directories) const {
    return load_profile(DirectorySource(std::move(directories), ProfileTrust{true}), "k26-ar");
  }
  TempDir dir_;
};

TEST_F(TrustedProfiles, RootOwnedProfilesLoad) {
  dir_.write("etc/k26-ar.toml.d/10-port.toml", "[server]\nport = 1234\n");
  auto profile = load_as_root({at("etc")});
  ASSERT_TRUE(profile) << profile.error().message;
  EXPECT_EQ(profile->server.port, 1234);
}

TEST_F(TrustedProfiles, AUserOwnedSearchDirectoryIsRefused) {
  dir_.write("home/profiles/unrelated.toml", kBase);
  ASSERT_EQ(::chown(at("home/profiles").c_str(), 1000, 1000), 0);
  auto profile = load_as_root({at("home/profiles"), at("etc")});
  ASSERT_FALSE(profile);
  EXPECT_EQ(profile.error().message,
            "Refusing profile directory '" + at("home/profiles") + "': '" + at("home/profiles") +
                "' is owned by uid 1000 (mode 0755); as root gpulaunch reads only profiles that "
                "only root can change");
  // Not root: the same directories are read.
  auto as_user = load_profile(
      DirectorySource({at("home/profiles"), at("etc")}, ProfileTrust{false}), "k26-ar");
  EXPECT_TRUE(as_user) << as_user.error().message;
}

TEST_F(TrustedProfiles, AUserWritableDropInIsRefused) {
  auto dropin = dir_.write("etc/k26-ar.toml.d/x.toml", "[service]\nextra = [\"Nice=1\"]\n");
  ASSERT_EQ(::chmod(at("etc/k26-ar.toml.d").c_str(), 0777), 0);
  auto profile = load_as_root({at("etc")});
  ASSERT_FALSE(profile);
  EXPECT_EQ(profile.error().message,
            "Refusing profile '" + dropin.string() + "': '" + at("etc/k26-ar.toml.d") +
                "' is world-writable (mode 0777); as root gpulaunch reads only profiles that only "
                "root can change");
}

TEST_F(TrustedProfiles, AUserOwnedFileOrParentIsRefused) {
  auto parent = dir_.write("etc/base.toml", kBase);
  dir_.write("etc/k26-ar.toml", "extends = \"base\"\n");
  ASSERT_EQ(::chown(parent.c_str(), 1000, 1000), 0);
  auto profile = load_as_root({at("etc")});
  ASSERT_FALSE(profile);
  EXPECT_EQ(profile.error().message,
            "Refusing profile '" + parent.string() + "': '" + parent.string() +
                "' is owned by uid 1000 (mode 0644); as root gpulaunch reads only profiles that "
                "only root can change");
}

TEST_F(TrustedProfiles, AGroupWritableProfileIsRefused) {
  ASSERT_EQ(::chmod(at("etc/k26-ar.toml").c_str(), 0664), 0);
  auto profile = load_as_root({at("etc")});
  ASSERT_FALSE(profile);
  EXPECT_EQ(profile.error().message,
            "Refusing profile '" + at("etc/k26-ar.toml") + "': '" + at("etc/k26-ar.toml") +
                "' is group-writable (mode 0664); as root gpulaunch reads only profiles that only "
                "root can change");
}

// Drop-ins and parents together may exceed what `run` can read back from the snapshot: refused
// when loading, not at the next start.
TEST(Loader, AnOversizeMergedProfileIsRefusedAtLoad) {
  TempDir dir;
  const std::string padding(150'000, 'x');
  dir.write("p/big.toml", std::string(kBase) + "[env]\nA = \"" + padding + "\"\n");
  dir.write("p/big.toml.d/10-more.toml", "[env]\nB = \"" + padding + "\"\n");
  DirectorySource source({dir.path() / "p"});
  auto merged = load_merged(source, "big");
  ASSERT_FALSE(merged);
  const std::string& message = merged.error().message;
  EXPECT_TRUE(
      message.starts_with((dir.path() / "p/big.toml").string() + ":1:1: the merged profile is 30"))
      << message;
  EXPECT_TRUE(message.ends_with(" bytes, over the limit of 262144 bytes (2 files merged)"))
      << message;
}

}  // namespace
}  // namespace gl
