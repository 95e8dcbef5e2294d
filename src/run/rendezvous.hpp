// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whether a headless rank's engine has joined rank 0: an established TCP connection from a
// process of the engine's process group to rank 0's address. It is what the engine really does
// once it rendezvoused (torch.distributed's store client keeps its socket to the master port for
// the group's life; vLLM's data-parallel engine cores keep theirs to rank 0's front end), and it
// goes away when rank 0 does, so it feeds the watchdog too. Read from /proc: the group's socket
// inodes (/proc/PID/fd) matched against /proc/net/tcp and tcp6.

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "facts/proc_net_tcp.hpp"  // socket_inode, read_tcp_table

namespace gl {

struct TcpConnection {
  std::string remote_address;  // as inet_ntop writes it; IPv4-mapped IPv6 as plain IPv4
  int remote_port = 0;
  unsigned long long inode = 0;
};

// The established connections a /proc/net/tcp or /proc/net/tcp6 text lists.
std::vector<TcpConnection> parse_proc_net_tcp(std::string_view text);

// The process group's socket inodes, from every /proc/PID whose stat names `group` as its group.
std::vector<unsigned long long> group_socket_inodes(pid_t group, const std::string& proc = "/proc");

// Whether one of `inodes` is an established connection to one of `addresses` at `port` (any
// port when nullopt), per /proc/net/tcp and tcp6 under `proc`.
bool holds_connection(const std::vector<unsigned long long>& inodes,
                      const std::vector<std::string>& addresses, std::optional<int> port,
                      const std::string& proc = "/proc");

}  // namespace gl
