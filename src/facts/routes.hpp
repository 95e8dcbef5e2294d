// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which network interface this node reaches an address through: the kernel's routing table as
// /proc/net/route and /proc/net/ipv6_route print it (no `ip` output parsed), longest prefix
// first, then the lowest metric, as the kernel picks among the main table's routes. NCCL and
// Gloo pick an interface by their own heuristics (Gloo on loopback, NCCL on whichever name sorts
// first); the unit pins both to this one.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "facts/node_fs.hpp"
#include "util/error.hpp"

namespace gl {

struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // network order; an IPv4 address in the first 4
};

struct RouteEntry {
  std::string interface;
  IpAddress destination;
  int prefix_length = 0;
  uint32_t metric = 0;
};

// An IPv4 or IPv6 literal (IPv6 may be in brackets); nullopt for anything else, names included.
std::optional<IpAddress> parse_ip_address(std::string_view text);

// The tables' text; lines that do not parse and routes that are not up are left out.
std::vector<RouteEntry> parse_ipv4_routes(std::string_view proc_net_route);
std::vector<RouteEntry> parse_ipv6_routes(std::string_view proc_net_ipv6_route);

// The interface of the most specific route to `address`; loopback addresses are "lo" (the
// kernel's local table, which /proc/net/route does not print). nullopt without a route.
std::optional<std::string> route_interface(const std::vector<RouteEntry>& routes,
                                           const IpAddress& address);

// The interface this node (its files under `node`'s root) uses for `host`, a literal or a name
// resolved by the system's resolver; the error names the host and why.
Result<std::string> probe_route_interface(const NodeFs& node, const std::string& host);

}  // namespace gl
