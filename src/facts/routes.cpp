// SPDX-License-Identifier: Apache-2.0
#include "facts/routes.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <charconv>
#include <cstring>
#include <sstream>

namespace gl {
namespace {

constexpr uint32_t kRouteUp = 0x1;  // RTF_UP in the tables' flags column

std::optional<uint32_t> hex32(std::string_view text) {
  uint32_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<std::array<uint8_t, 16>> hex128(std::string_view text) {
  if (text.size() != 32) return std::nullopt;
  std::array<uint8_t, 16> bytes{};
  for (size_t i = 0; i < 16; ++i) {
    unsigned value = 0;
    auto [end, error] = std::from_chars(text.data() + 2 * i, text.data() + 2 * i + 2, value, 16);
    if (error != std::errc{} || end != text.data() + 2 * i + 2) return std::nullopt;
    bytes[i] = static_cast<uint8_t>(value);
  }
  return bytes;
}

std::vector<std::string> fields(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string field; in >> field;) out.push_back(field);
  return out;
}

bool prefix_matches(const IpAddress& address, const RouteEntry& route) {
  if (address.v6 != route.destination.v6) return false;
  int bits = route.prefix_length;
  for (size_t i = 0; bits > 0; ++i, bits -= 8) {
    const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((address.bytes[i] & mask) != (route.destination.bytes[i] & mask)) return false;
  }
  return true;
}

bool is_loopback(const IpAddress& address) {
  if (!address.v6) return address.bytes[0] == 127;
  for (size_t i = 0; i < 15; ++i)
    if (address.bytes[i] != 0) return false;
  return address.bytes[15] == 1;
}

}  // namespace

std::optional<IpAddress> parse_ip_address(std::string_view text) {
  if (text.size() > 2 && text.front() == '[' && text.back() == ']')
    text = text.substr(1, text.size() - 2);
  const std::string literal(text);
  IpAddress address;
  if (inet_pton(AF_INET, literal.c_str(), address.bytes.data()) == 1) return address;
  address.v6 = true;
  if (inet_pton(AF_INET6, literal.c_str(), address.bytes.data()) == 1) return address;
  return std::nullopt;
}

std::vector<RouteEntry> parse_ipv4_routes(std::string_view proc_net_route) {
  // Iface Destination Gateway Flags RefCnt Use Metric Mask MTU Window IRTT; the addresses are
  // 32-bit numbers printed in hex in the kernel's byte order, which is the address's own byte
  // order read back on the same machine.
  std::vector<RouteEntry> routes;
  std::istringstream in{std::string(proc_net_route)};
  for (std::string line; std::getline(in, line);) {
    auto columns = fields(line);
    if (columns.size() < 8 || columns[0] == "Iface") continue;
    auto destination = hex32(columns[1]);
    auto flags = hex32(columns[3]);
    auto metric = hex32(columns[6]);
    auto mask = hex32(columns[7]);
    if (!destination || !flags || !metric || !mask || !(*flags & kRouteUp)) continue;
    RouteEntry route;
    route.interface = columns[0];
    std::memcpy(route.destination.bytes.data(), &*destination, 4);
    uint32_t mask_bytes = *mask;
    uint8_t mask_array[4];
    std::memcpy(mask_array, &mask_bytes, 4);
    for (uint8_t byte : mask_array)
      for (int bit = 7; bit >= 0 && (byte >> bit) & 1; --bit) ++route.prefix_length;
    route.metric = *metric;
    routes.push_back(std::move(route));
  }
  return routes;
}

std::vector<RouteEntry> parse_ipv6_routes(std::string_view proc_net_ipv6_route) {
  // destination, its prefix length, source, its prefix length, next hop, metric, refcount, use,
  // flags, interface: all hex but the interface's name.
  std::vector<RouteEntry> routes;
  std::istringstream in{std::string(proc_net_ipv6_route)};
  for (std::string line; std::getline(in, line);) {
    auto columns = fields(line);
    if (columns.size() < 10) continue;
    auto destination = hex128(columns[0]);
    auto prefix = hex32(columns[1]);
    auto metric = hex32(columns[5]);
    auto flags = hex32(columns[8]);
    if (!destination || !prefix || *prefix > 128 || !metric || !flags || !(*flags & kRouteUp))
      continue;
    RouteEntry route;
    route.interface = columns[9];
    route.destination.v6 = true;
    route.destination.bytes = *destination;
    route.prefix_length = static_cast<int>(*prefix);
    route.metric = *metric;
    routes.push_back(std::move(route));
  }
  return routes;
}

std::optional<std::string> route_interface(const std::vector<RouteEntry>& routes,
                                           const IpAddress& address) {
  if (is_loopback(address)) return "lo";
  const RouteEntry* best = nullptr;
  for (const auto& route : routes) {
    if (!prefix_matches(address, route)) continue;
    if (!best || route.prefix_length > best->prefix_length ||
        (route.prefix_length == best->prefix_length && route.metric < best->metric))
      best = &route;
  }
  if (!best) return std::nullopt;
  return best->interface;
}

Result<std::string> probe_route_interface(const NodeFs& node, const std::string& host) {
  std::vector<IpAddress> addresses;
  if (auto literal = parse_ip_address(host)) {
    addresses.push_back(*literal);
  } else {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (int code = getaddrinfo(host.c_str(), nullptr, &hints, &found); code != 0)
      return failf("Failed to resolve '{}': {}", host, gai_strerror(code));
    for (addrinfo* entry = found; entry; entry = entry->ai_next) {
      IpAddress address;
      if (entry->ai_family == AF_INET) {
        const auto* v4 = reinterpret_cast<const sockaddr_in*>(entry->ai_addr);
        std::memcpy(address.bytes.data(), &v4->sin_addr, 4);
      } else if (entry->ai_family == AF_INET6) {
        const auto* v6 = reinterpret_cast<const sockaddr_in6*>(entry->ai_addr);
        address.v6 = true;
        std::memcpy(address.bytes.data(), &v6->sin6_addr, 16);
      } else {
        continue;
      }
      addresses.push_back(address);
    }
    freeaddrinfo(found);
  }
  auto routes = parse_ipv4_routes(node.read("/proc/net/route").value_or(""));
  auto v6 = parse_ipv6_routes(node.read("/proc/net/ipv6_route").value_or(""));
  routes.insert(routes.end(), v6.begin(), v6.end());
  for (const auto& address : addresses)
    if (auto interface = route_interface(routes, address)) return *interface;
  return failf("No route to '{}' in {}proc/net/route or /proc/net/ipv6_route", host,
               node.root() == "/" ? "/" : node.root().string() + "/");
}

}  // namespace gl
