// SPDX-License-Identifier: Apache-2.0
#include "facts/port_holders.hpp"

#include "facts/proc_net_tcp.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <sstream>
#include <system_error>

namespace gl {
namespace {

bool all_digits(std::string_view text) {
  return !text.empty() && std::ranges::all_of(text, [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::vector<unsigned long long> listening_inodes(std::string_view proc_net_tcp, long long port) {
  std::vector<unsigned long long> inodes;
  for (const TcpSocketRow& row : read_tcp_table(proc_net_tcp))
    if (row.state == kTcpListen && row.local_port == port && row.inode != 0)
      inodes.push_back(row.inode);
  return inodes;
}

std::string unified_cgroup(std::string_view proc_pid_cgroup) {
  std::istringstream lines{std::string(proc_pid_cgroup)};
  std::string line;
  while (std::getline(lines, line))
    if (line.starts_with("0::")) return line.substr(3);
  return "";
}

std::vector<SocketHolder> port_holders(const NodeFs& node, long long port) {
  std::vector<unsigned long long> inodes;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"})
    if (auto text = node.read(table, 64 << 20))
      for (auto inode : listening_inodes(*text, port)) inodes.push_back(inode);
  std::vector<SocketHolder> holders;
  if (inodes.empty()) return holders;
  std::vector<std::string> wanted;
  for (auto inode : inodes) wanted.push_back("socket:[" + std::to_string(inode) + "]");
  for (const auto& entry : node.list("/proc")) {
    if (!all_digits(entry)) continue;
    const std::string fd_directory = "/proc/" + entry + "/fd";
    bool holds = false;
    const auto fds = node.host_path(fd_directory);
    for (const auto& fd : fds ? node.list(fd_directory) : std::vector<std::string>{}) {
      std::error_code error;
      // A link's text, never followed: "socket:[INODE]" names no file.
      auto target = std::filesystem::read_symlink(*fds / fd, error);
      if (!error && std::ranges::count(wanted, target.string()) > 0) {
        holds = true;
        break;
      }
    }
    if (!holds) continue;
    SocketHolder holder;
    std::from_chars(entry.data(), entry.data() + entry.size(), holder.pid);
    holder.cgroup = unified_cgroup(node.read("/proc/" + entry + "/cgroup").value_or(""));
    holders.push_back(std::move(holder));
  }
  return holders;
}

bool held_only_within(const std::vector<SocketHolder>& holders, std::string_view cgroup) {
  if (holders.empty() || cgroup.empty() || cgroup == "/") return false;
  return std::ranges::all_of(holders, [&](const SocketHolder& holder) {
    return holder.cgroup == cgroup ||
           (holder.cgroup.starts_with(cgroup) && holder.cgroup[cgroup.size()] == '/');
  });
}

}  // namespace gl
