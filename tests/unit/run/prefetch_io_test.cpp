// SPDX-License-Identifier: Apache-2.0
#include "run/prefetch_io.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include <filesystem>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "temp_dir.hpp"

namespace gl {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

std::vector<std::string> shown(const PrefetchIo& io) {
  std::vector<std::string> names;
  for (const auto& file : io.files()) names.push_back(file.shown);
  return names;
}

TEST(PrefetchIo, ALocalDirectorysWeightFilesInOrder) {
  TempDir dir;
  dir.write("m/model-00002-of-00002.safetensors", std::string(3000, 'b'));
  dir.write("m/model-00001-of-00002.safetensors", std::string(5000, 'a'));
  dir.write("m/config.json", "{}");
  dir.write("m/tokenizer.json", "{}");
  dir.write("m/extra.bin", "xy");
  const std::string model = dir.str() + "/m";
  auto io = open_model_weights(model, std::nullopt, {});
  ASSERT_TRUE(io) << io.error().message;
  EXPECT_EQ(shown(**io), (std::vector<std::string>{model + "/extra.bin",
                                                   model + "/model-00001-of-00002.safetensors",
                                                   model + "/model-00002-of-00002.safetensors"}));
  EXPECT_EQ((*io)->files()[1].size, 5000u);
  EXPECT_TRUE((*io)->skipped().empty());
}

TEST(PrefetchIo, LinksAreFollowedOnlyInsideTheModel) {
  TempDir dir;
  dir.write("outside.safetensors", "secret");
  dir.write("m/real/shard.safetensors", "inside");
  const std::string model = dir.str() + "/m";
  fs::create_symlink("real/shard.safetensors", model + "/a.safetensors");
  fs::create_symlink("../outside.safetensors", model + "/b.safetensors");
  fs::create_symlink(dir.str() + "/outside.safetensors", model + "/c.safetensors");
  fs::create_symlink("a.safetensors", model + "/d.safetensors");  // a link to a link
  ASSERT_EQ(::mkfifo((model + "/e.safetensors").c_str(), 0600), 0);
  auto io = open_model_weights(model, std::nullopt, {});
  ASSERT_TRUE(io) << io.error().message;
  EXPECT_EQ(shown(**io), std::vector<std::string>{model + "/a.safetensors"});
  EXPECT_EQ((*io)->files()[0].size, 6u);
  const auto& skipped = (*io)->skipped();
  ASSERT_EQ(skipped.size(), 3u);
  EXPECT_EQ(skipped[0], "'" + model +
                            "/b.safetensors' links out of the model's directory "
                            "('../outside.safetensors'): not read");
  EXPECT_EQ(skipped[1], "'" + model + "/c.safetensors' links out of the model's directory ('" +
                            dir.str() + "/outside.safetensors'): not read");
  EXPECT_EQ(skipped[2],
            "Failed to open '" + model + "/d.safetensors': a link on the way is not followed");
  // The FIFO is not a weight file at all: never opened, so nothing blocks on it.
}

TEST(PrefetchIo, AHubSnapshotReadsTheBlobsItsLinksName) {
  TempDir dir;
  const std::string repo = dir.str() + "/hf/hub/models--org--model";
  dir.write("hf/hub/models--org--model/refs/main", "c0ffee\n");
  dir.write("hf/hub/models--org--model/blobs/1111", std::string(4096, 'w'));
  dir.write("hf/hub/models--org--model/snapshots/c0ffee/config.json", "{}");
  fs::create_symlink("../../blobs/1111", repo + "/snapshots/c0ffee/model.safetensors");
  auto io = open_model_weights("org/model", std::nullopt, {{"HF_HOME", dir.str() + "/hf"}});
  ASSERT_TRUE(io) << io.error().message;
  EXPECT_EQ(shown(**io), std::vector<std::string>{repo + "/snapshots/c0ffee/model.safetensors"});
  EXPECT_EQ((*io)->files()[0].size, 4096u);
  // The snapshot directory itself as model.path: its links into blobs/ are the model's too.
  auto local = open_model_weights(repo + "/snapshots/c0ffee", std::nullopt, {});
  ASSERT_TRUE(local) << local.error().message;
  EXPECT_EQ((*local)->files().size(), 1u);
  // A pinned commit is its own snapshot.
  auto pinned =
      open_model_weights("org/model", "c0ffee", {{"HF_HUB_CACHE", dir.str() + "/hf/hub"}});
  ASSERT_TRUE(pinned) << pinned.error().message;
}

TEST(PrefetchIo, AHubIdNotDownloadedSaysWhatToRun) {
  TempDir dir;
  auto io = open_model_weights("org/model", "v2", {{"XDG_CACHE_HOME", dir.str()}});
  ASSERT_FALSE(io);
  const std::string hub = dir.str() + "/huggingface/hub";
  EXPECT_EQ(io.error().message,
            "Model 'org/model' is not downloaded yet: '" + hub +
                "/models--org--model' has no snapshot of revision 'v2'. Download it first as "
                "the service user: HF_HUB_CACHE='" +
                hub + "' hf download org/model --revision v2");
  // A revision that climbs out of the repo folder is no snapshot either.
  dir.write("huggingface/hub/models--org--model/refs/main", "../../../x");
  EXPECT_FALSE(open_model_weights("org/model", std::nullopt, {{"XDG_CACHE_HOME", dir.str()}}));
}

TEST(PrefetchIo, AMissingLocalModelIsNotLocalYet) {
  TempDir dir;
  auto io = open_model_weights(dir.str() + "/absent", std::nullopt, {});
  ASSERT_FALSE(io);
  EXPECT_TRUE(io.error().message.starts_with("Model '" + dir.str() + "/absent' is not local yet"))
      << io.error().message;
}

TEST(PrefetchIo, AModelFileIsItsOwnWeights) {
  TempDir dir;
  dir.write("q4.gguf", std::string(100, 'g'));
  auto io = open_model_weights(dir.str() + "/q4.gguf", std::nullopt, {});
  ASSERT_TRUE(io) << io.error().message;
  EXPECT_EQ(shown(**io), std::vector<std::string>{dir.str() + "/q4.gguf"});
}

TEST(PrefetchIo, ReadingMakesAFileResident) {
  TempDir dir;
  const uint64_t size = 4 << 20;
  auto path = dir.write("m/w.safetensors", std::string(size, 'r'));
  {
    // Out of the page cache: written back first, then dropped (ext4 and xfs honour it).
    const int fd = ::open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
  auto io = open_model_weights(dir.str() + "/m", std::nullopt, {});
  ASSERT_TRUE(io) << io.error().message;
  auto before = (*io)->resident_bytes(0);
  ASSERT_TRUE(before) << before.error().message;
  if (*before == size) GTEST_SKIP() << "this filesystem keeps files in memory (tmpfs)";
  ASSERT_TRUE((*io)->read_range(0, 0, size));
  auto after = (*io)->resident_bytes(0);
  ASSERT_TRUE(after);
  EXPECT_EQ(*after, size);
  EXPECT_FALSE((*io)->read_range(0, size - 10, 20)) << "past the end is an error";
  EXPECT_GT((*io)->memory_available().value_or(0), 0u);
}

TEST(PrefetchIo, ThousandsOfFilesKeepOneDescriptor) {
  TempDir dir;
  constexpr int kFiles = 1000;
  for (int i = 0; i < kFiles; ++i) dir.write(fmt::format("m/{:05}.safetensors", i), "w");
  // Far fewer descriptors than files: one kept open per file would run out.
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
  rlimit tight = before;
  tight.rlim_cur = 64;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &tight), 0);
  auto io = open_model_weights(dir.str() + "/m", std::nullopt, {});
  bool all_read = io.has_value();
  if (io)
    for (size_t i = 0; i < (*io)->files().size(); ++i)
      all_read = all_read && (*io)->read_range(i, 0, 1);
  ::setrlimit(RLIMIT_NOFILE, &before);
  ASSERT_TRUE(io) << io.error().message;
  EXPECT_EQ((*io)->files().size(), static_cast<size_t>(kFiles));
  EXPECT_TRUE((*io)->skipped().empty()) << (*io)->skipped().front();
  EXPECT_TRUE(all_read);
}

