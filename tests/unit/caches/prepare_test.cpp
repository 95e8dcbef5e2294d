// SPDX-License-Identifier: Apache-2.0
#include "caches/prepare.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <sstream>

#include "caches/cache_state.hpp"
#include "temp_tree.hpp"

namespace gl {
namespace {

namespace fs = std::filesystem;
using Prepare = test::RootTree;

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
  ASSERT_TRUE(prepare_caches(plan, toolkit("12.8.93"), options()));
  fill_every_cache(plan);

  auto report = prepare_caches(plan, toolkit("13.0.48"), options());
  ASSERT_TRUE(report) << report.error().message;

  // FlashInfer's downloaded cubins do not depend on the toolkit; TileLang's kernels do.
  EXPECT_EQ(names_with_content(plan),
            (std::vector<std::string>{"triton", "triton-home", "inductor", "deep-gemm", "vllm",
                                      "cuda-compute"}));
  std::vector<std::string> removed;
  for (const auto& removal : report->removals) {
    removed.push_back(fs::path(removal.what).filename().string());
    EXPECT_NE(removal.why.find("toolkit_version 12.8.93 -> 13.0.48"), std::string::npos)
        << removal.why;
  }
  // The CuTe DSL's keying was not read: cleared as a cache that does not key itself.
  EXPECT_EQ(removed, (std::vector<std::string>{"flashinfer", "tvm-ffi", "torch_extensions",
                                               "sglang", "tilelang", "cute_dsl"}));
  for (const char* name :
       {"flashinfer", "tvm-ffi", "torch_extensions", "sglang", "tilelang", "cute_dsl"})
    EXPECT_TRUE(fs::is_directory(base / "root" / name)) << "emptied, not deleted: " << name;
  auto stamp = this->stamp();
  ASSERT_TRUE(stamp);
  EXPECT_EQ(stamp->hash, fingerprint_hex(fingerprint_hash(toolkit("13.0.48"))));
}

uid_t owner_of(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
  return info.st_uid;
}

// The profile's user changed (an upgrade from a shared user to its own): what the old uid owned
// goes to the new one before the start, the kernels stay, and it is reported at that start only.
TEST_F(Prepare, ANewServiceUserGetsTheCachesOnceWithoutARecompile) {
  const auto plan = plan_under(base / "root");
  constexpr uid_t kOld = 4242;
  const DirectoryOwner old_owner{kOld, kOld};
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48"), PrepareOptions{records(), old_owner}));
  fill_every_cache(plan);
  const fs::path kernel = fs::path(plan.caches.front().directory) / "kernel.so";
  ASSERT_EQ(::chown(kernel.c_str(), kOld, kOld), 0);
  // Not the old user's (root made it): stays. A second name of a file: stays too.
  const fs::path roots = base / "root" / "roots-file";
  test::TempTree::write(roots);
  const fs::path linked = base / "root" / "linked";
  ASSERT_EQ(::link(kernel.c_str(), linked.c_str()), 0);
  ASSERT_EQ(::symlink("/etc/passwd", (base / "root" / "link").c_str()), 0);
  ASSERT_EQ(::lchown((base / "root" / "link").c_str(), kOld, kOld), 0);

  const DirectoryOwner mine{::geteuid(), ::getegid()};
  auto report = prepare_caches(plan, toolkit("13.0.48"), PrepareOptions{records(), mine});
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_TRUE(report->owner_change);
  EXPECT_EQ(report->owner_change->from, kOld);
  EXPECT_EQ(report->owner_change->to.uid, mine.uid);
  EXPECT_TRUE(report->removals.empty());  // the user is no fingerprint input: nothing recompiles
  EXPECT_EQ(report->change, "");
  EXPECT_EQ(names_with_content(plan).size(), plan.caches.size());
  EXPECT_EQ(owner_of(base / "root"), mine.uid);
  EXPECT_EQ(owner_of(plan.caches.front().directory), mine.uid);
  EXPECT_EQ(owner_of(kernel), kOld) << "two names: a hard link could be a file elsewhere";
  EXPECT_EQ(owner_of(base / "root" / "link"), mine.uid);  // the link itself
  EXPECT_EQ(owner_of("/etc/passwd"), 0u);                 // never its target
  EXPECT_EQ(owner_of(roots), 0u);

  report = prepare_caches(plan, toolkit("13.0.48"), PrepareOptions{records(), mine});
  ASSERT_TRUE(report);
  EXPECT_FALSE(report->owner_change) << "said once";
}

TEST_F(Prepare, AnUnchangedFingerprintClearsNothing) {
  const auto plan = plan_under(base / "root");
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48"), options()));
  fill_every_cache(plan);
  auto report = prepare_caches(plan, toolkit("13.0.48"), options());
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->removals.empty());
  EXPECT_EQ(report->change, "");
  EXPECT_EQ(names_with_content(plan).size(), plan.caches.size());
}

