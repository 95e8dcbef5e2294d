// SPDX-License-Identifier: Apache-2.0
// `check NAME` on a node where NAME serves: its own port is no conflict, anything another process
// holds still is. The holders are read from a /proc laid out as the kernel writes it (and, once,
// from this process's real listening socket); the manager is tests/fakes/systemd/fake_manager.
#include "rules/service_view.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "facts/port_holders.hpp"
#include "fakes/systemd/fake_manager.hpp"

namespace gl {
namespace {

namespace fs = std::filesystem;
using testing::FakeManager;

constexpr std::string_view kUnit = "gpulaunch-k26.service";
// Two lines as net/ipv4/tcp_ipv4.c get_tcp4_sock prints them: 0.0.0.0:30000 listening (inode
// 51234) and a connection from the same port (state 01, ESTABLISHED) that is no listener.
constexpr std::string_view kTcp =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
    "inode\n"
    "   0: 00000000:7530 00000000:0000 0A 00000000:00000000 00:00000000 00000000   997        0 "
    "51234 1 0000000000000000 100 0 0 10 0\n"
    "   1: 0100007F:7530 0100007F:B2C4 01 00000000:00000000 00:00000000 00000000   997        0 "
    "51299 1 0000000000000000 20 4 30 10 -1\n";

class ServiceView : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("gl-service-view-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    write("/proc/net/tcp", kTcp);
    write("/proc/net/tcp6", "  sl  local_address ...\n");
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& path, std::string_view text) {
    fs::create_directories((root_ / path.substr(1)).parent_path());
    std::ofstream(root_ / path.substr(1)) << text;
  }
  // A process with a cgroup and the socket inode `inode` open as its fd 7.
  void process(long long pid, const std::string& cgroup, unsigned long long inode) {
    write("/proc/" + std::to_string(pid) + "/cgroup", "0::" + cgroup + "\n");
    fs::create_directories(root_ / ("proc/" + std::to_string(pid) + "/fd"));
    fs::create_symlink("socket:[" + std::to_string(inode) + "]",
                       root_ / ("proc/" + std::to_string(pid) + "/fd/7"));
  }
  Facts taken_port() const {
    Facts facts;
    facts.ports.push_back(PortFact{"0.0.0.0", 30000, true, std::nullopt, std::nullopt});
    return facts;
  }

  fs::path root_;
  FakeManager manager_;
};

TEST(PortHolders, ListenersOnThePortAreReadFromTheKernelsTable) {
  EXPECT_EQ(listening_inodes(kTcp, 30000), (std::vector<unsigned long long>{51234}));
  EXPECT_TRUE(listening_inodes(kTcp, 30001).empty());
  EXPECT_EQ(unified_cgroup("0::/system.slice/gpulaunch-k26.service\n"),
            "/system.slice/gpulaunch-k26.service");
  EXPECT_EQ(unit_cgroup("0::/system.slice/gpulaunch-k26.service/supervisor\n", kUnit),
            "/system.slice/gpulaunch-k26.service");
  EXPECT_EQ(unit_cgroup("0::/system.slice/gpulaunch-k26.service.d\n", kUnit), "");
}

TEST_F(ServiceView, ThePortTheRunningServiceAloneHoldsIsItsOwn) {
  manager_.add_unit(std::string(kUnit), "active").main_pid = 4711;
  process(4711, "/system.slice/gpulaunch-k26.service", 0);      // run: holds no socket
  process(4712, "/system.slice/gpulaunch-k26.service", 51234);  // the engine, its child
  process(5000, "/user.slice/user-1000.slice", 51299);  // a client's connection, not a listener
  Facts facts = taken_port();
  see_as_service(facts, manager_, NodeFs(root_), std::string(kUnit));
  EXPECT_EQ(facts.ports[0].held_by_service, "gpulaunch-k26.service (PID 4712)");
}

TEST_F(ServiceView, APortAnotherProcessAlsoHoldsStaysAConflict) {
  manager_.add_unit(std::string(kUnit), "active").main_pid = 4711;
  process(4711, "/system.slice/gpulaunch-k26.service", 51234);
  process(6000, "/system.slice/other.service", 51234);  // SO_REUSEPORT, or an inherited fd
  Facts facts = taken_port();
  see_as_service(facts, manager_, NodeFs(root_), std::string(kUnit));
  EXPECT_FALSE(facts.ports[0].held_by_service);
}

TEST_F(ServiceView, AStoppedServiceOwnsNothing) {
  manager_.add_unit(std::string(kUnit), "inactive").main_pid = 0;
  process(4711, "/system.slice/gpulaunch-k26.service", 51234);
  Facts facts = taken_port();
  see_as_service(facts, manager_, NodeFs(root_), std::string(kUnit));
  EXPECT_FALSE(facts.ports[0].held_by_service);
  // Nor does a unit the manager does not know.
  see_as_service(facts, manager_, NodeFs(root_), "gpulaunch-other.service");
  EXPECT_FALSE(facts.ports[0].held_by_service);
}

// The kernel's own tables: a socket this process listens on is found as this process's.
TEST(PortHolders, ThisProcesssListeningSocketIsFoundOnTheRealNode) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t size = sizeof(address);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size), 0);
  const auto holders = port_holders(NodeFs("/"), ntohs(address.sin_port));
  ::close(fd);
  ASSERT_EQ(holders.size(), 1u);
  EXPECT_EQ(holders[0].pid, ::getpid());
  std::ifstream self("/proc/self/cgroup");
  std::string text((std::istreambuf_iterator<char>(self)), {});
  EXPECT_EQ(holders[0].cgroup, unified_cgroup(text));
}

}  // namespace
}  // namespace gl
