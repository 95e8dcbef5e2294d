// SPDX-License-Identifier: Apache-2.0
// The rendezvous probe on real loopback sockets, in real time: ranks that start before rank 0
// listens, nobody listening, idle connections to the port, something else holding it. Its names
// and lines are in the quick suite (tests/unit/group/rendezvous_probe_test.cpp).
#include "group/rendezvous_probe.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <future>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/listener.hpp"

namespace gl {
namespace {

using namespace std::chrono_literals;

// A free port on loopback: bound by a Listener, then released.
int free_port() {
  test::Listener listener;
  return listener.port();
}

TEST(RendezvousProbe, RanksReachAListenerThatStartsAfterThem) {
  const int port = free_port();
  auto one =
      std::async(std::launch::async, [port] { return reach_rendezvous("127.0.0.1", port, 1, 5s); });
  auto two =
      std::async(std::launch::async, [port] { return reach_rendezvous("127.0.0.1", port, 2, 5s); });
  std::this_thread::sleep_for(300ms);  // the first tries are refused
  auto listened = listen_for_ranks("127.0.0.1", port, {1, 2}, 6s);
  ASSERT_TRUE(listened) << listened.error().message;
  EXPECT_FALSE(listened->port_in_use);
  EXPECT_EQ(listened->joined.size(), 2u);
  EXPECT_TRUE(one.get().reached());
  EXPECT_TRUE(two.get().reached());
}

TEST(RendezvousProbe, NobodyListeningIsRefusedAndAMissingRankIsNamed) {
  const int port = free_port();
  const auto refused = reach_rendezvous("127.0.0.1", port, 1, 500ms);
  EXPECT_EQ(refused.failure, ReachFailure::refused);
  auto listened = listen_for_ranks("127.0.0.1", port, {1}, 300ms);
  ASSERT_TRUE(listened);
  EXPECT_TRUE(listened->joined.empty());
  EXPECT_EQ(listen_line(port, *listened, {1}),
            "listened on port " + std::to_string(port) + ": rank(s) 1 never connected");
}

// A TCP connection to 127.0.0.1:port that never sends anything; -1 when it failed. `wait`
// false: the connect is not waited for (a full backlog cannot hang the test).
int idle_connection(int port, bool wait = true) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (wait ? 0 : SOCK_NONBLOCK), 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 &&
      (wait || errno != EINPROGRESS)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST(RendezvousProbe, IdleConnectionsToThePortDelayNoRank) {
  // Someone connects to rank 0's port and says nothing, many times over (more than the listener
  // holds at once), before the real rank arrives: the rank is still greeted in time.
  const int port = free_port();
  auto listened = std::async(std::launch::async,
                             [port] { return listen_for_ranks("127.0.0.1", port, {1}, 8s); });
  std::vector<int> idle;
  for (int attempt = 0; attempt < 50 && idle.empty(); ++attempt) {
    if (int fd = idle_connection(port); fd >= 0)
      idle.push_back(fd);
    else
      std::this_thread::sleep_for(50ms);
  }
  ASSERT_FALSE(idle.empty()) << "the listener never came up";
  for (int i = 0; i < 200; ++i)
    if (int fd = idle_connection(port, false); fd >= 0) idle.push_back(fd);
  const auto reached = reach_rendezvous("127.0.0.1", port, 1, 4s);
  EXPECT_TRUE(reached.reached()) << reach_line("rank 0", reached);
  auto result = listened.get();
  for (int fd : idle) ::close(fd);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->joined, std::vector<long long>{1});
}

TEST(RendezvousProbe, APortSomethingElseListensOnIsToldApart) {
  test::Listener other;  // holds the port, greets nobody
  auto listened = listen_for_ranks("127.0.0.1", other.port(), {1}, 1s);
  ASSERT_TRUE(listened) << listened.error().message;
  EXPECT_TRUE(listened->port_in_use);
  const auto reached = reach_rendezvous("127.0.0.1", other.port(), 1, 1s);
  EXPECT_EQ(reached.failure, ReachFailure::not_the_probe);
}

}  // namespace
}  // namespace gl