TEST_F(Prepare, AWarmRestartAfterAChangeDoesNotClearAgain) {
  const auto plan = plan_under(base / "root");
  ASSERT_TRUE(prepare_caches(plan, toolkit("12.8.93"), options()));
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48"), options()));
  fill_every_cache(plan);  // the engine compiles once under the new toolkit
  auto report = prepare_caches(plan, toolkit("13.0.48"), options());
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->removals.empty());
}

TEST_F(Prepare, CachesFilledBeforeAnyStampAreTreatedAsStale) {
  const auto plan = plan_under(base / "root");
  fill_every_cache(plan);  // e.g. copied from another node, or left by an older gpulaunch
  auto report = prepare_caches(plan, toolkit("13.0.48"), options());
  ASSERT_TRUE(report);
  EXPECT_EQ(report->removals.size(), 6u);  // the five that do not key themselves, and CuTe DSL's
  EXPECT_NE(report->change.find("no fingerprint stamp"), std::string::npos);
}

TEST_F(Prepare, TileLangsKernelsAreClearedOnlyForTheFactsTheyDependOn) {
  const auto plan = plan_under(base / "root");
  auto inputs = toolkit("13.0.48");
  ASSERT_TRUE(prepare_caches(plan, inputs, options()));
  fill_every_cache(plan);
  inputs.driver_version = "580.95.05";  // nothing TileLang's kernels depend on
  auto report = prepare_caches(plan, inputs, options());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(fs::exists(base / "root/tilelang/kernel.so"));
  EXPECT_FALSE(fs::exists(base / "root/flashinfer/kernel.so"));  // keyed on nothing

  fill_every_cache(plan);
  inputs.flashinfer_version = "0.6.18";
  report = prepare_caches(plan, inputs, options());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(fs::exists(base / "root/tilelang/kernel.so"));
  EXPECT_FALSE(fs::exists(base / "root/flashinfer/kernel.so"));
}

TEST_F(Prepare, AStaleLockBesideADownloadedCubinIsRemoved) {
  const auto plan = plan_under(base / "root");
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48"), options()));
  // flashinfer/jit/cubin_loader.py, download_file: "<destination>.lock" beside the file.
  const auto dir = base /
                   "root/flashinfer/.cache/flashinfer/cubins/"
                   "ce0795149bb2a183db22de04a3fec3aca65fff04/fmha";
  write(dir / "trtllm-gen/kernel.cubin", "cubin");
  write(dir / "trtllm-gen/kernel.cubin.lock", "");
  auto report = prepare_caches(plan, toolkit("13.0.48"), options());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_FALSE(fs::exists(dir / "trtllm-gen/kernel.cubin.lock"));
  EXPECT_EQ(read(dir / "trtllm-gen/kernel.cubin"), "cubin");
}

TEST_F(Prepare, AKillMidClearLeavesNoStampAndTheNextStartFinishesCleaning) {
  const auto plan = plan_under(base / "root");
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48"), options()));
  fill_every_cache(plan);
  // What a kill between "stamp removed" and "new stamp written" leaves: no stamp, one cache
  // already moved into the trash and half deleted, another not reached yet.
  fs::remove(records() / "fingerprint");
  write(base / "root/.trash-flashinfer-0123456789ab/flashinfer/half-deleted.so");
  fs::remove(base / "root/flashinfer/kernel.so");

  auto state = inspect_caches(plan, toolkit("13.0.48"), records());
  ASSERT_TRUE(state);
  for (const auto& cache : state->caches)
    if (cache.name == "tvm-ffi") {
      EXPECT_EQ(cache.state, CacheState::stale);
    }

  auto report =
      prepare_caches(plan, toolkit("13.0.48"), options());  // same fingerprint as before the kill
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_FALSE(fs::exists(base / "root/.trash-flashinfer-0123456789ab"));
  ASSERT_FALSE(report->removals.empty());
  EXPECT_EQ(report->removals[0].why, "left by an interrupted clear");
  // FlashInfer's downloaded cubins do not depend on the toolkit; TileLang's kernels do.
  EXPECT_EQ(names_with_content(plan),
            (std::vector<std::string>{"triton", "triton-home", "inductor", "deep-gemm", "vllm",
                                      "cuda-compute"}));
  EXPECT_TRUE(stamp());
}

