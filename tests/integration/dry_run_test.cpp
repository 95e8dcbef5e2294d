// SPDX-License-Identifier: Apache-2.0
// `gpulaunch up --dry-run [--json]` against a real systemd 252, booted privately (the lifecycle
// suite's harness), with the mock SGLang: what `up` would do, before and after the unit is
// installed and when the profile changed, and that it changes nothing.

#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/mock_engine_suite.hpp"

namespace {

namespace fs = std::filesystem;
using gpulaunch::testing::MockEngineHost;
using gpulaunch::testing::MockEngineSuite;

// Not under /tmp: the private systemd mounts its own /tmp.
const fs::path kWork = fs::path(GL_BINARY_DIR) / "dry-run-work";
const std::string kGpulaunch = GL_GPULAUNCH_BINARY;

class UpDryRun : public MockEngineSuite<UpDryRun> {
 public:
  static MockEngineHost* new_host() { return new MockEngineHost(kWork, kGpulaunch, GL_SOURCE_DIR); }

 protected:
  // `gpulaunch ARGUMENTS` with stdout only (the suite's gpulaunch() joins stderr to it).
  static gpulaunch::testing::ExecResult stdout_of(const std::string& arguments) {
    return host().systemd().exec({"sh", "-c",
                                  "'" + kGpulaunch + "' -P '" + (kWork / "profiles").string() +
                                      "' " + arguments + " 2>/dev/null"});
  }
};

nlohmann::json parsed(const std::string& out) {
  auto json = nlohmann::json::parse(out, nullptr, false);
  EXPECT_FALSE(json.is_discarded()) << out;
  return json;
}

TEST_F(UpDryRun, SaysWhatUpWouldDoAndChangesNothing) {
  host().write_profile("dry", 31011, "", "", "/models/mock model");
  set_mode("dry", "normal");
  const std::string path = "/run/systemd/system/gpulaunch-dry.service";

  // Nothing installed, no GPU on this machine: a start, refused on the check without --force.
  auto refused = stdout_of("up dry --runtime --dry-run --json");
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  auto plan = parsed(refused.out);
  EXPECT_EQ(plan["profile"], "dry");
  EXPECT_EQ(plan["unit"], "gpulaunch-dry.service");
  EXPECT_EQ(plan["path"], path);
  EXPECT_EQ(plan["action"], "start");
  EXPECT_EQ(plan["unit_changed"], true);
  EXPECT_NE(plan["diff"].get<std::string>().find("+ExecStart="), std::string::npos) << plan;
  EXPECT_GT(plan["check"]["errors"].get<int>(), 0) << plan;
  EXPECT_EQ(plan["check"]["refuse"], true);
  EXPECT_NE(host().systemd().exec({"test", "-e", path}).exit_code, 0);  // no unit written
  EXPECT_NE(gpulaunch("status dry").exit_code, 0);                      // still not installed

  auto text = gpulaunch("up dry --runtime --dry-run --force");
  EXPECT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find("dry run: nothing is changed\nprofile: dry\nunit: gpulaunch-dry.service\n"
                          "path: " +
                          path + "\naction: start\nunit changed: yes\ncheck: "),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("error[no-nvidia-driver]"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("up would refuse"), std::string::npos) << text.out;

  ASSERT_EQ(gpulaunch("up dry --runtime --force").exit_code, 0);
  const int pid = status_of("dry")["main_pid"];

  // `render` prints the unit `up` installed: the node read the same way (issue 46).
  auto rendered = stdout_of("render dry");
  EXPECT_EQ(rendered.exit_code, 0);
  EXPECT_EQ(rendered.out, host().systemd().exec({"cat", path}).out);

  // Running and unchanged: nothing to do, and the check does not hold an unchanged unit back.
  auto unchanged = stdout_of("up dry --runtime --dry-run --json");
  EXPECT_EQ(unchanged.exit_code, 0) << unchanged.out;
  plan = parsed(unchanged.out);
  EXPECT_EQ(plan["action"], "none");
  EXPECT_EQ(plan["unit_changed"], false);
  EXPECT_EQ(plan["diff"], "");
  EXPECT_EQ(plan["check"]["refuse"], false);

  // A changed profile: a restart, with the unit's diff; the running engine is left alone.
  host().write_profile("dry", 31011, "", "EXTRA_SETTING = \"2\"\n", "/models/mock model");
  auto changed = stdout_of("up dry --runtime --dry-run --json --force");
  EXPECT_EQ(changed.exit_code, 0) << changed.out;
  plan = parsed(changed.out);
  EXPECT_EQ(plan["action"], "restart");
  EXPECT_EQ(plan["unit_changed"], true);
  EXPECT_NE(plan["diff"].get<std::string>().find("+Environment=\"EXTRA_SETTING=2\""),
            std::string::npos)
      << plan;
  EXPECT_EQ(status_of("dry")["main_pid"].get<int>(), pid);
  EXPECT_EQ(stdout_of("up dry --runtime --dry-run --json --force").out, changed.out);

  gpulaunch("down dry --runtime --purge");
}

}  // namespace
