// SPDX-License-Identifier: Apache-2.0
#include "caches/safe_remove.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "temp_tree.hpp"

namespace gl {
namespace {

namespace fs = std::filesystem;
using SafeRemove = test::TempTree;

TEST(SafeRemoveRoots, RefusesSlashHomesAndSystemDirectories) {
  for (const char* path : {"/",
                           "//",
                           "/home",
                           "/home/alice",
                           "/home/alice/",
                           "/root",
                           "/usr",
                           "/usr/local/cache",
                           "/etc",
                           "/etc/x",
                           "/var",
                           "/var/cache",
                           "/var/lib",
                           "/var/lib/dpkg",
                           "/var/lib/gpulaunch/k26/caches",
                           "/bin",
                           "/lib",
                           "/lib64",
                           "/tmp",
                           "/proc/1",
                           "/sys",
                           "/var/cache/gpulaunch",
                           "/var/cache/gpulaunch/..",
                           "/run/user/1000"}) {
    auto result = check_clearable(path);
    EXPECT_FALSE(result) << path;
  }
  EXPECT_FALSE(check_clearable("relative/dir"));
  auto home = check_clearable("/home/alice");
  ASSERT_FALSE(home);
  EXPECT_EQ(home.error().message, "Refusing to clear '/home/alice': it is a home directory");
}

TEST(SafeRemoveRoots, AcceptsAProfileCacheRoot) {
  EXPECT_TRUE(check_clearable("/var/cache/gpulaunch/qwen"));
  EXPECT_TRUE(check_clearable("/srv/caches/qwen"));
  EXPECT_TRUE(check_clearable("/home/alice/.cache/flashinfer"));
}

TEST_F(SafeRemove, ClearingACacheWithASymlinkToAFileOutsideLeavesThatFile) {
  write(base / "outside/precious", "keep me");
  write(base / "root/cache/object.so", "compiled");
  fs::create_symlink(base / "outside/precious", base / "root/cache/link-to-file");
  fs::create_directories(base / "root/cache/nested");
  fs::create_directory_symlink(base / "outside", base / "root/cache/nested/link-to-dir");

  auto root = ConfinedRoot::open(base / "root");
  ASSERT_TRUE(root) << root.error().message;
  auto removed = root->clear_directory("cache");
  ASSERT_TRUE(removed) << removed.error().message;

  EXPECT_EQ(read(base / "outside/precious"), "keep me");
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(base / "root/cache")));
  EXPECT_TRUE(fs::is_empty(base / "root/cache"));
  EXPECT_EQ(removed->entries, 4u);  // object.so, link-to-file, nested, link-to-dir
}

TEST_F(SafeRemove, ACacheDirectoryThatIsASymlinkIsReplacedNotFollowed) {
  write(base / "outside/precious", "keep me");
  fs::create_directories(base / "root");
  fs::create_directory_symlink(base / "outside", base / "root/cache");
  auto root = ConfinedRoot::open(base / "root");
  ASSERT_TRUE(root);
  ASSERT_TRUE(root->clear_directory("cache"));
  EXPECT_EQ(read(base / "outside/precious"), "keep me");
  EXPECT_FALSE(fs::is_symlink(base / "root/cache"));
}

TEST_F(SafeRemove, ACacheRootThatIsASymlinkToElsewhereIsRefused) {
  write(base / "elsewhere/cache/precious", "keep me");
  fs::create_directory_symlink(base / "elsewhere", base / "root");
  auto root = ConfinedRoot::open(base / "root");
  ASSERT_FALSE(root);
  EXPECT_NE(root.error().message.find("is a symbolic link"), std::string::npos)
      << root.error().message;
  EXPECT_EQ(read(base / "elsewhere/cache/precious"), "keep me");
}

TEST_F(SafeRemove, PathsThatCouldClimbOutOfTheRootAreRefused) {
  write(base / "outside/precious", "keep me");
  fs::create_directories(base / "root/cache");
  fs::create_directory_symlink(base / "outside", base / "root/escape");
  auto root = ConfinedRoot::open(base / "root");
  ASSERT_TRUE(root);
  for (const char* relative : {"../outside", "cache/../../outside", "/etc", "cache//x", "./cache"})
    EXPECT_FALSE(root->remove(relative)) << relative;
  // A symlinked directory on the way is not walked through.
  EXPECT_FALSE(root->remove("escape/precious"));
  EXPECT_FALSE(root->clear_directory("escape/precious"));
  EXPECT_EQ(read(base / "outside/precious"), "keep me");
  EXPECT_FALSE(root->remove(""));  // never the root itself
}

