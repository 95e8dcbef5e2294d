// SPDX-License-Identifier: Apache-2.0
// `gpulaunch cache`, `cache clear` and the hidden `prepare-caches` as root runs them, on temp
// roots: the cache root from the profile, root's records under --state-root.

#include <sys/stat.h>
#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/listener.hpp"
#include "util/process.hpp"

namespace gl::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct CliRun {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

class CacheCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: root's records must be root-owned";
    std::string pattern = (fs::temp_directory_path() / "gl-cache-cli-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    base_ = pattern;
    fs::create_directories(base_ / "profiles");
    fs::create_directories(base_ / "state");
  }
  void TearDown() override {
    std::error_code ignored;
    if (!base_.empty()) fs::remove_all(base_, ignored);
  }

  // A profile named k26 whose caches live under base_/cache, plus `extra` TOML.
  fs::path profile(const std::string& extra = "") {
    const fs::path file = base_ / "profiles/k26.toml";
    std::ofstream(file) << "[engine]\nkind = \"sglang\"\nvenv = \"/opt/venv\"\n[model]\npath = "
                           "\"/models/m\"\n[caches]\nroot = \""
                        << (base_ / "cache").string() << "\"\n"
                        << extra;
    return file;
  }

  CliRun gpulaunch(std::vector<std::string> args) {
    std::vector<std::string> argv{"-c", "exec \"$0\" \"$@\" 2>&1", GPULAUNCH_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    auto result = run_process("/bin/sh", argv, std::chrono::seconds(60));
    EXPECT_TRUE(result) << (result ? "" : result.error().message);
    return result ? CliRun{result->exit_code, result->out} : CliRun{};
  }

  CliRun clear() {
    return gpulaunch({"cache", "clear", profile_path_.string(), "--state-root", state()});
  }
  CliRun prepare() {
    return gpulaunch({"prepare-caches", "--profile=k26", "--snapshot=" + profile_path_.string(),
                      "--state-root=" + state()});
  }

  std::string state() const { return (base_ / "state").string(); }
  fs::path records() const { return base_ / "state/k26/caches"; }

  static std::string read(const fs::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // Every regular file below `directory`, links not followed.
  static std::string all_content(const fs::path& directory) {
    std::string content;
    std::error_code ignored;
    for (auto it = fs::recursive_directory_iterator(directory, ignored);
         it != fs::recursive_directory_iterator(); ++it)
      if (it->is_regular_file() && !it->is_symlink()) content += read(it->path());
    return content;
  }

  void write_secret() {
    std::ofstream(base_ / "secret") << "ROOT-ONLY-SECRET";
    fs::permissions(base_ / "secret", fs::perms::owner_read | fs::perms::owner_write);
  }

  fs::path base_;
  fs::path profile_path_;
};

TEST_F(CacheCli, PrepareCreatesTheCachesAndStampsThemInRootsRecords) {
  profile_path_ = profile();
  auto run = prepare();
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("gpulaunch: JIT caches were stale: no fingerprint stamp"));
  EXPECT_TRUE(fs::is_directory(base_ / "cache/flashinfer"));
  EXPECT_THAT(read(records() / "fingerprint"),
              HasSubstr("# gpulaunch cache fingerprint v2\nroot=" + (base_ / "cache").string()));
  EXPECT_FALSE(fs::exists(base_ / "cache/.gpulaunch-fingerprint"));
  auto again = prepare();
  EXPECT_EQ(again.exit_code, 0) << again.out;
  EXPECT_THAT(again.out, HasSubstr("gpulaunch: JIT caches current (fingerprint "));
  auto list = gpulaunch({"cache", profile_path_.string(), "--state-root", state()});
  EXPECT_EQ(list.exit_code, 0) << list.out;
  EXPECT_THAT(list.out, HasSubstr("(stamped)\n"));
  // Which facts make a cache stale, from its row: TileLang's kernels the toolkit and the GPUs.
  auto row = list.out.find("\ntilelang ");
  ASSERT_NE(row, std::string::npos) << list.out;
  const std::string line = list.out.substr(row + 1, list.out.find('\n', row + 1) - row - 1);
  EXPECT_TRUE(line.ends_with("  no (stale on toolkit_path, toolkit_version, gpu_archs)")) << line;
}

TEST_F(CacheCli, AStampThatIsASymlinkToARootOnlyFileIsNeverReadIntoAStamp) {
  // An explicit user that exists on every node: no profile user to create, so the refusal is all
  // prepare-caches says.
  profile_path_ = profile("[service]\nuser = \"root\"\n");
  write_secret();
  ASSERT_EQ(prepare().exit_code, 0);
  fs::remove(records() / "fingerprint");
  fs::create_symlink(base_ / "secret", records() / "fingerprint");
  // The old place, where the engine could plant it, too.
  fs::create_symlink(base_ / "secret", base_ / "cache/.gpulaunch-fingerprint");

  auto run = prepare();
  EXPECT_EQ(run.exit_code, 78) << run.out;
  EXPECT_EQ(run.out, "gpulaunch: Refusing to read '" + (records() / "fingerprint").string() +
                         "': it is a symbolic link\n");
  auto cleared = clear();
  EXPECT_EQ(cleared.exit_code, 0) << cleared.out;
  EXPECT_FALSE(fs::exists(fs::symlink_status(base_ / "cache/.gpulaunch-fingerprint")));
  EXPECT_EQ(read(base_ / "secret"), "ROOT-ONLY-SECRET");
  EXPECT_THAT(all_content(base_ / "state"), ::testing::Not(HasSubstr("ROOT-ONLY-SECRET")));
  EXPECT_THAT(all_content(base_ / "cache"), ::testing::Not(HasSubstr("ROOT-ONLY-SECRET")));
  struct stat info {};
  ASSERT_EQ(::lstat((records() / "fingerprint").c_str(), &info), 0);
  EXPECT_TRUE(S_ISLNK(info.st_mode)) << "left as it was, never written through";
}

TEST_F(CacheCli, AnOverrideIntoVarLibDpkgIsRefused) {
  profile_path_ = profile("[caches.paths]\nflashinfer = \"/var/lib/dpkg\"\n");
  const std::string expected = profile_path_.string() +
                               ":9:14: 'caches.paths.flashinfer' must not be '/var/lib/dpkg': it "
                               "is in the system directory '/var/lib'\n";
  auto run = clear();
  EXPECT_EQ(run.exit_code, 2);  // a profile that does not load: the command could not run
  EXPECT_EQ(run.out, expected);
  auto start = prepare();
  EXPECT_EQ(start.exit_code, 78);
  EXPECT_EQ(start.out, "gpulaunch: " + expected);
  EXPECT_FALSE(fs::exists(base_ / "cache"));
}

TEST_F(CacheCli, AForeignDirectoryOverrideIsRefusedAndKept) {
  fs::create_directories(base_ / "data");
  std::ofstream(base_ / "data/thesis.tex") << "years of work";
  profile_path_ = profile("[caches.paths]\nflashinfer = \"" + (base_ / "data").string() + "\"\n");
  auto start = prepare();
  EXPECT_EQ(start.exit_code, 78) << start.out;
  EXPECT_THAT(start.out, HasSubstr("gpulaunch: Refusing to use cache directory '" +
                                   (base_ / "data").string() + "' (caches.paths.flashinfer)"));
  auto run = clear();
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.out, HasSubstr("gpulaunch did not create it"));
  EXPECT_EQ(read(base_ / "data/thesis.tex"), "years of work");
  auto list = gpulaunch({"cache", profile_path_.string(), "--state-root", state()});
  EXPECT_EQ(list.exit_code, 0) << list.out;
  EXPECT_THAT(list.out, HasSubstr("  foreign  no\n"));
}

