#include "caches/prepare.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "caches/cache_state.hpp"
#include "temp_tree.hpp"

namespace gl {
namespace {

namespace fs = std::filesystem;
using Prepare = test::TempTree;

FingerprintInputs toolkit(const std::string& version) {
  FingerprintInputs inputs;
  inputs.toolkit_path = "/usr/local/cuda-" + version.substr(0, 4);
  inputs.toolkit_version = version;
  inputs.driver_version = "580.65.06";
  inputs.gpu_archs = {"12.0"};
  inputs.torch_version = "2.9.0+cu130";
  inputs.flashinfer_version = "0.4.1";
  inputs.triton_version = "3.5.0";
  inputs.engine = "sglang";
  inputs.engine_version = "0.5.4";
  return inputs;
}

// One compiled object in every cache of the table.
void fill_every_cache(const LaunchPlan& plan) {
  for (const auto& cache : plan.caches)
    test::TempTree::write(fs::path(cache.directory) / "kernel.so");
}

std::vector<std::string> names_with_content(const LaunchPlan& plan) {
  std::vector<std::string> names;
  for (const auto& cache : plan.caches)
    if (fs::exists(fs::path(cache.directory) / "kernel.so")) names.push_back(cache.name);
  return names;
}

TEST_F(Prepare, AChangedToolkitClearsExactlyTheCachesThatDoNotKeyThemselves) {
  const auto plan = plan_under(base / "root");
  ASSERT_TRUE(prepare_caches(plan, toolkit("12.8.93")));
  fill_every_cache(plan);

  auto report = prepare_caches(plan, toolkit("13.0.48"));
  ASSERT_TRUE(report) << report.error().message;

  EXPECT_EQ(names_with_content(plan),
            (std::vector<std::string>{"triton", "inductor", "deep-gemm", "vllm", "cuda-compute"}));
  std::vector<std::string> removed;
  for (const auto& removal : report->removals) {
    removed.push_back(fs::path(removal.what).filename().string());
    EXPECT_NE(removal.why.find("toolkit_version 12.8.93 -> 13.0.48"), std::string::npos)
        << removal.why;
  }
  EXPECT_EQ(removed,
            (std::vector<std::string>{"flashinfer", "tvm-ffi", "torch_extensions", "sglang"}));
  for (const char* name : {"flashinfer", "tvm-ffi", "torch_extensions", "sglang"})
    EXPECT_TRUE(fs::is_directory(base / "root" / name)) << "emptied, not deleted: " << name;
  auto stamp = read_stamp(base / "root");
  ASSERT_TRUE(stamp && *stamp);
  EXPECT_EQ((*stamp)->hash, fingerprint_hex(fingerprint_hash(toolkit("13.0.48"))));
}

TEST_F(Prepare, AnUnchangedFingerprintClearsNothing) {
  const auto plan = plan_under(base / "root");
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48")));
  fill_every_cache(plan);
  auto report = prepare_caches(plan, toolkit("13.0.48"));
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->removals.empty());
  EXPECT_EQ(report->change, "");
  EXPECT_EQ(names_with_content(plan).size(), plan.caches.size());
}

TEST_F(Prepare, AWarmRestartAfterAChangeDoesNotClearAgain) {
  const auto plan = plan_under(base / "root");
  ASSERT_TRUE(prepare_caches(plan, toolkit("12.8.93")));
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48")));
  fill_every_cache(plan);  // the engine compiles once under the new toolkit
  auto report = prepare_caches(plan, toolkit("13.0.48"));
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->removals.empty());
}

TEST_F(Prepare, CachesFilledBeforeAnyStampAreTreatedAsStale) {
  const auto plan = plan_under(base / "root");
  fill_every_cache(plan);  // e.g. copied from another node, or left by an older gpulaunch
  auto report = prepare_caches(plan, toolkit("13.0.48"));
  ASSERT_TRUE(report);
  EXPECT_EQ(report->removals.size(), 4u);
  EXPECT_NE(report->change.find("no fingerprint stamp"), std::string::npos);
}

TEST_F(Prepare, AKillMidClearLeavesNoStampAndTheNextStartFinishesCleaning) {
  const auto plan = plan_under(base / "root");
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48")));
  fill_every_cache(plan);
  // What a kill between "stamp removed" and "new stamp written" leaves: no stamp, one cache
  // already moved into the trash and half deleted, another not reached yet.
  fs::remove(base / "root" / kStampName);
  write(base / "root/.trash-flashinfer-0123456789ab/flashinfer/half-deleted.so");
  fs::remove(base / "root/flashinfer/kernel.so");

  auto state = inspect_caches(plan, toolkit("13.0.48"));
  ASSERT_TRUE(state);
  for (const auto& cache : state->caches)
    if (cache.name == "tvm-ffi") {
      EXPECT_EQ(cache.state, CacheState::stale);
    }

  auto report = prepare_caches(plan, toolkit("13.0.48"));  // same fingerprint as before the kill
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_FALSE(fs::exists(base / "root/.trash-flashinfer-0123456789ab"));
  ASSERT_FALSE(report->removals.empty());
  EXPECT_EQ(report->removals[0].why, "left by an interrupted clear");
  EXPECT_EQ(names_with_content(plan),
            (std::vector<std::string>{"triton", "inductor", "deep-gemm", "vllm", "cuda-compute"}));
  auto stamp = read_stamp(base / "root");
  ASSERT_TRUE(stamp && *stamp);
}