TEST_F(Prepare, ASymlinkInsideACachePointingOutsideLeavesTheOutsideFileIntact) {
  const auto plan = plan_under(base / "root");
  ASSERT_TRUE(prepare_caches(plan, toolkit("12.8.93"), options()));
  write(base / "outside/precious", "keep me");
  write(base / "outside/dir/also", "keep me too");
  fs::create_directories(base / "root/flashinfer/deep");
  fs::create_symlink(base / "outside/precious", base / "root/flashinfer/link");
  fs::create_directory_symlink(base / "outside/dir", base / "root/flashinfer/deep/dirlink");
  auto report = prepare_caches(plan, toolkit("13.0.48"), options());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->removals.size(), 1u);
  EXPECT_EQ(read(base / "outside/precious"), "keep me");
  EXPECT_EQ(read(base / "outside/dir/also"), "keep me too");
  EXPECT_TRUE(fs::is_empty(base / "root/flashinfer"));
}

TEST_F(Prepare, ASymlinkPlantedAsACacheDirectoryIsNeitherFollowedNorAnError) {
  const auto plan = plan_under(base / "root");
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48"), options()));
  write(base / "outside/cached_ops/tmp/stale.lock", "");
  write(base / "outside/.trash-x-0123456789ab/precious", "keep me");
  fs::remove(base / "root/flashinfer");
  fs::create_directory_symlink(base / "outside", base / "root/flashinfer");
  auto same = prepare_caches(plan, toolkit("13.0.48"), options());
  ASSERT_TRUE(same) << same.error().message;
  EXPECT_TRUE(same->removals.empty());
  EXPECT_TRUE(fs::exists(base / "outside/cached_ops/tmp/stale.lock"));
  EXPECT_EQ(read(base / "outside/.trash-x-0123456789ab/precious"), "keep me");
  auto changed = prepare_caches(plan, toolkit("12.8.93"), options());
  ASSERT_TRUE(changed) << changed.error().message;
  // The link removed (a link, not its target) and a real cache directory made in its place.
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(base / "root/flashinfer")));
  EXPECT_EQ(read(base / "outside/.trash-x-0123456789ab/precious"), "keep me");
}

TEST_F(Prepare, ACacheRootThatIsASymlinkToElsewhereIsRefusedAndTheOutsideFileStays) {
  write(base / "elsewhere/flashinfer/precious", "keep me");
  fs::create_directory_symlink(base / "elsewhere", base / "root");
  const auto plan = plan_under(base / "root");
  auto report = prepare_caches(plan, toolkit("13.0.48"), options());
  ASSERT_FALSE(report);
  EXPECT_NE(report.error().message.find("is a symbolic link"), std::string::npos);
  EXPECT_EQ(read(base / "elsewhere/flashinfer/precious"), "keep me");
  EXPECT_FALSE(clear_caches(plan, {}, records()));
  EXPECT_EQ(read(base / "elsewhere/flashinfer/precious"), "keep me");
}

TEST_F(Prepare, ACacheRootOfSlashOrAHomeDirectoryIsRefused) {
  for (const char* root : {"/", "/home", "/home/alice", "/root", "/usr", "/var/cache"}) {
    auto report = prepare_caches(plan_under(root), toolkit("13.0.48"), options());
    EXPECT_FALSE(report) << root;
  }
}

