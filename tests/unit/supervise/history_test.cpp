#include "supervise/history.hpp"

#include <gtest/gtest.h>

#include "../temp_dir.hpp"

using gl::testing::TempDir;

namespace gl {
namespace {

TEST(History, StateRoundTripsAndEventsAppendInOrder) {
  TempDir dir;
  const History history(dir.path() / "state");
  auto fresh = history.state();
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->consecutive_failures, 0);
  SupervisorState state;
  state.consecutive_failures = 2;
  state.gpu_level = 1;
  state.last_class = "cuda-oom";
  ASSERT_TRUE(history.save(state));
  auto loaded = history.state();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->consecutive_failures, 2);
  EXPECT_EQ(loaded->gpu_level, 1);
  EXPECT_EQ(loaded->last_class, "cuda-oom");
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(
        history.append(SupervisorEvent{i, "crash", "line " + std::to_string(i), "restart", 0, 0}));
  auto events = history.events(2);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ(events->at(0).evidence, "line 1");
  EXPECT_EQ(events->at(1).time_usec, 2);
}

}  // namespace
}  // namespace gl
