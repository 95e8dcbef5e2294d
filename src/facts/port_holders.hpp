// SPDX-License-Identifier: Apache-2.0
#pragma once
// Who holds a listening TCP port: the LISTEN sockets on it in /proc/net/tcp and /proc/net/tcp6,
// and the processes whose /proc/PID/fd links name one of them ("socket:[INODE]"), each with its
// cgroup. Read as files under the node's root, never through a socket of our own.

#include <string>
#include <string_view>
#include <vector>

#include "facts/node_fs.hpp"

namespace gl {

struct SocketHolder {
  long long pid = 0;
  std::string cgroup;  // the unified hierarchy's path, "/system.slice/gpulaunch-x.service"
};

// The inodes of the sockets listening on `port` in one /proc/net/tcp or tcp6 text (the kernel's
// net/ipv4/tcp_ipv4.c get_tcp4_sock and net/ipv6/tcp_ipv6.c get_tcp6_sock lines: local address
// as HEX_IP:HEX_PORT, state 0A for LISTEN, the inode in the tenth column).
std::vector<unsigned long long> listening_inodes(std::string_view proc_net_tcp, long long port);

// The cgroup v2 path in a /proc/PID/cgroup text (its "0::" line); "" where there is none.
std::string unified_cgroup(std::string_view proc_pid_cgroup);

// Every process holding a socket that listens on `port`, by its file descriptors.
std::vector<SocketHolder> port_holders(const NodeFs& node, long long port);

// Whether `holders` are all inside `cgroup` (it or a cgroup below it), and there is one at least.
bool held_only_within(const std::vector<SocketHolder>& holders, std::string_view cgroup);

}  // namespace gl
