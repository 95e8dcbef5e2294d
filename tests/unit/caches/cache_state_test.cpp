// SPDX-License-Identifier: Apache-2.0
#include "caches/cache_state.hpp"

#include "caches/prepare.hpp"
#include "temp_tree.hpp"

namespace gl {
namespace {

namespace fs = std::filesystem;
using CacheStateTest = test::RootTree;

TEST_F(CacheStateTest, InspectReportsMissingEmptyCurrentAndStale) {
  const auto plan = plan_under(base / "root");
  FingerprintInputs old_inputs;
  old_inputs.toolkit_version = "12.8";
  FingerprintInputs new_inputs;
  new_inputs.toolkit_version = "13.0";
  ASSERT_TRUE(prepare_caches(plan, old_inputs, options()));
  write(base / "root/flashinfer/a.so", "12345");
  write(base / "root/triton/b.json", "12");
  write(base / "root/tilelang/d.so", "1");
  fs::create_directories(base / "root/tvm-ffi");
  fs::remove(base / "root/sglang");  // made by the start; gone since

  auto report = inspect_caches(plan, new_inputs, records());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->change, "toolkit_version 12.8 -> 13.0");
  auto state_of = [&](std::string_view name) {
    for (const auto& cache : report->caches)
      if (cache.name == name) return cache.state;
    return CacheState::missing;
  };
  EXPECT_EQ(state_of("flashinfer"), CacheState::stale);
  EXPECT_EQ(state_of("triton"), CacheState::current);
  EXPECT_EQ(state_of("tvm-ffi"), CacheState::empty);
  EXPECT_EQ(state_of("sglang"), CacheState::missing);
  // Stale only on the facts it depends on: TileLang's kernels on the toolkit.
  EXPECT_EQ(state_of("tilelang"), CacheState::stale);
  EXPECT_EQ(report->caches[0].usage.bytes, 5u);

  auto same = inspect_caches(plan, old_inputs, records());
  ASSERT_TRUE(same);
  EXPECT_EQ(same->caches[0].state, CacheState::current);
  EXPECT_TRUE(fs::exists(base / "root/flashinfer/a.so"));  // inspecting removes nothing
}

TEST_F(CacheStateTest, InspectingAMissingRootCreatesNothing) {
  auto report = inspect_caches(plan_under(base / "root"), {}, records());
  ASSERT_TRUE(report);
  EXPECT_FALSE(fs::exists(base / "root"));
  EXPECT_FALSE(fs::exists(records()));
  for (const auto& cache : report->caches) EXPECT_EQ(cache.state, CacheState::missing);
}

}  // namespace
}  // namespace gl
