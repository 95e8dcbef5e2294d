// SPDX-License-Identifier: Apache-2.0
#include "group/rendezvous_probe.hpp"

#include <cerrno>

#include <gtest/gtest.h>

namespace gl {
namespace {

TEST(RendezvousProbe, ConnectErrorsAreNamedAsAPersonWouldLookForThem) {
  EXPECT_EQ(classify_connect_errno(ECONNREFUSED), ReachFailure::refused);
  EXPECT_EQ(classify_connect_errno(ETIMEDOUT), ReachFailure::timeout);
  EXPECT_EQ(classify_connect_errno(EHOSTUNREACH), ReachFailure::no_route);
  EXPECT_EQ(classify_connect_errno(ENETUNREACH), ReachFailure::no_route);
  EXPECT_EQ(classify_connect_errno(EACCES), ReachFailure::other);
}

TEST(RendezvousProbe, ReportLines) {
  EXPECT_EQ(reach_line("10.0.0.1:5000", {}), "reaches 10.0.0.1:5000");
  EXPECT_EQ(reach_line("10.0.0.1:5000", {ReachFailure::refused, "Connection refused"}),
            "cannot reach 10.0.0.1:5000: refused (Connection refused)");
  EXPECT_EQ(reach_line("[fd00::1]:5000", {ReachFailure::no_route, "No route to host"}),
            "cannot reach [fd00::1]:5000: no route (No route to host)");
  EXPECT_EQ(reach_line("10.0.0.1:5000", {ReachFailure::timeout, "no answer"}),
            "cannot reach 10.0.0.1:5000: timeout (no answer)");
  EXPECT_EQ(listen_line(5000, {false, {2, 1}}, {1, 2}),
            "listened on port 5000: rank(s) 1, 2 connected");
  EXPECT_EQ(listen_line(5000, {false, {1}}, {1, 2, 3}),
            "listened on port 5000: rank(s) 2, 3 never connected");
  EXPECT_EQ(listen_line(5000, {true, {}}, {1}),
            "port 5000 is in use on this node: something else listens there");
}

}  // namespace
}  // namespace gl
