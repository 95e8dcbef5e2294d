// SPDX-License-Identifier: Apache-2.0
#include "cli/profile_purge.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "profile/memory_source.hpp"
#include "profile/validate.hpp"

namespace gl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ProfilePurge : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/gl-purge-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = pattern;
    places_ = {root_ / "lib/snapshots/demo.toml", root_ / "lib/demo", root_ / "run/demo"};
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void write(const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  std::filesystem::path root_;
  PurgePlaces places_;
};

TEST_F(ProfilePurge, RemovesSnapshotStateAndRuntimeAndSaysSo) {
  write(places_.snapshot, "[engine]\n");
  write(places_.state_directory / "events.jsonl", "{}\n");
  write(places_.state_directory / "supervisor.json", "{}");
  write(places_.state_directory / "engine/.cache/x", "12345");
  write(places_.runtime_directory / "history-unrecorded", "disk full");
  // Another profile's files beside it stay.
  write(root_ / "lib/snapshots/other.toml", "[engine]\n");
  write(root_ / "lib/other/events.jsonl", "{}\n");
  PurgeReport report;
  auto purged = purge_profile_files(places_, report);
  ASSERT_TRUE(purged) << purged.error().message;
  EXPECT_FALSE(std::filesystem::exists(places_.snapshot));
  EXPECT_FALSE(std::filesystem::exists(places_.state_directory));
  EXPECT_FALSE(std::filesystem::exists(places_.runtime_directory));
  EXPECT_TRUE(std::filesystem::exists(root_ / "lib/snapshots/other.toml"));
  EXPECT_TRUE(std::filesystem::exists(root_ / "lib/other/events.jsonl"));
  ASSERT_EQ(report.removed.size(), 3u);
  EXPECT_EQ(report.removed[0], "removed " + places_.snapshot.string() + " (the installed profile)");
  EXPECT_THAT(report.removed[1], HasSubstr("removed " + places_.state_directory.string() +
                                           " (history, supervisor state, gate record"));
  EXPECT_THAT(report.removed[2], HasSubstr("removed " + places_.runtime_directory.string()));
}

// The engine owns its home: a link it left there is removed, never followed.
TEST_F(ProfilePurge, ALinkTheEngineLeftIsNotFollowed) {
  write(root_ / "outside/keep", "precious");
  write(places_.state_directory / "events.jsonl", "{}\n");
  std::filesystem::create_directories(places_.state_directory / "engine");
  std::filesystem::create_directory_symlink(root_ / "outside",
                                            places_.state_directory / "engine/escape");
  PurgeReport report;
  ASSERT_TRUE(purge_profile_files(places_, report));
  EXPECT_FALSE(std::filesystem::exists(places_.state_directory));
  EXPECT_TRUE(std::filesystem::exists(root_ / "outside/keep"));
}

TEST_F(ProfilePurge, NothingThereIsNothingRemoved) {
  PurgeReport report;
  ASSERT_TRUE(purge_profile_files(places_, report));
  EXPECT_TRUE(report.removed.empty());
}

// The caches stay (a rebuild costs minutes to hours): each is named with its command.
TEST_F(ProfilePurge, CachesAreLeftWithTheCommandThatRemovesThem) {
  const auto caches = root_ / "cache";
  write(caches / "flashinfer/kernel.so", std::string(1000, 'x'));
  MemorySource source({{"/p/demo.toml",
                        "[engine]\nkind = \"sglang\"\nvenv = \"/opt/v\"\n"
                        "[model]\npath = \"/models/m\"\n[caches]\nroot = \"" +
                            caches.string() + "\"\n"}});
  auto profile = load_profile(source, "demo");
  ASSERT_TRUE(profile) << profile.error().message;
  PurgeReport report;
  report_left_caches(*profile, report);
  EXPECT_THAT(report.left, ElementsAre("left " + caches.string() +
                                       " (the JIT caches, 1000 B): remove with `rm -rf -- " +
                                       caches.string() + "`"));
}

}  // namespace
}  // namespace gl
