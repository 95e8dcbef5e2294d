// SPDX-License-Identifier: Apache-2.0
// Moving a poisoned cache aside: renamed beside itself, kept whole, never through a link, only a
// cache gpulaunch may touch; `cache PROFILE` lists the copy.

#include "caches/quarantine.hpp"

#include <sys/stat.h>

#include "caches/cache_state.hpp"
#include "caches/safe_remove.hpp"
#include "temp_tree.hpp"

namespace gl {
namespace {

namespace fs = std::filesystem;
using MoveAside = test::TempTree;
using CacheQuarantine = test::RootTree;

// 2026-12-01 20:45:00 UTC.
constexpr int64_t kWhen = 1796157900LL * 1'000'000;

TEST(QuarantineLeaf, TheCopyIsNamedByTheTimeInUtc) {
  EXPECT_EQ(quarantine_leaf("torchinductor", kWhen + 123),
            "torchinductor.quarantined-20261201T204500");
}

TEST_F(MoveAside, TheDirectoryIsRenamedBesideItselfWithItsContent) {
  write(base / "root/torchinductor/fxgraph/xy/cxy.py", "poisoned");
  auto root = ConfinedRoot::open(base / "root");
  ASSERT_TRUE(root) << root.error().message;
  auto moved = root->move_aside("torchinductor", "torchinductor.quarantined-1");
  ASSERT_TRUE(moved) << moved.error().message;
  EXPECT_EQ(*moved, base / "root/torchinductor.quarantined-1");
  EXPECT_FALSE(fs::exists(fs::symlink_status(base / "root/torchinductor")));
  EXPECT_EQ(read(base / "root/torchinductor.quarantined-1/fxgraph/xy/cxy.py"), "poisoned");

  auto copies = root->names_beside("torchinductor", "torchinductor.quarantined-");
  ASSERT_TRUE(copies) << copies.error().message;
  EXPECT_EQ(*copies, std::vector<fs::path>{base / "root/torchinductor.quarantined-1"});
}

TEST_F(MoveAside, ALinkAFileOrAnExistingCopyIsNeverMovedOrReplaced) {
  write(base / "outside/precious", "keep me");
  fs::create_directories(base / "root");
  fs::create_directory_symlink(base / "outside", base / "root/torchinductor");
  write(base / "root/vllm", "a file");
  write(base / "root/triton/kernel.so", "new");
  write(base / "root/triton.quarantined-1/kernel.so", "old");
  auto root = ConfinedRoot::open(base / "root");
  ASSERT_TRUE(root);
  auto link = root->move_aside("torchinductor", "torchinductor.quarantined-1");
  ASSERT_FALSE(link);
  EXPECT_NE(link.error().message.find("not followed"), std::string::npos) << link.error().message;
  EXPECT_TRUE(fs::is_symlink(base / "root/torchinductor"));
  EXPECT_EQ(read(base / "outside/precious"), "keep me");
  EXPECT_FALSE(root->move_aside("vllm", "vllm.quarantined-1"));
  auto taken = root->move_aside("triton", "triton.quarantined-1");
  ASSERT_FALSE(taken);
  EXPECT_NE(taken.error().message.find("File exists"), std::string::npos) << taken.error().message;
  EXPECT_EQ(read(base / "root/triton.quarantined-1/kernel.so"), "old");
  EXPECT_FALSE(root->move_aside("triton", "../escaped"));
  EXPECT_FALSE(root->move_aside("../outside", "x"));
}

TEST_F(MoveAside, ACacheThatIsItsOwnRootMovesWithinItsParent) {
  write(base / "own/cache/kernel.so", "poisoned");
  auto root = ConfinedRoot::open(base / "own/cache");
  ASSERT_TRUE(root);
  auto moved = root->move_aside("", "cache.quarantined-1");
  ASSERT_TRUE(moved) << moved.error().message;
  EXPECT_EQ(read(base / "own/cache.quarantined-1/kernel.so"), "poisoned");
  EXPECT_FALSE(fs::exists(base / "own/cache"));
}

TEST_F(MoveAside, AnOwnRootSwappedAfterItWasOpenedIsNotMoved) {
  write(base / "own/cache/kernel.so", "poisoned");
  auto root = ConfinedRoot::open(base / "own/cache");
  ASSERT_TRUE(root);
  fs::rename(base / "own/cache", base / "own/elsewhere");
  write(base / "own/cache/other", "someone else's");
  auto moved = root->move_aside("", "cache.quarantined-1");
  ASSERT_FALSE(moved);
  EXPECT_EQ(read(base / "own/cache/other"), "someone else's");
}

TEST_F(CacheQuarantine, OnlyExistingCachesUnderTheRootOrCreatedByGpulaunchAreMovable) {
  LaunchPlan plan = plan_under(base / "root");
  // inductor moved outside the root to a directory gpulaunch did not create.
  for (auto& cache : plan.caches)
    if (cache.name == "inductor") cache.directory = (base / "someone/inductor").string();
  write(base / "someone/inductor/kernel.so");
  write(base / "root/vllm/torch_compile_cache/x.py");
  auto places = movable_caches(plan, records());
  ASSERT_TRUE(places) << places.error().message;
  ASSERT_EQ(places->size(), 1u);
  EXPECT_EQ(places->front().name, "vllm");

  auto refused = quarantine_cache(plan, "inductor", kWhen, records());
  ASSERT_FALSE(refused);
  EXPECT_TRUE(fs::exists(base / "someone/inductor/kernel.so"));
}

TEST_F(CacheQuarantine, AQuarantinedCacheIsListedAndRecreatedAtTheNextPrepare) {
  const LaunchPlan plan = plan_under(base / "root");
  FingerprintInputs inputs;
  inputs.toolkit_version = "12.8.93";
  ASSERT_TRUE(prepare_caches(plan, inputs, options()));
  write(base / "root/torchinductor/fxgraph/xy/cxy.py", "poisoned");
  auto moved = quarantine_cache(plan, "inductor", kWhen, records());
  ASSERT_TRUE(moved) << moved.error().message;
  EXPECT_EQ(*moved, base / "root/torchinductor.quarantined-20261201T204500");
  EXPECT_EQ(read(*moved / "fxgraph/xy/cxy.py"), "poisoned");

  auto report = prepare_caches(plan, inputs, options());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(fs::is_directory(base / "root/torchinductor"));
  EXPECT_TRUE(fs::is_empty(base / "root/torchinductor"));
  EXPECT_TRUE(report->removals.empty());  // the copy is kept

  auto state = inspect_caches(plan, inputs, records());
  ASSERT_TRUE(state) << state.error().message;
  for (const auto& cache : state->caches)
    if (cache.name == "inductor")
      EXPECT_EQ(cache.quarantined, std::vector<std::string>{moved->string()});
    else
      EXPECT_TRUE(cache.quarantined.empty()) << cache.name;
}

}  // namespace
}  // namespace gl
