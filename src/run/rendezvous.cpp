// SPDX-License-Identifier: Apache-2.0
#include "run/rendezvous.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gl {
namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The process group of /proc/PID/stat: the fifth field, counted after the command name's ')'.
std::optional<pid_t> process_group(const std::string& stat) {
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  std::string state;
  long long parent = 0;
  long long group = 0;
  if (!(fields >> state >> parent >> group)) return std::nullopt;
  return static_cast<pid_t>(group);
}

}  // namespace

std::vector<TcpConnection> parse_proc_net_tcp(std::string_view text) {
  std::vector<TcpConnection> connections;
  for (const TcpSocketRow& row : read_tcp_table(text))
    if (row.state == kTcpEstablished)
      connections.push_back({row.remote_address, row.remote_port, row.inode});
  return connections;
}

std::vector<unsigned long long> group_socket_inodes(pid_t group, const std::string& proc) {
  namespace fs = std::filesystem;
  std::vector<unsigned long long> inodes;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(proc, error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    // Processes come and go while we look: whatever cannot be read is skipped.
    if (process_group(slurp(entry.path() / "stat")) != group) continue;
    std::error_code fd_error;
    for (const auto& fd : fs::directory_iterator(entry.path() / "fd", fd_error)) {
      std::error_code link_error;
      const auto target = fs::read_symlink(fd.path(), link_error);
      if (link_error) continue;
      if (auto inode = socket_inode(target.string())) inodes.push_back(*inode);
    }
  }
  return inodes;
}

bool holds_connection(const std::vector<unsigned long long>& inodes,
                      const std::vector<std::string>& addresses, std::optional<int> port,
                      const std::string& proc) {
  if (inodes.empty() || addresses.empty()) return false;
  for (const char* table : {"/net/tcp", "/net/tcp6"}) {
    for (const auto& connection : parse_proc_net_tcp(slurp(proc + table))) {
      if (port && connection.remote_port != *port) continue;
      if (std::find(addresses.begin(), addresses.end(), connection.remote_address) ==
          addresses.end())
        continue;
      if (std::find(inodes.begin(), inodes.end(), connection.inode) != inodes.end()) return true;
    }
  }
  return false;
}

}  // namespace gl
