// SPDX-License-Identifier: Apache-2.0
#include "facts/routes.hpp"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "facts/facts.hpp"
#include "temp_dir.hpp"

namespace gl {
namespace {

// A node with a default route on eth0, the cluster fabric on a /16 over ens1f0 and a /24 inside
// it on ens1f1 (more specific), as the kernel prints /proc/net/route (little-endian hex).
constexpr const char* kIpv4Routes =
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
    "eth0\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
    "eth0\t0001A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n"
    "ens1f0\t0000000A\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n"
    "ens1f1\t0000000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
    "down0\t0000000A\t00000000\t0000\t0\t0\t0\tFFFFFFFF\t0\t0\t0\n";

// fd00::/64 on eth0, a default route through fd00::1 on eth0, fd10::/48 on ib0, ::1 on lo.
constexpr const char* kIpv6Routes =
    "fd000000000000000000000000000000 40 00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0\n"
    "fd100000000000000000000000000000 30 00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 00000100 00000001 00000000 00000001      ib0\n"
    "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
    "fd000000000000000000000000000001 00000400 00000002 00000000 00000003     eth0\n"
    "00000000000000000000000000000001 80 00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo\n";

std::string interface_for(std::string_view address) {
  auto routes = parse_ipv4_routes(kIpv4Routes);
  auto v6 = parse_ipv6_routes(kIpv6Routes);
  routes.insert(routes.end(), v6.begin(), v6.end());
  auto parsed = parse_ip_address(address);
  if (!parsed) return "<not an address>";
  return route_interface(routes, *parsed).value_or("<no route>");
}

TEST(Routes, TheMostSpecificRouteNamesTheInterface) {
  EXPECT_EQ(interface_for("10.0.0.1"), "ens1f1");  // the /24 beats the /16
  EXPECT_EQ(interface_for("10.0.7.1"), "ens1f0");
  EXPECT_EQ(interface_for("192.168.1.20"), "eth0");
  EXPECT_EQ(interface_for("8.8.8.8"), "eth0");  // the default route
}

TEST(Routes, RoutesThatAreNotUpAreLeftOut) {
  auto routes = parse_ipv4_routes(kIpv4Routes);
  EXPECT_EQ(routes.size(), 4u);
  for (const auto& route : routes) EXPECT_NE(route.interface, "down0");
}

TEST(Routes, Ipv6AndLoopback) {
  EXPECT_EQ(interface_for("fd10:0:0:5::2"), "ib0");
  EXPECT_EQ(interface_for("[fd00::7]"), "eth0");
  EXPECT_EQ(interface_for("2001:db8::1"), "eth0");  // the default route
  EXPECT_EQ(interface_for("::1"), "lo");
  EXPECT_EQ(interface_for("127.0.0.1"), "lo");  // the local table /proc/net/route leaves out
}

TEST(Routes, NamesAreNotAddresses) {
  EXPECT_FALSE(parse_ip_address("rank0.cluster"));
  EXPECT_FALSE(parse_ip_address("10.0.0"));
  EXPECT_FALSE(parse_ip_address(""));
}

TEST(Routes, WithoutAMatchingRouteTheProbeSaysSo) {
  testing::TempDir root;
  std::filesystem::create_directories(root.path() / "proc/net");
  std::ofstream(root.path() / "proc/net/route")
      << "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
         "ens1f1\t0000000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";
  NodeFs node(root.path());
  EXPECT_EQ(probe_route_interface(node, "10.0.0.1").value_or("<error>"), "ens1f1");
  auto none = probe_route_interface(node, "172.16.0.1");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message, "No route to '172.16.0.1' in " + root.path().string() +
                                      "/proc/net/route or /proc/net/ipv6_route");
}

// A facts file recorded on a rank carries its route, so `lock --facts` renders that rank's unit
// with that rank's interface, as `up` there does.
TEST(Routes, TheRendezvousRouteTravelsInTheFactsAndPinsTheSocketInterface) {
  Facts facts;
  EXPECT_EQ(facts.socket_interface(), std::nullopt);
  facts.rendezvous_route = RouteFact{"10.0.0.1", "ens1f1", ""};
  auto back = facts_from_json(facts_to_json(facts));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->socket_interface(), "ens1f1");
  back->rendezvous_route = RouteFact{"172.16.0.1", "", "No route to '172.16.0.1'"};
  EXPECT_EQ(back->socket_interface(), std::nullopt);
}

}  // namespace
}  // namespace gl
