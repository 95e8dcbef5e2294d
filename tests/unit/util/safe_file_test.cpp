// SPDX-License-Identifier: Apache-2.0
#include "util/safe_file.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include <gtest/gtest.h>

namespace gl {
namespace {

namespace fs = std::filesystem;

class SafeFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char path[] = "/tmp/gl-safe-file-XXXXXX";
    ASSERT_NE(::mkdtemp(path), nullptr);
    root_ = path;
    ::chmod(root_.c_str(), 0755);
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

  fs::path root_;
};

TEST_F(SafeFileTest, ReadsARegularFile) {
  write(root_ / "state.json", "{}\n");
  auto read = read_regular_nofollow(root_ / "state.json", 1024);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ((*read)->content, "{}\n");
}

TEST_F(SafeFileTest, AMissingFileIsNotAnError) {
  auto read = read_regular_nofollow(root_ / "absent" / "state.json", 1024);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_FALSE(read->has_value());
}

// Callers tell a missing directory from a refused one by the errno the failure carries, never by
// its text: a directory whose name ends like the errno's text is still refused as what it is.
TEST_F(SafeFileTest, AFailedOpenCarriesItsErrno) {
  auto missing = open_directory_nofollow(root_ / "absent");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().errno_value, ENOENT);
  EXPECT_EQ(missing.error().message,
            "Failed to open '" + (root_ / "absent").string() + "': No such file or directory");
  write(root_ / "file", "x");
  auto not_directory = open_directory_nofollow(root_ / "file" / "below");
  ASSERT_FALSE(not_directory);
  EXPECT_NE(not_directory.error().errno_value, ENOENT);
  auto refused = read_regular_nofollow(root_ / "file" / "below" / "state.json", 1024);
  EXPECT_FALSE(refused);  // a file on the way is no missing directory
}

TEST_F(SafeFileTest, RefusesALinkAtTheFile) {
  write(root_ / "secret", "root only");
  fs::create_symlink(root_ / "secret", root_ / "state.json");
  auto read = read_regular_nofollow(root_ / "state.json", 1024);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message,
            "Refusing to read '" + (root_ / "state.json").string() + "': it is a symbolic link");
}

TEST_F(SafeFileTest, RefusesALinkOnTheWay) {
  fs::create_directory(root_ / "real");
  write(root_ / "real" / "state.json", "x");
  fs::create_directory_symlink(root_ / "real", root_ / "linked");
  auto read = read_regular_nofollow(root_ / "linked" / "state.json", 1024);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message, "Refusing to open '" + (root_ / "linked").string() + "': '" +
                                      (root_ / "linked").string() + "' is a symbolic link");
}

TEST_F(SafeFileTest, RefusesAFifoWithoutBlocking) {
  ASSERT_EQ(::mkfifo((root_ / "state.json").c_str(), 0644), 0);
  auto read = read_regular_nofollow(root_ / "state.json", 1024);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message,
            "Refusing to read '" + (root_ / "state.json").string() + "': it is a FIFO");
}

TEST_F(SafeFileTest, RefusesAFileOverTheBound) {
  write(root_ / "big", std::string(2048, 'x'));
  auto read = read_regular_nofollow(root_ / "big", 1024);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message, "Refusing to read '" + (root_ / "big").string() +
                                      "': it is 2048 bytes, over the limit of 1024");
}

// A header's head: the first bytes of a file of any size, refused as a whole read is.
TEST_F(SafeFileTest, ReadsTheHeadOfALargeFileAndAllOfASmallOne) {
  write(root_ / "cuda.h", "#define CUDA_VERSION 13000\n" + std::string(300000, 'x'));
  write(root_ / "small.h", "#define CUDA_VERSION 12040\n");
  const UniqueFd directory(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  auto head = read_regular_head_at(directory.get(), "cuda.h", 1024, "cuda.h");
  ASSERT_TRUE(head && head->has_value());
  EXPECT_EQ((*head)->content.size(), 1024u);
  EXPECT_TRUE((*head)->content.starts_with("#define CUDA_VERSION 13000\n"));
  auto small = read_regular_head_at(directory.get(), "small.h", 1024, "small.h");
  ASSERT_TRUE(small && small->has_value());
  EXPECT_EQ((*small)->content, "#define CUDA_VERSION 12040\n");
  auto whole = read_regular_at(directory.get(), "cuda.h", 400000, "cuda.h");
  ASSERT_TRUE(whole && whole->has_value());
  EXPECT_EQ((*whole)->content.size(), 300027u);
  fs::create_symlink(root_ / "cuda.h", root_ / "linked.h");
  auto linked = read_regular_head_at(directory.get(), "linked.h", 1024, "linked.h");
  ASSERT_FALSE(linked);
  EXPECT_EQ(linked.error().message, "Refusing to read 'linked.h': it is a symbolic link");
  ASSERT_EQ(::mkfifo((root_ / "fifo.h").c_str(), 0644), 0);
  EXPECT_FALSE(read_regular_head_at(directory.get(), "fifo.h", 1024, "fifo.h"));
}

TEST_F(SafeFileTest, AtomicWriteReplacesAPlantedLinkInsteadOfWritingThroughIt) {
  write(root_ / "victim", "untouched");
  fs::create_symlink(root_ / "victim", root_ / "supervisor.json");
  auto directory = open_directory_nofollow(root_);
  ASSERT_TRUE(directory) << directory.error().message;
  auto written = write_atomically_at(directory->get(), "supervisor.json", "new\n", 0644,
                                     (root_ / "supervisor.json").string());
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_FALSE(fs::is_symlink(root_ / "supervisor.json"));
  std::ifstream victim(root_ / "victim");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(victim), {}), "untouched");
}

