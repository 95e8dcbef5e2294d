// SPDX-License-Identifier: Apache-2.0
#include "run/rendezvous.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include "support/listener.hpp"
#include "temp_dir.hpp"

namespace gl {
namespace {

// /proc/net/tcp as Linux 6.1 writes it: a listener, a connection to 10.213.5.1:5000 (rank 0's
// master port), one in TIME_WAIT to the same place.
constexpr std::string_view kTcp =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
    "inode\n"
    "   0: 00000000:7A12 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 "
    "31337 1 0000000000000000 100 0 0 10 0\n"
    "   1: 0205D50A:A1B2 0105D50A:1388 01 00000000:00000000 00:00000000 00000000   996        0 "
    "424242 1 0000000000000000 20 4 30 10 -1\n"
    "   2: 0205D50A:A1B3 0105D50A:1388 06 00000000:00000000 03:00000F5C 00000000     0        0 "
    "0 3 0000000000000000\n";
// /proc/net/tcp6: a dual-stack socket's connection to the same IPv4 peer, and one to fd00::1.
constexpr std::string_view kTcp6 =
    "  sl  local_address                         remote_address                        st "
    "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    "   0: 0000000000000000FFFF00000205D50A:A1B4 0000000000000000FFFF00000105D50A:1F90 01 "
    "00000000:00000000 00:00000000 00000000   996        0 515151 1 0000000000000000 20 4 30 10 "
    "-1\n"
    "   1: 000000FD000000000000000002000000:A1B5 000000FD000000000000000001000000:1388 01 "
    "00000000:00000000 00:00000000 00000000   996        0 616161 1 0000000000000000 20 4 30 10 "
    "-1\n";

TEST(Rendezvous, ReadsOnlyEstablishedConnectionsWithTheirPeerAndInode) {
  auto connections = parse_proc_net_tcp(kTcp);
  ASSERT_EQ(connections.size(), 1u);
  EXPECT_EQ(connections[0].remote_address, "10.213.5.1");
  EXPECT_EQ(connections[0].remote_port, 5000);
  EXPECT_EQ(connections[0].inode, 424242u);
}

TEST(Rendezvous, ReadsIpv6PeersAndAMappedIpv4PeerAsPlainIpv4) {
  auto connections = parse_proc_net_tcp(kTcp6);
  ASSERT_EQ(connections.size(), 2u);
  EXPECT_EQ(connections[0].remote_address, "10.213.5.1");
  EXPECT_EQ(connections[0].remote_port, 8080);
  EXPECT_EQ(connections[1].remote_address, "fd00::1");
  EXPECT_EQ(connections[1].remote_port, 5000);
}

TEST(Rendezvous, SocketInodesComeFromSocketLinksOnly) {
  EXPECT_EQ(socket_inode("socket:[424242]"), 424242u);
  EXPECT_EQ(socket_inode("pipe:[424242]"), std::nullopt);
  EXPECT_EQ(socket_inode("/dev/nvidia0"), std::nullopt);
  EXPECT_EQ(socket_inode("socket:[42x]"), std::nullopt);
}

TEST(Rendezvous, ConnectionMustBeTheGroupsAndToRankZerosAddressAndPort) {
  gl::testing::TempDir proc;
  proc.write("net/tcp", std::string(kTcp));
  proc.write("net/tcp6", std::string(kTcp6));
  const std::vector<std::string> rank0{"10.213.5.1"};
  EXPECT_TRUE(holds_connection({424242}, rank0, 5000, proc.str()));
  EXPECT_FALSE(holds_connection({424242}, rank0, 5001, proc.str()));  // another port
  EXPECT_FALSE(holds_connection({1}, rank0, 5000, proc.str()));       // another process's socket
  EXPECT_FALSE(holds_connection({424242}, {"10.213.5.2"}, 5000, proc.str()));
  // Data-parallel engine cores: any port on rank 0's host.
  EXPECT_TRUE(holds_connection({515151}, rank0, std::nullopt, proc.str()));
  EXPECT_FALSE(holds_connection({515151}, rank0, 5000, proc.str()));
  EXPECT_TRUE(holds_connection({616161}, {"fd00::1"}, 5000, proc.str()));
}

// The real /proc: this process (its own group's member) connects to a listener on loopback.
TEST(Rendezvous, SeesThisProcessGroupsRealConnection) {
  test::Listener rank0;
  const std::vector<std::string> loopback{"127.0.0.1"};
  EXPECT_FALSE(holds_connection(group_socket_inodes(::getpgrp()), loopback, rank0.port()));
  test::Connection joined(rank0.port());
  ASSERT_TRUE(joined.connected());
  EXPECT_TRUE(holds_connection(group_socket_inodes(::getpgrp()), loopback, rank0.port()));
  EXPECT_FALSE(holds_connection(group_socket_inodes(::getpgrp()), loopback, rank0.port() + 1));
}

}  // namespace
}  // namespace gl
