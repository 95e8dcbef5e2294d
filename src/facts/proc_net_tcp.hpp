// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel's TCP socket tables as text: /proc/net/tcp and /proc/net/tcp6 (net/ipv4/tcp_ipv4.c
// get_tcp4_sock, net/ipv6/tcp_ipv6.c get_tcp6_sock: "sl local_address rem_address st ... inode",
// addresses as HEX_IP:HEX_PORT), and the "socket:[INODE]" links of /proc/PID/fd. Read by `check`
// (facts/port_holders: who listens on a port) and by `run` (run/rendezvous: whether a rank joined).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gl {

inline constexpr std::string_view kTcpEstablished = "01";  // the st column's TCP_ESTABLISHED
inline constexpr std::string_view kTcpListen = "0A";       // TCP_LISTEN (include/net/tcp_states.h)

struct TcpSocketRow {
  std::string state;          // the st column, as written ("0A")
  std::string local_address;  // as inet_ntop writes it; IPv4-mapped IPv6 as plain IPv4
  int local_port = 0;
  std::string remote_address;  // likewise
  int remote_port = 0;
  unsigned long long inode = 0;
};

// Every row of a /proc/net/tcp or tcp6 text; a row whose columns do not parse is left out.
std::vector<TcpSocketRow> read_tcp_table(std::string_view text);

// The socket inode a /proc/PID/fd link names ("socket:[INODE]"); nullopt for any other link.
std::optional<unsigned long long> socket_inode(std::string_view link);

}  // namespace gl