// init's profile: written whole, and never over anything at its name (a file, a planted link).
TEST_F(SafeFileTest, CreateNeverReplaces) {
  auto directory = open_directory_nofollow(root_);
  ASSERT_TRUE(directory) << directory.error().message;
  auto created = create_atomically_at(directory->get(), "a.toml", "new\n", 0644, "a.toml");
  ASSERT_TRUE(created) << created.error().message;
  std::ifstream in(root_ / "a.toml");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "new\n");
  auto again = create_atomically_at(directory->get(), "a.toml", "other\n", 0644, "a.toml");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().message, "Refusing to write 'a.toml': it exists already");
  write(root_ / "victim", "untouched");
  fs::create_symlink(root_ / "victim", root_ / "b.toml");
  EXPECT_FALSE(create_atomically_at(directory->get(), "b.toml", "x", 0644, "b.toml"));
  std::ifstream victim(root_ / "victim");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(victim), {}), "untouched");
  size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(root_)) ++entries;
  EXPECT_EQ(entries, 3u);  // a.toml, b.toml, victim: no temporary left behind
}

TEST_F(SafeFileTest, AppendRefusesLinksAndHardLinks) {
  write(root_ / "victim", "untouched");
  fs::create_symlink(root_ / "victim", root_ / "events.jsonl");
  auto directory = open_directory_nofollow(root_);
  ASSERT_TRUE(directory);
  auto appended = append_at(directory->get(), "events.jsonl", "{}\n", 0644, "events.jsonl");
  ASSERT_FALSE(appended);
  EXPECT_EQ(appended.error().message,
            "Refusing to append to 'events.jsonl': it is a symbolic link");
  fs::remove(root_ / "events.jsonl");
  fs::create_hard_link(root_ / "victim", root_ / "events.jsonl");
  appended = append_at(directory->get(), "events.jsonl", "{}\n", 0644, "events.jsonl");
  ASSERT_FALSE(appended);
  EXPECT_EQ(appended.error().message, "Refusing to append to 'events.jsonl': it has 2 hard links");
  fs::remove(root_ / "events.jsonl");
  appended = append_at(directory->get(), "events.jsonl", "{}\n", 0644, "events.jsonl");
  ASSERT_TRUE(appended) << appended.error().message;
}

TEST_F(SafeFileTest, UserWritableFollowsTheStrictModesRule) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make root-owned and user-owned files";
  write(root_ / "profile.toml", "x");
  ::chmod((root_ / "profile.toml").c_str(), 0644);
  EXPECT_EQ(user_writable_reason(root_ / "profile.toml"), std::nullopt);  // under sticky /tmp
  ::chmod((root_ / "profile.toml").c_str(), 0666);
  EXPECT_EQ(user_writable_reason(root_ / "profile.toml"),
            "'" + (root_ / "profile.toml").string() + "' is world-writable (mode 0666)");
  ::chmod((root_ / "profile.toml").c_str(), 0644);
  ASSERT_EQ(::chown(root_.c_str(), 1000, 1000), 0);
  EXPECT_EQ(user_writable_reason(root_ / "profile.toml"),
            "'" + root_.string() + "' is owned by uid 1000 (mode 0755)");
  ASSERT_EQ(::chown(root_.c_str(), 0, 0), 0);
  ::chmod(root_.c_str(), 0775);
  EXPECT_EQ(user_writable_reason(root_ / "profile.toml"),
            "'" + root_.string() + "' is group-writable (mode 0775)");
}

TEST_F(SafeFileTest, RootOwnedDirectoryIsCreatedAndAUserOwnedOneRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make user-owned directories";
  auto made = open_root_owned_directory(root_ / "state" / "k26");
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_TRUE(fs::is_directory(root_ / "state" / "k26"));
  ASSERT_EQ(::chown((root_ / "state" / "k26").c_str(), 1000, 1000), 0);
  auto refused = open_root_owned_directory(root_ / "state" / "k26");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "Refusing to keep root's state in '" + (root_ / "state" / "k26").string() + "': '" +
                (root_ / "state" / "k26").string() + "' is owned by uid 1000 (mode 0755)");
}

// What a non-root user does, in a child with that uid and gid (root's test process keeps its own):
// true when `act` succeeded.
template <typename Act>
bool as_user(uid_t uid, Act act) {
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(uid) != 0 || ::setuid(uid) != 0) ::_exit(2);
    ::_exit(act() ? 0 : 1);
  }
  int status = 0;
  return child > 0 && ::waitpid(child, &status, 0) == child && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