TEST_F(Prepare, AStaleLockIsRemovedAndAHeldOneIsKept) {
  const auto plan = plan_under(base / "root");
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48"), options()));
  const auto tmp = base / "root/flashinfer/.cache/flashinfer/0.4.1/120a/cached_ops/tmp";
  write(tmp / "stale.lock", "");
  write(tmp / "held.lock", "");
  int fd = ::open((tmp / "held.lock").c_str(), O_RDONLY);  // another open file description
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  std::vector<std::string> logged;
  auto report = prepare_caches(plan, toolkit("13.0.48"), options(),
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

TEST_F(Prepare, ACacheMovedOutsideTheRootIsCreatedRecordedThenEmptiedInPlaceAndConfined) {
  auto plan = plan_under(base / "root");
  plan.caches[0].directory = (base / "fast-disk/flashinfer").string();
  write(base / "outside/precious", "keep me");
  write(base / "fast-disk/sibling", "not a cache");
  ASSERT_TRUE(prepare_caches(plan, toolkit("12.8.93"), options()));  // creates and records it
  ASSERT_TRUE(fs::is_directory(base / "fast-disk/flashinfer"));
  EXPECT_NE(read(records() / "created-directories").find(" " + plan.caches[0].directory + "\n"),
            std::string::npos);
  write(base / "fast-disk/flashinfer/kernel.so");
  fs::create_symlink(base / "outside/precious", base / "fast-disk/flashinfer/link");
  auto report = prepare_caches(plan, toolkit("13.0.48"), options());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(fs::is_directory(base / "fast-disk/flashinfer"));
  EXPECT_TRUE(fs::is_empty(base / "fast-disk/flashinfer"));
  EXPECT_EQ(read(base / "outside/precious"), "keep me");
  EXPECT_EQ(read(base / "fast-disk/sibling"), "not a cache");
}

TEST_F(Prepare, AnExistingDirectoryGpulaunchDidNotCreateOutsideTheRootIsRefusedAndNeverEmptied) {
  auto plan = plan_under(base / "root");
  plan.caches[0].directory = (base / "data").string();  // someone's data, not a cache
  write(base / "data/thesis.tex", "years of work");
  auto report = prepare_caches(plan, toolkit("13.0.48"), options());
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().message,
            "Refusing to use cache directory '" + (base / "data").string() +
                "' (caches.paths.flashinfer): gpulaunch did not create it and it is not under the "
                "cache root '" +
                (base / "root").string() +
                "'; remove it so gpulaunch creates its own, or point caches.paths.flashinfer "
                "under the cache root");
  EXPECT_FALSE(fs::exists(base / "root")) << "refused before anything changed";
  auto removals = clear_caches(plan, {}, records());
  ASSERT_FALSE(removals);
  EXPECT_EQ(removals.error().message, report.error().message);
  EXPECT_EQ(read(base / "data/thesis.tex"), "years of work");
  auto state = inspect_caches(plan, toolkit("13.0.48"), records());
  ASSERT_TRUE(state) << state.error().message;
  EXPECT_EQ(state->caches[0].state, CacheState::foreign);
}

TEST_F(Prepare, ADirectorySwappedInWhereGpulaunchCreatedOneIsNotCleared) {
  auto plan = plan_under(base / "root");
  plan.caches[0].directory = (base / "fast-disk/flashinfer").string();
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48"), options()));
  // The recorded directory goes; another (the same path, another inode) takes its place.
  fs::rename(base / "fast-disk/flashinfer", base / "fast-disk/moved");
  write(base / "fast-disk/flashinfer/precious", "keep me");
  EXPECT_FALSE(clear_caches(plan, {"flashinfer"}, records()));
  EXPECT_FALSE(prepare_caches(plan, toolkit("12.8.93"), options()));
  EXPECT_EQ(read(base / "fast-disk/flashinfer/precious"), "keep me");
}

// ext4 hands a freed inode number to the next file made: a directory someone makes at the path
// after gpulaunch's went may carry the recorded device and inode. Its birth time tells it apart.
// The reuse is staged: the record is rewritten to name the new directory's inode.
TEST_F(Prepare, ADirectoryThatGotTheRecordedInodeBackIsNotCleared) {
  auto plan = plan_under(base / "root");
  plan.caches[0].directory = (base / "fast-disk/flashinfer").string();
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48"), options()));
  const std::string recorded = read(records() / "created-directories");
  const std::string path = " " + plan.caches[0].directory + "\n";
  const auto line_end = recorded.find(path);
  ASSERT_NE(line_end, std::string::npos) << recorded;
  const auto line_start = recorded.rfind('\n', line_end) + 1;
  std::istringstream fields(recorded.substr(line_start, line_end - line_start));
  std::string device, inode, birth;
  fields >> device >> inode >> birth;
  if (birth == "0") GTEST_SKIP() << "this filesystem keeps no birth times (statx STATX_BTIME)";
  fs::remove(base / "fast-disk/flashinfer");
  write(base / "fast-disk/flashinfer/precious", "keep me");
  struct statx info {};
  ASSERT_EQ(::statx(AT_FDCWD, (base / "fast-disk/flashinfer").c_str(), AT_SYMLINK_NOFOLLOW,
                    STATX_INO | STATX_BTIME, &info),
            0);
  ASSERT_EQ(std::to_string(::makedev(info.stx_dev_major, info.stx_dev_minor)), device);
  // Birth times have nanoseconds, but the kernel's coarse clock may give both directories one:
  // the record then names the nanosecond before, as a directory made a moment earlier would.
  const long long new_birth = info.stx_btime.tv_sec * 1'000'000'000LL + info.stx_btime.tv_nsec;
  const std::string recorded_birth =
      new_birth == std::stoll(birth) ? std::to_string(new_birth - 1) : birth;
  write(records() / "created-directories", recorded.substr(0, line_start) + device + " " +
                                               std::to_string(info.stx_ino) + " " + recorded_birth +
                                               path + recorded.substr(line_end + path.size()));
  auto report = prepare_caches(plan, toolkit("12.8.93"), options());
  ASSERT_FALSE(report) << read(records() / "created-directories");
  EXPECT_NE(report.error().message.find("gpulaunch did not create it"), std::string::npos)
      << report.error().message;
  EXPECT_FALSE(clear_caches(plan, {"flashinfer"}, records()));
  EXPECT_EQ(read(base / "fast-disk/flashinfer/precious"), "keep me");
}

TEST_F(Prepare, CreatesMissingCachesForTheServiceUser) {
  auto plan = plan_under(base / "root");
  plan.caches[0].directory = (base / "fast-disk/flashinfer").string();
  PrepareOptions as_service_user = options();
  as_service_user.owner = {4242, 4343};
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48"), as_service_user));
  for (const auto& cache : plan.caches) {
    struct stat info {};
    ASSERT_EQ(::lstat(cache.directory.c_str(), &info), 0) << cache.directory;
    EXPECT_TRUE(S_ISDIR(info.st_mode));
    EXPECT_EQ(info.st_uid, 4242u) << cache.directory;
    EXPECT_EQ(info.st_gid, 4343u) << cache.directory;
  }
  struct stat root {};
  ASSERT_EQ(::lstat((base / "root").c_str(), &root), 0);
  EXPECT_EQ(root.st_uid, 4242u);
  struct stat parent {};  // made on the way: root's, not the engine's
  ASSERT_EQ(::lstat((base / "fast-disk").c_str(), &parent), 0);
  EXPECT_EQ(parent.st_uid, 0u);
  struct stat records_info {};
  ASSERT_EQ(::lstat(records().c_str(), &records_info), 0);
  EXPECT_EQ(records_info.st_uid, 0u);
}

TEST_F(Prepare, AStampInTheOldPlaceIsIgnoredAndRemoved) {
  const auto plan = plan_under(base / "root");
  // What an older gpulaunch wrote, or what the engine forged: it claims the caches are current.
  write(base / "root" / kOldStampName, "# gpulaunch cache fingerprint v1\nhash=" +
                                           fingerprint_hex(fingerprint_hash(toolkit("13.0.48"))) +
                                           "\n");
  fill_every_cache(plan);
  auto report = prepare_caches(plan, toolkit("13.0.48"), options());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_FALSE(fs::exists(base / "root" / kOldStampName));
  EXPECT_NE(report->change.find("no fingerprint stamp"), std::string::npos);
  // FlashInfer's downloaded cubins do not depend on the toolkit; TileLang's kernels do.
  EXPECT_EQ(names_with_content(plan),
            (std::vector<std::string>{"triton", "triton-home", "inductor", "deep-gemm", "vllm",
                                      "cuda-compute"}));
}

TEST_F(Prepare, AStampSymlinkedToASecretIsNeverReadOrCopied) {
  const auto plan = plan_under(base / "root");
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48"), options()));
  write(base / "secret", "root's ssh key");
  fs::remove(records() / "fingerprint");
  fs::create_symlink(base / "secret", records() / "fingerprint");
  auto report = prepare_caches(plan, toolkit("13.0.48"), options());
  ASSERT_FALSE(report);
  EXPECT_NE(report.error().message.find("is a symbolic link"), std::string::npos)
      << report.error().message;
  // And an old-place link in the cache root is removed as a link; its target stays.
  fs::remove(records() / "fingerprint");
  fs::create_symlink(base / "secret", base / "root" / kOldStampName);
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48"), options()));
  ASSERT_TRUE(clear_caches(plan, {}, records()));
  EXPECT_FALSE(fs::exists(fs::symlink_status(base / "root" / kOldStampName)));
  EXPECT_EQ(read(base / "secret"), "root's ssh key");
  EXPECT_EQ(read(records() / "fingerprint").find("ssh"), std::string::npos);
}

TEST_F(Prepare, RecordsAUserCouldWriteAreRefused) {
  const auto plan = plan_under(base / "root");
  write(base / "root/triton/kernel.so");
  fs::create_directories(records());
  ASSERT_EQ(::chown(records().c_str(), 1000, 1000), 0);
  auto report = prepare_caches(plan, toolkit("13.0.48"), options());
  ASSERT_FALSE(report);
  EXPECT_NE(report.error().message.find("is owned by uid 1000"), std::string::npos)
      << report.error().message;
  EXPECT_FALSE(clear_caches(plan, {}, records()));
  EXPECT_TRUE(fs::exists(base / "root/triton/kernel.so"));
}

TEST_F(Prepare, AStampForAnotherCacheRootDoesNotVouchForThisOne) {
  ASSERT_TRUE(prepare_caches(plan_under(base / "old-root"), toolkit("13.0.48"), options()));
  const auto plan = plan_under(base / "root");
  fill_every_cache(plan);
  auto report = prepare_caches(plan, toolkit("13.0.48"), options());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->change, "the fingerprint stamp is for another cache root '" +
                                (base / "old-root").string() + "'");
  // Every cache that does not key itself (CuTe DSL's among them), but the cubins FlashInfer checks
  // when it reads them.
  EXPECT_EQ(report->removals.size(), 6u);
}

