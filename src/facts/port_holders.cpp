// SPDX-License-Identifier: Apache-2.0
#include "facts/port_holders.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <sstream>
#include <system_error>

namespace gl {
namespace {

constexpr std::string_view kListen = "0A";  // TCP_LISTEN in include/net/tcp_states.h

bool all_digits(std::string_view text) {
  return !text.empty() && std::ranges::all_of(text, [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::vector<unsigned long long> listening_inodes(std::string_view proc_net_tcp, long long port) {
  std::vector<unsigned long long> inodes;
  std::istringstream lines{std::string(proc_net_tcp)};
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    if (!(fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode))
      continue;
    if (state != kListen) continue;
    const auto colon = local.rfind(':');
    if (colon == std::string::npos) continue;
    long long local_port = 0;
    const std::string_view hex = std::string_view(local).substr(colon + 1);
    auto [end, error] = std::from_chars(hex.data(), hex.data() + hex.size(), local_port, 16);
    if (error != std::errc{} || end != hex.data() + hex.size() || local_port != port) continue;
    unsigned long long number = 0;
    auto parsed = std::from_chars(inode.data(), inode.data() + inode.size(), number);
    if (parsed.ec == std::errc{} && number != 0) inodes.push_back(number);
  }
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
    for (const auto& fd : node.list(fd_directory)) {
      std::error_code error;
      // A link's text, never followed: "socket:[INODE]" names no file.
      auto target = std::filesystem::read_symlink(node.host_path(fd_directory) / fd, error);
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