// Issue 45: a container's mount source, which root's podman resolves by name at every start. A
// non-root user plants a link to a tree its own uid cannot reach (a secret under a 0700 parent)
// where the mount's source was: it is refused, naming the path and who could replace it; so is
// every path a user could replace so, before any plant.
TEST_F(SafeFileTest, AMountSourceAUserCouldReplaceNamesWhoCould) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make user-owned directories";
  constexpr uid_t kHostile = 4242;
  const auto shown = [&](const std::string& relative) { return (root_ / relative).string(); };
  fs::create_directories(root_ / "secret" / "m");
  ::chmod((root_ / "secret").c_str(), 0700);
  write(root_ / "secret" / "m" / "token", "root's");
  // Only root can change the way to a root-owned model, even where a user owns the model.
  fs::create_directories(root_ / "srv" / "models" / "m");
  ASSERT_EQ(::chown((root_ / "srv" / "models" / "m").c_str(), kHostile, kHostile), 0);
  EXPECT_EQ(replaceable_reason(root_ / "srv" / "models" / "m"), std::nullopt);
  EXPECT_EQ(replaceable_reason(root_ / "srv" / "missing"), std::nullopt);
  // A sticky shared directory (/tmp's rule): the user plants the link there itself.
  fs::create_directories(root_ / "shared");
  ::chmod((root_ / "shared").c_str(), 01777);
  fs::create_directories(root_ / "shared" / "roots");
  EXPECT_EQ(replaceable_reason(root_ / "shared" / "roots"), std::nullopt);
  const fs::path planted = root_ / "shared" / "models";
  ASSERT_TRUE(as_user(kHostile,
                      [&] { return ::symlink((root_ / "secret").c_str(), planted.c_str()) == 0; }));
  ASSERT_FALSE(as_user(kHostile, [&] {  // its own uid cannot reach the secret
    return ::access((planted / "m" / "token").c_str(), R_OK) == 0;
  }));
  EXPECT_EQ(replaceable_reason(planted / "m"),
            "'" + shown("shared/models") +
                "' is a symbolic link (owned by uid 4242), which root "
                "would follow");
  fs::create_directories(root_ / "shared" / "theirs");
  ASSERT_EQ(::chown((root_ / "shared" / "theirs").c_str(), kHostile, kHostile), 0);
  EXPECT_EQ(replaceable_reason(root_ / "shared" / "theirs"),
            "'" + shown("shared/theirs") + "' is owned by uid 4242 in the shared sticky '" +
                shown("shared") + "' (mode 1777), so that user can replace it");
  // A user's directory on the way: its owner can put a link where the model is.
  fs::create_directories(root_ / "home" / "u" / "models" / "m");
  ASSERT_EQ(::chown((root_ / "home" / "u").c_str(), kHostile, kHostile), 0);
  EXPECT_EQ(replaceable_reason(root_ / "home" / "u" / "models" / "m"),
            "'" + shown("home/u") + "' is owned by uid 4242 (mode 0755), who can replace '" +
                shown("home/u/models") + "'");
  ASSERT_TRUE(as_user(kHostile, [&] {
    const fs::path models = root_ / "home" / "u" / "models";
    return ::rename(models.c_str(), (models.string() + ".old").c_str()) == 0 &&
           ::symlink((root_ / "secret").c_str(), models.c_str()) == 0;
  }));
  EXPECT_EQ(replaceable_reason(root_ / "home" / "u" / "models" / "m"),
            "'" + shown("home/u") + "' is owned by uid 4242 (mode 0755), who can replace '" +
                shown("home/u/models") + "'");
  // Group- and world-writable directories without the sticky bit.
  fs::create_directories(root_ / "team" / "m");
  ASSERT_EQ(::chown((root_ / "team").c_str(), 0, kHostile), 0);
  ::chmod((root_ / "team").c_str(), 0775);
  EXPECT_EQ(replaceable_reason(root_ / "team" / "m"),
            "'" + shown("team") +
                "' is group-writable (gid 4242, mode 0775): that group can "
                "replace '" +
                shown("team/m") + "'");
  ::chmod((root_ / "team").c_str(), 0757);
  EXPECT_EQ(replaceable_reason(root_ / "team" / "m"),
            "'" + shown("team") + "' is world-writable (mode 0757): any user can replace '" +
                shown("team/m") + "'");
  // A link is never followed, even root's own to a root-only tree: podman would follow it.
  fs::create_directory_symlink(root_ / "srv" / "models", root_ / "srv" / "linked");
  EXPECT_EQ(replaceable_reason(root_ / "srv" / "linked" / "m"),
            "'" + shown("srv/linked") +
                "' is a symbolic link (owned by uid 0), which root would "
                "follow");
  // Under a node's root, the node's path is judged below it.
  EXPECT_EQ(replaceable_reason("/linked/m", root_ / "srv"),
            "'/linked' is a symbolic link (owned by uid 0), which root would follow");
  EXPECT_EQ(replaceable_reason("/models/m", root_ / "srv"), std::nullopt);
}

}  // namespace
}  // namespace gl