TEST(PrefetchIo, AFileReplacedAfterListingIsNotRead) {
  TempDir dir;
  dir.write("m/w.safetensors", "listed");
  auto io = open_model_weights(dir.str() + "/m", std::nullopt, {});
  ASSERT_TRUE(io) << io.error().message;
  dir.write("m/other", "swapped");
  fs::rename(dir.path() / "m/other", dir.path() / "m/w.safetensors");
  auto read = (*io)->read_range(0, 0, 1);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message, "Failed to read '" + dir.str() +
                                      "/m/w.safetensors': it was replaced since it was listed");
}

TEST(PrefetchIo, AFileOnAnotherFilesystemInsideTheModelIsSkipped) {
  // A mount inside the model (a user's FUSE mount could block root's read forever): made in a
  // private mount namespace of a child, which reports back through a pipe.
  TempDir dir;
  dir.write("m/b.safetensors", "here");
  fs::create_directories(dir.path() / "m/sub");
  const std::string model = dir.str() + "/m";
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(report[0]);
    const int flags = ::geteuid() == 0 ? CLONE_NEWNS : CLONE_NEWUSER | CLONE_NEWNS;
    if (::unshare(flags) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("gl-test", (model + "/sub").c_str(), "tmpfs", 0, nullptr) != 0)
      ::_exit(2);
    std::ofstream(model + "/sub/w.safetensors") << "mounted";
    if (::symlink("sub/w.safetensors", (model + "/a.safetensors").c_str()) != 0) ::_exit(2);
    std::string text;
    if (auto io = open_model_weights(model, std::nullopt, {})) {
      for (const auto& file : (*io)->files()) text += "file " + file.shown + "\n";
      for (const auto& line : (*io)->skipped()) text += "skipped " + line + "\n";
    } else {
      text = "error " + io.error().message + "\n";
    }
    (void)!::write(report[1], text.data(), text.size());
    ::_exit(0);
  }
  ::close(report[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t got; (got = ::read(report[0], buffer, sizeof buffer)) > 0;) text.append(buffer, got);
  ::close(report[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 2) GTEST_SKIP() << "no mount namespace can be made here";
  EXPECT_EQ(text, "file " + model + "/b.safetensors\nskipped '" + model +
                      "/a.safetensors' is on another filesystem than the model's directory: "
                      "not read\n");
}

TEST(PrefetchIo, TheHubCacheIsWhereHuggingfaceHubLooks) {
  EXPECT_EQ(hub_cache_directory({{"HOME", "/h"}}), "/h/.cache/huggingface/hub");
  EXPECT_EQ(hub_cache_directory({{"HOME", "/h"}, {"XDG_CACHE_HOME", "/x"}}), "/x/huggingface/hub");
  EXPECT_EQ(hub_cache_directory({{"XDG_CACHE_HOME", "/x"}, {"HF_HOME", "/hf"}}), "/hf/hub");
  EXPECT_EQ(hub_cache_directory({{"HF_HOME", "/hf"}, {"HUGGINGFACE_HUB_CACHE", "/old"}}), "/old");
  EXPECT_EQ(hub_cache_directory({{"HUGGINGFACE_HUB_CACHE", "/old"}, {"HF_HUB_CACHE", "/new"}}),
            "/new");
  EXPECT_EQ(hub_cache_directory({}), std::nullopt);
  EXPECT_EQ(hub_repo_folder("moonshotai/Kimi-K2.6"), "models--moonshotai--Kimi-K2.6");
}

}  // namespace
}  // namespace gl
