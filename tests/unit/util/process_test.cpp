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

}  // namespace
}  // namespace gl
