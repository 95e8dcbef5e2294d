// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "support/listener.hpp"
#include "util/port_probe.hpp"

namespace gl {
namespace {

TEST(PortProbe, HeldPortIsTakenAndReleasedPortIsFree) {
  int port = 0;
  {
    test::Listener listener;
    port = listener.port();
    auto state = probe_port("127.0.0.1", port);
    ASSERT_TRUE(state) << state.error().message;
    EXPECT_EQ(*state, PortState::taken);
  }
  auto state = probe_port("127.0.0.1", port);
  ASSERT_TRUE(state) << state.error().message;
  EXPECT_EQ(*state, PortState::free);
}

TEST(PortProbe, UnresolvableHostIsAnError) {
  EXPECT_FALSE(probe_port("no-such-host.invalid", 30000));
}

}  // namespace
}  // namespace gl
