// SPDX-License-Identifier: Apache-2.0
#include "facts/proc_net_tcp.hpp"

#include <arpa/inet.h>

#include <array>
#include <charconv>
#include <cstdint>
#include <sstream>

namespace gl {
namespace {

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

// "HEX_IP:HEX_PORT" as an address and a port.
std::optional<std::pair<std::string, int>> endpoint(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto address = address_text(text.substr(0, colon));
  auto port = parse_hex(text.substr(colon + 1));
  if (!address || !port || *port > 65535) return std::nullopt;
  return std::pair{*address, static_cast<int>(*port)};
}

}  // namespace

std::vector<TcpSocketRow> read_tcp_table(std::string_view text) {
  std::vector<TcpSocketRow> rows;
  std::istringstream lines{std::string(text)};
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    if (!(fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode))
      continue;
    auto here = endpoint(local);
    auto there = endpoint(remote);
    unsigned long long number = 0;
    auto [end, error] = std::from_chars(inode.data(), inode.data() + inode.size(), number);
    if (!here || !there || error != std::errc{} || end != inode.data() + inode.size()) continue;
    rows.push_back({state, here->first, here->second, there->first, there->second, number});
  }
  return rows;
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

}  // namespace gl
