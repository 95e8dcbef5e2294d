// SPDX-License-Identifier: Apache-2.0
// The sandbox allowances table: each row says why, what it costs and where it was read, and the
// rows that depend on the node or the engine say what on the node or in the argv.

#include <set>

#include <gtest/gtest.h>

#include "catalog/sandbox_allowances.hpp"

namespace gl {
namespace {

TEST(SandboxAllowances, EveryRowIsExplainedSourcedAndNamedOnce) {
  std::set<std::string_view> names;
  for (const auto& row : sandbox_allowances()) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    EXPECT_FALSE(row.directive.empty()) << row.name;
    EXPECT_FALSE(row.value.empty()) << row.name;
    EXPECT_FALSE(row.reason.empty()) << row.name;
    EXPECT_FALSE(row.exposure.empty()) << row.name;
    EXPECT_FALSE(row.source.empty()) << row.name;
    if (row.when == AllowanceWhen::node_has_device || row.when == AllowanceWhen::mps_daemon) {
      EXPECT_TRUE(row.node_path.starts_with("/")) << row.name;
    }
    if (row.when == AllowanceWhen::engine_flag) {
      EXPECT_TRUE(row.engine_flag.starts_with("--")) << row.name;
    }
    EXPECT_EQ(sandbox_allowance(row.name), &row);
  }
  EXPECT_EQ(sandbox_allowance("cap_sys_admin"), nullptr);
}

// What the issue keeps: ptrace and perf_event_open only by the profile's choice; pidfd_getfd
// for every engine.
TEST(SandboxAllowances, PtraceAndPerfAreOptInPidfdGetfdIsAlways) {
  ASSERT_NE(sandbox_allowance("ptrace"), nullptr);
  EXPECT_EQ(sandbox_allowance("ptrace")->when, AllowanceWhen::profile_allows);
  EXPECT_EQ(sandbox_allowance("perf_event_open")->when, AllowanceWhen::profile_allows);
  EXPECT_EQ(sandbox_allowance("pidfd_getfd")->when, AllowanceWhen::always);
  EXPECT_EQ(sandbox_allowance("pidfd_getfd")->directive, "SystemCallFilter");
}

}  // namespace
}  // namespace gl