TEST_F(Prepare, ACacheDirectoryThatContainsTheRootIsRefused) {
  auto plan = plan_under(base / "root");
  plan.caches[0].directory = base.string();
  EXPECT_FALSE(prepare_caches(plan, toolkit("13.0.48"), options()));
  plan.caches[0].directory = (base / "root").string();
  EXPECT_FALSE(prepare_caches(plan, toolkit("13.0.48"), options()));
}

TEST_F(Prepare, ClearOnDemandEmptiesOnlyTheNamedCachesAndKeepsTheStamp) {
  const auto plan = plan_under(base / "root");
  ASSERT_TRUE(prepare_caches(plan, toolkit("13.0.48"), options()));
  fill_every_cache(plan);
  auto removals = clear_caches(plan, {"triton", "flashinfer"}, records());
  ASSERT_TRUE(removals) << removals.error().message;
  EXPECT_EQ(removals->size(), 2u);
  EXPECT_EQ(
      names_with_content(plan),
      (std::vector<std::string>{"tvm-ffi", "torch-extensions", "sglang", "triton-home", "tilelang",
                                "inductor", "deep-gemm", "cute-dsl", "vllm", "cuda-compute"}));
  auto stamp = this->stamp();
  ASSERT_TRUE(stamp);
  EXPECT_EQ(stamp->hash, fingerprint_hex(fingerprint_hash(toolkit("13.0.48"))));
}

TEST_F(Prepare, ClearOnDemandRejectsAnUnknownName) {
  const auto plan = plan_under(base / "root");
  auto removals = clear_caches(plan, {"flashinfr"}, records());
  ASSERT_FALSE(removals);
  EXPECT_NE(removals.error().message.find("did you mean 'flashinfer'"), std::string::npos)
      << removals.error().message;
}

}  // namespace
}  // namespace gl
