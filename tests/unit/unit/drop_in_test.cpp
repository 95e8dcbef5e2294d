// SPDX-License-Identifier: Apache-2.0
// `systemctl edit`'s drop-ins over the rendered unit, for `gpulaunch exec`: read as systemd
// reads them, so what hides a path from the engine hides it from exec too.

#include "unit/drop_in.hpp"

#include <gtest/gtest.h>

#include "unit/transient.hpp"

namespace gl {
namespace {

TEST(DropIn, ItsServiceLinesComeAfterTheRenderedOnes) {
  UnitFile unit;
  unit.add("Service", "InaccessiblePaths", "/srv/a");
  unit.add("Service", "User", "llm");
  ASSERT_TRUE(
      apply_drop_in(unit,
                    "# systemctl edit\n[Service]\n; a comment\nInaccessiblePaths=/srv/secret "
                    "\\\n  /srv/other\n  User = other \n\n[Unit]\nDescription=x\n",
                    "/etc/systemd/system/gpulaunch-demo.service.d/override.conf"));
  EXPECT_EQ(unit.values("Service", "InaccessiblePaths"),
            (std::vector<std::string>{"/srv/a", "/srv/secret  /srv/other"}));
  EXPECT_EQ(unit.values("Service", "User"), (std::vector<std::string>{"llm", "other"}));
  EXPECT_EQ(unit.values("Unit", "Description"), std::vector<std::string>{"x"});
  // The transient unit gets both, in order: systemd appends the paths, the last User= wins.
  auto properties = transient_properties(unit, "gpulaunch-demo-exec-1.service");
  ASSERT_TRUE(properties) << properties.error().message;
  ASSERT_EQ(properties->size(), 4u);
  EXPECT_EQ((*properties)[2].value,
            BusValue(std::vector<std::string>{"/srv/secret", "/srv/other"}));
  EXPECT_EQ((*properties)[3].value, BusValue(std::string("other")));
}

TEST(DropIn, WhatSystemdWouldNotReadIsAnErrorWithItsLine) {
  UnitFile unit;
  auto outside = apply_drop_in(unit, "User=root\n", "/x.conf");
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().message, "/x.conf:1: 'User=root' is outside any section");
  auto garbage = apply_drop_in(unit, "[Service]\n\nnot a line\n", "/x.conf");
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().message, "/x.conf:3: 'not a line' is not Key=Value");
  // A drop-in directive exec cannot carry over refuses the run rather than being dropped.
  ASSERT_TRUE(apply_drop_in(unit, "[Service]\nCPUQuota=10%\n", "/x.conf"));
  auto properties = transient_properties(unit, "gpulaunch-demo-exec-1.service");
  ASSERT_FALSE(properties);
  EXPECT_EQ(properties.error().message,
            "Cannot run in the service's sandbox: CPUQuota= has no transient-unit mapping");
}

}  // namespace
}  // namespace gl