TEST_F(SafeRemove, ClearKeepsTheDirectoryModeAndEmptiesIt) {
  write(base / "root/cache/a/b/c.bin", "12345");
  fs::permissions(base / "root/cache", fs::perms(0750));
  auto root = ConfinedRoot::open(base / "root");
  ASSERT_TRUE(root);
  auto removed = root->clear_directory("cache");
  ASSERT_TRUE(removed);
  EXPECT_EQ(removed->bytes, 5u);
  struct stat info {};
  ASSERT_EQ(::stat((base / "root/cache").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0750u);
  EXPECT_TRUE(fs::is_empty(base / "root/cache"));
  EXPECT_TRUE(root->trash_in("")->empty());  // the trash went with it
}

TEST_F(SafeRemove, ATreeDeeperThanItsDescriptorsIsClearedWithNoTrashLeft) {
  // 600 levels (far deeper than the old 256-level bound) cleared under 128 descriptors: one
  // held per level would run out. A file every 50 levels, and a link out at the bottom.
  write(base / "outside/precious", "keep me");
  fs::path deep = base / "root/cache";
  for (int level = 0; level < 600; ++level) {
    deep /= "d";
    if (level % 50 == 0) write(deep / "f", "12345");
  }
  fs::create_directories(deep);
  fs::create_symlink(base / "outside", deep / "out");
  auto root = ConfinedRoot::open(base / "root");
  ASSERT_TRUE(root);
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
  rlimit tight = before;
  tight.rlim_cur = 128;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &tight), 0);
  auto removed = root->clear_directory("cache");
  ::setrlimit(RLIMIT_NOFILE, &before);
  ASSERT_TRUE(removed) << removed.error().message;
  // The files' bytes and the link's own (the length of its target).
  EXPECT_EQ(removed->bytes, 12u * 5 + (base / "outside").string().size());
  EXPECT_EQ(removed->entries, 600u + 12u + 1u);  // directories, files, the link
  EXPECT_TRUE(fs::is_empty(base / "root/cache"));
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(base / "root"))
    left.push_back(entry.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"cache"});  // no .trash-* left behind
  EXPECT_TRUE(root->trash_in("")->empty());
  EXPECT_EQ(read(base / "outside/precious"), "keep me");
}

TEST_F(SafeRemove, ClearContentsKeepsTheDirectoryItself) {
  write(base / "own/x/y", "abc");
  write(base / "outside/precious", "keep me");
  fs::create_symlink(base / "outside/precious", base / "own/link");
  auto root = ConfinedRoot::open(base / "own");
  ASSERT_TRUE(root);
  auto removed = root->clear_contents("");
  ASSERT_TRUE(removed) << removed.error().message;
  EXPECT_TRUE(fs::is_directory(base / "own"));
  EXPECT_TRUE(fs::is_empty(base / "own"));
  EXPECT_EQ(read(base / "outside/precious"), "keep me");
}

TEST_F(SafeRemove, UsageCountsWhatIsThereWithoutFollowingSymlinks) {
  write(base / "root/cache/a", "1234");
  write(base / "root/cache/d/b", "56");
  write(base / "outside/big", std::string(1000, 'x'));
  fs::create_directory_symlink(base / "outside", base / "root/cache/link");
  auto root = ConfinedRoot::open(base / "root");
  ASSERT_TRUE(root);
  auto usage = root->usage("cache");
  ASSERT_TRUE(usage);
  EXPECT_TRUE(usage->exists);
  EXPECT_TRUE(usage->is_directory);
  EXPECT_EQ(usage->entries, 4u);
  EXPECT_LT(usage->bytes, 1000u);
  auto missing = root->usage("nothing/here");
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->exists);
}

TEST_F(SafeRemove, MakeCacheDirectoryCreatesParentsAsItsOwnAndTheLeafForTheOwner) {
  const DirectoryOwner me{::geteuid(), ::getegid()};
  auto made = make_cache_directory(base / "a/b/cache", me);
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_TRUE(made->created);
  struct stat info {};
  ASSERT_EQ(::lstat((base / "a/b/cache").c_str(), &info), 0);
  EXPECT_EQ(made->identity, (FileIdentity{info.st_dev, info.st_ino}));
  EXPECT_EQ(info.st_mode & 07777, 0755u);
  auto again = make_cache_directory(base / "a/b/cache", me);
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->identity, made->identity);
}

TEST_F(SafeRemove, MakeCacheDirectoryRefusesALinkAtThePathAndSystemDirectoriesBehindLinks) {
  const DirectoryOwner me{::geteuid(), ::getegid()};
  fs::create_directories(base / "elsewhere");
  fs::create_directory_symlink(base / "elsewhere", base / "link");
  auto link = make_cache_directory(base / "link", me);
  ASSERT_FALSE(link);
  EXPECT_NE(link.error().message.find("symbolic link"), std::string::npos);
  fs::create_directory_symlink("/etc", base / "to-etc");
  auto system = make_cache_directory(base / "to-etc/flashinfer", me);
  ASSERT_FALSE(system);
  EXPECT_NE(system.error().message.find("in the system directory '/etc'"), std::string::npos)
      << system.error().message;
  EXPECT_FALSE(fs::exists("/etc/flashinfer"));
  EXPECT_FALSE(make_cache_directory("/var/lib/dpkg/flashinfer", me));
}

TEST_F(SafeRemove, MakeDirectoriesFollowsNoLinkBelowTheRoot) {
  fs::create_directories(base / "root");
  fs::create_directories(base / "outside");
  fs::create_directory_symlink(base / "outside", base / "root/planted");
  auto root = ConfinedRoot::open(base / "root");
  ASSERT_TRUE(root);
  const DirectoryOwner me{::geteuid(), ::getegid()};
  EXPECT_FALSE(root->make_directories("planted/cache", me));
  EXPECT_TRUE(fs::is_empty(base / "outside"));
  ASSERT_TRUE(root->make_directories("fresh/cache", me));
  EXPECT_TRUE(fs::is_directory(base / "root/fresh/cache"));
}

}  // namespace
}  // namespace gl
