// SPDX-License-Identifier: Apache-2.0
#include "run/rendezvous.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gl {
namespace {

constexpr std::string_view kEstablished = "01";  // TCP_ESTABLISHED in the st column

std::optional<unsigned long long> parse_hex(std::string_view text) {
  unsigned long long value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "0100007F" (IPv4, one 32-bit word in host order) or 32 hex digits (IPv6, four such words).
std::optional<std::string> address_text(std::string_view hex) {
  if (hex.size() != 8 && hex.size() != 32) return std::nullopt;
  std::array<std::uint32_t, 4> words{};
  for (size_t i = 0; i < hex.size() / 8; ++i) {
    auto word = parse_hex(hex.substr(i * 8, 8));
    if (!word) return std::nullopt;
    words[i] = static_cast<std::uint32_t>(*word);
  }
  std::array<char, INET6_ADDRSTRLEN> text{};
  const int family = hex.size() == 8 ? AF_INET : AF_INET6;
  if (!::inet_ntop(family, words.data(), text.data(), text.size())) return std::nullopt;
  std::string address(text.data());
  // A dual-stack socket's IPv4 peer.
  if (family == AF_INET6 && address.starts_with("::ffff:") &&
      address.find('.') != std::string::npos)
    address.erase(0, 7);
  return address;
}

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
  std::istringstream lines{std::string(text)};
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    if (!(fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode))
      continue;
    if (state != kEstablished) continue;
    const auto colon = remote.find(':');
    if (colon == std::string::npos) continue;
    auto address = address_text(std::string_view(remote).substr(0, colon));
    auto port = parse_hex(std::string_view(remote).substr(colon + 1));
    unsigned long long number = 0;
    auto [end, error] = std::from_chars(inode.data(), inode.data() + inode.size(), number);
    if (!address || !port || error != std::errc{} || end != inode.data() + inode.size()) continue;
    connections.push_back({*address, static_cast<int>(*port), number});
  }
  return connections;
}

std::optional<unsigned long long> socket_inode(std::string_view link) {
  constexpr std::string_view prefix = "socket:[";
  if (!link.starts_with(prefix) || !link.ends_with(']')) return std::nullopt;
  link.remove_prefix(prefix.size());
  link.remove_suffix(1);
  unsigned long long inode = 0;
  auto [end, error] = std::from_chars(link.data(), link.data() + link.size(), inode);
  if (error != std::errc{} || end != link.data() + link.size()) return std::nullopt;
  return inode;
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
