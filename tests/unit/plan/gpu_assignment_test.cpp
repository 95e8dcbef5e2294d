// SPDX-License-Identifier: Apache-2.0
// One rule for the GPUs the engine gets: the unit's CUDA_VISIBLE_DEVICES, `check`'s GPUs and
// `run`'s residue wait all read it.

#include "plan/gpu_assignment.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plan/launch_plan.hpp"
#include "profile/memory_source.hpp"
#include "profile/validate.hpp"

namespace gl {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

Profile load(const std::string& extra, const std::string& kind = "vllm") {
  MemorySource source(
      {{"/p/g.toml", "[engine]\nkind = \"" + kind +
                         "\"\nvenv = \"/opt/venv\"\n[model]\npath = \"/m\"\n" + extra}});
  auto profile = load_profile(source, "/p/g.toml");
  EXPECT_TRUE(profile) << profile.error().message;
  return profile.value_or(Profile{});
}

std::string visible_devices(const LaunchPlan& plan) {
  for (const auto& [name, value] : plan.environment)
    if (name == kVisibleDevicesVariable) return value;
  return "<unset>";
}

constexpr const char* kB200 = "GPU-5a0c3b1e-8d2f-4e6a-9b7c-1f3e5d7a9c0b";
constexpr const char* kH100 = "GPU-0e9d8c7b-6a5f-4e3d-2c1b-0a9f8e7d6c5b";

Facts two_gpus() {
  Facts facts;
  facts.gpus.push_back({0, "B200", kB200, 10, 0, 183359});
  facts.gpus.push_back({1, "H100", kH100, 9, 0, 81559});
  return facts;
}

TEST(GpuAssignment, DevicesAreTakenAsTheProfileNamesThem) {
  const Profile profile = load("[gpus]\ndevices = [\"" + std::string(kH100) + "\"]\n");
  EXPECT_THAT(assigned_gpus(profile), ElementsAre(kH100));
  const LaunchPlan plan = make_launch_plan(profile);
  EXPECT_EQ(plan.gpus, assigned_gpus(profile));
  EXPECT_EQ(visible_devices(plan), kH100);
  const Facts facts = two_gpus();
  const auto gpus = assigned_gpu_facts(plan.gpus, facts);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]->index, 1);
}

TEST(GpuAssignment, CountTakesTheFirstIndices) {
  const Profile profile = load("[gpus]\ncount = 2\n");
  EXPECT_THAT(assigned_gpus(profile), ElementsAre("0", "1"));
  EXPECT_EQ(visible_devices(make_launch_plan(profile)), "0,1");
  EXPECT_EQ(assigned_gpu_facts(assigned_gpus(profile), two_gpus()).size(), 2u);
}

// Neither given: as many as the node's ranks need, dp replicas included for vLLM.
TEST(GpuAssignment, NoneGivenTakesWhatTheRanksNeed) {
  const Profile profile = load("[parallelism]\ntp = 2\ndp = 2\n");
  EXPECT_THAT(assigned_gpus(profile), ElementsAre("0", "1", "2", "3"));
  EXPECT_EQ(visible_devices(make_launch_plan(profile)), "0,1,2,3");
  // Two of the four exist here: what `check` counts as available.
  EXPECT_EQ(assigned_gpu_facts(assigned_gpus(profile), two_gpus()).size(), 2u);
}

TEST(GpuAssignment, RunReadsTheUnitsValueBackAsIndices) {
  EXPECT_THAT(visible_device_indices(visible_devices_value({"0", "3"})), ElementsAre(0, 3));
  // A UUID: no index to wait on, so all GPUs.
  EXPECT_THAT(visible_device_indices(visible_devices_value({kB200})), IsEmpty());
  EXPECT_THAT(visible_device_indices(""), IsEmpty());
}

TEST(GpuAssignment, ADeviceIsNamedByIndexOrUuid) {
  const Facts facts = two_gpus();
  EXPECT_TRUE(names_gpu("1", facts.gpus[1]));
  EXPECT_TRUE(names_gpu(kH100, facts.gpus[1]));
  EXPECT_FALSE(names_gpu(kB200, facts.gpus[1]));
}

}  // namespace
}  // namespace gl
