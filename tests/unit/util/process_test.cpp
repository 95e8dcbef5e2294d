// SPDX-License-Identifier: Apache-2.0
#include <unistd.h>
#include <cstdlib>

#include <gtest/gtest.h>

#include "util/process.hpp"

namespace gl {
namespace {

TEST(Process, CapturesStdoutAndExitCode) {
  auto result = run_process("/bin/sh", {"-c", "echo hello; echo noise >&2; exit 3"});
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->out, "hello\n");
  EXPECT_EQ(result->exit_code, 3);
}

TEST(Process, KillsWhatDoesNotAnswer) {
  auto result = run_process("/bin/sleep", {"30"}, std::chrono::milliseconds(200));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message, "Failed to run '/bin/sleep': no answer within 200 ms");
}

TEST(Process, MissingProgramIsAnError) {
  auto result = run_process("/nonexistent/nvcc", {"--version"});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message.rfind("Failed to run '/nonexistent/nvcc': ", 0), 0u);
}

TEST(Process, UnprivilegedRunDropsRootAndTheEnvironment) {
  ::setenv("LD_PRELOAD", "/nonexistent/evil.so", 1);
  auto result = run_unprivileged("/bin/sh", {"-c", "id -u; id -G; /usr/bin/env"}, std::nullopt);
  ::unsetenv("LD_PRELOAD");
  ASSERT_TRUE(result) << result.error().message;
  std::string expected_ids;
  if (::geteuid() == 0) {
    auto nobody = unprivileged_identity(std::nullopt);
    ASSERT_TRUE(nobody);
    EXPECT_EQ(nobody->name, "nobody");
    expected_ids = std::to_string(nobody->uid) + "\n" + std::to_string(nobody->gid) + "\n";
  } else {
    expected_ids = std::to_string(::getuid()) + "\n";
  }
  EXPECT_EQ(result->out.substr(0, expected_ids.size()), expected_ids) << result->out;
  EXPECT_EQ(result->out.substr(expected_ids.size()), "PATH=/usr/bin:/bin\nPWD=/\n");
}

TEST(Process, RootIsNeverTheUnprivilegedIdentity) {
  auto root = unprivileged_identity(std::string("root"));
  ASSERT_TRUE(root);
  EXPECT_EQ(root->name, "nobody");  // service.user = "root" still drops
  auto missing = unprivileged_identity(std::string("no-such-user-here"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "Failed to look up user 'no-such-user-here': no such user");
}

TEST(Process, StartsAreCounted) {
  auto before = processes_started();
  ASSERT_TRUE(run_process("/bin/true", {}));
  EXPECT_EQ(processes_started(), before + 1);
}

}  // namespace
}  // namespace gl