TEST_F(Prepare, ASymlinkInsideACachePointingOutsideLeavesTheOutsideFileIntact) {
  const auto plan = plan_under(base / "root");
  ASSERT_TRUE(prepare_caches(plan, toolkit("12.8.93")));
  write(base / "outside/precious", "keep me");
  write(base / "outside/dir/also", "keep me too");
  fs::create_directories(base / "root/flashinfer/deep");
  fs::create_symlink(base / "outside/precious", base / "root/flashinfer/link");
  fs::create_directory_symlink(base / "outside/dir", base / "root/flashinfer/deep/dirlink");
  auto report = prepare_caches(plan, toolkit("13.0.48"));
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->removals.size(), 1u);
  EXPECT_EQ(read(base / "outside/precious"), "keep me");
  EXPECT_EQ(read(base / "outside/dir/also"), "keep me too");
  EXPECT_TRUE(fs::is_empty(base / "root/flashinfer"));
}

TEST_F(Prepare, ACacheRootThatIsASymlinkToElsewhereIsRefusedAndTheOutsideFileStays) {
  write(base / "elsewhere/flashinfer/precious", "keep me");
  fs::create_directory_symlink(base / "elsewhere", base / "root");
  const auto plan = plan_under(base / "root");
  auto report = prepare_caches(plan, toolkit("13.0.48"));
  ASSERT_FALSE(report);
  EXPECT_NE(report.error().message.find("is a symbolic link"), std::string::npos);
  EXPECT_EQ(read(base / "elsewhere/flashinfer/precious"), "keep me");
  EXPECT_FALSE(clear_caches(plan, {}));
  EXPECT_EQ(read(base / "elsewhere/flashinfer/precious"), "keep me");
}

TEST_F(Prepare, ACacheRootOfSlashOrAHomeDirectoryIsRefused) {
  for (const char* root : {"/", "/home", "/home/alice", "/root", "/usr", "/var/cache"}) {
    auto report = prepare_caches(plan_under(root), toolkit("13.0.48"));
    EXPECT_FALSE(report) << root;
  }
}

TEST_F(Prepare, AStaleLockIsRemovedAndAHeldOneIsKept) {
  const auto plan = plan_under(base / "root");
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48")));
  const auto tmp = base / "root/flashinfer/.cache/flashinfer/0.4.1/120a/cached_ops/tmp";
  write(tmp / "stale.lock", "");
  write(tmp / "held.lock", "");
  int fd = ::open((tmp / "held.lock").c_str(), O_RDONLY);  // another open file description
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  std::vector<std::string> logged;
  auto report = prepare_caches(plan, toolkit("13.0.48"),
                               [&](const Removal& removal) { logged.push_back(removal.what); });
  ::close(fd);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_FALSE(fs::exists(tmp / "stale.lock"));
  EXPECT_TRUE(fs::exists(tmp / "held.lock"));
  EXPECT_EQ(logged, std::vector<std::string>{(tmp / "stale.lock").string()});
  ASSERT_EQ(report->removals.size(), 1u);
  EXPECT_NE(report->removals[0].why.find("no process holds it"), std::string::npos);
  EXPECT_EQ(report->held_locks, std::vector<std::string>{(tmp / "held.lock").string()});
}

TEST_F(Prepare, ACacheMovedOutsideTheRootIsEmptiedInPlaceAndConfinedToItself) {
  auto plan = plan_under(base / "root");
  plan.caches[0].directory = (base / "fast-disk/flashinfer").string();
  write(base / "outside/precious", "keep me");
  write(base / "fast-disk/sibling", "not a cache");
  write(base / "fast-disk/flashinfer/kernel.so");
  fs::create_symlink(base / "outside/precious", base / "fast-disk/flashinfer/link");
  ASSERT_TRUE(prepare_caches(plan, toolkit("12.8.93")));  // no stamp: cleared
  EXPECT_TRUE(fs::is_directory(base / "fast-disk/flashinfer"));
  EXPECT_TRUE(fs::is_empty(base / "fast-disk/flashinfer"));
  EXPECT_EQ(read(base / "outside/precious"), "keep me");
  EXPECT_EQ(read(base / "fast-disk/sibling"), "not a cache");
}

TEST_F(Prepare, ACacheDirectoryThatContainsTheRootIsRefused) {
  auto plan = plan_under(base / "root");
  plan.caches[0].directory = base.string();
  EXPECT_FALSE(prepare_caches(plan, toolkit("13.0.48")));
  plan.caches[0].directory = (base / "root").string();
  EXPECT_FALSE(prepare_caches(plan, toolkit("13.0.48")));
}

TEST_F(Prepare, ClearOnDemandEmptiesOnlyTheNamedCachesAndKeepsTheStamp) {
  const auto plan = plan_under(base / "root");
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48")));
  fill_every_cache(plan);
  auto removals = clear_caches(plan, {"triton", "flashinfer"});
  ASSERT_TRUE(removals) << removals.error().message;
  EXPECT_EQ(removals->size(), 2u);
  EXPECT_EQ(names_with_content(plan),
            (std::vector<std::string>{"tvm-ffi", "torch-extensions", "sglang", "inductor",
                                      "deep-gemm", "vllm", "cuda-compute"}));
  auto stamp = read_stamp(base / "root");
  ASSERT_TRUE(stamp && *stamp);
  EXPECT_EQ((*stamp)->hash, fingerprint_hex(fingerprint_hash(toolkit("13.0.48"))));
}

TEST_F(Prepare, ClearOnDemandRejectsAnUnknownName) {
  const auto plan = plan_under(base / "root");
  auto removals = clear_caches(plan, {"flashinfr"});
  ASSERT_FALSE(removals);
  EXPECT_NE(removals.error().message.find("did you mean 'flashinfer'"), std::string::npos)
      << removals.error().message;
}

}  // namespace
}  // namespace gl