TEST_F(CacheCli, APlantedSymlinkInTheCacheRootIsNotFollowedByClear) {
  profile_path_ = profile();
  ASSERT_EQ(prepare().exit_code, 0);
  fs::create_directories(base_ / "outside/dir");
  std::ofstream(base_ / "outside/precious") << "keep me";
  std::ofstream(base_ / "outside/dir/also") << "keep me too";
  std::ofstream(base_ / "cache/triton/kernel.so") << "compiled";
  fs::create_symlink(base_ / "outside/precious", base_ / "cache/flashinfer/link");
  fs::remove(base_ / "cache/tvm-ffi");
  fs::create_directory_symlink(base_ / "outside/dir", base_ / "cache/tvm-ffi");
  auto run = clear();
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("removed " + (base_ / "cache/triton").string()));
  EXPECT_EQ(read(base_ / "outside/precious"), "keep me");
  EXPECT_EQ(read(base_ / "outside/dir/also"), "keep me too");
  EXPECT_FALSE(fs::exists(fs::symlink_status(base_ / "cache/flashinfer/link")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(base_ / "cache/tvm-ffi")));
  EXPECT_FALSE(fs::exists(base_ / "cache/triton/kernel.so"));
}

// `cache NAME --json`, what `up --all-nodes` compares between ranks: each cache's fingerprint and
// content digest, a link planted in a cache neither followed nor counted.
TEST_F(CacheCli, JsonDigestsEachCacheWithoutFollowingLinks) {
  profile_path_ = profile();
  write_secret();
  ASSERT_EQ(prepare().exit_code, 0);
  std::ofstream(base_ / "cache/flashinfer/k.so") << "kernel";
  auto digests = [&] {
    auto run = gpulaunch({"cache", profile_path_.string(), "--json", "--state-root", state()});
    EXPECT_EQ(run.exit_code, 0) << run.out;
    EXPECT_THAT(run.out, ::testing::Not(HasSubstr("ROOT-ONLY-SECRET")));
    return nlohmann::json::parse(run.out, nullptr, false);
  };
  const auto before = digests();
  ASSERT_FALSE(before.is_discarded());
  EXPECT_EQ(before["caches"]["flashinfer"]["files"], 1);
  EXPECT_EQ(before["caches"]["flashinfer"]["bytes"], 6);
  EXPECT_EQ(before["caches"]["triton"]["files"], 0);
  fs::create_symlink(base_ / "secret", base_ / "cache/flashinfer/link.so");
  EXPECT_EQ(digests()["caches"]["flashinfer"], before["caches"]["flashinfer"]);
  std::ofstream(base_ / "cache/flashinfer/k.so") << "kernel, rebuilt";
  EXPECT_NE(digests()["caches"]["flashinfer"]["digest"], before["caches"]["flashinfer"]["digest"]);
}

// The hidden `rendezvous-probe` one rank runs: its one line names what stopped it.
TEST_F(CacheCli, RendezvousProbeNamesARefusalAndAPortInUse) {
  test::Listener other;  // something that is not the probe holds the port
  const auto port = std::to_string(other.port());
  profile_path_ = profile(
      "[parallelism]\ntp = 2\n[nodes]\nhosts = [\"127.0.0.1\", "
      "\"127.0.0.2\"]\ndist_init_port = " +
      port + "\n");
  auto rank0 = gpulaunch(
      {"rendezvous-probe", profile_path_.string(), "--node-rank", "0", "--within", "0.5"});
  EXPECT_EQ(rank0.exit_code, 1);
  EXPECT_EQ(rank0.out, "port " + port + " is in use on this node: something else listens there\n");
  auto rank1 = gpulaunch(
      {"rendezvous-probe", profile_path_.string(), "--node-rank", "1", "--within", "0.5"});
  EXPECT_EQ(rank1.exit_code, 1);
  EXPECT_EQ(rank1.out, "cannot reach 127.0.0.1:" + port +
                           ": something else answers (connected, but no gpulaunch probe "
                           "greeted it)\n");
}

}  // namespace
}  // namespace gl::test
