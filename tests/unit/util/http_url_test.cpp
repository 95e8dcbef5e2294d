// SPDX-License-Identifier: Apache-2.0
// The engine's URL (`run`'s health URL, the gate's host): host, port and path, v6 hosts in
// brackets, and what is refused.

#include "util/http_url.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

TEST(HttpUrl, HostPortAndPath) {
  auto url = parse_http_url("http://127.0.0.1:30000/health");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->host, "127.0.0.1");
  EXPECT_EQ(url->port, "30000");
  EXPECT_EQ(url->target, "/health");
}

TEST(HttpUrl, PortEightyAndRootPathWhenTheUrlNamesNone) {
  auto url = parse_http_url("http://engine");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->host, "engine");
  EXPECT_EQ(url->port, "80");
  EXPECT_EQ(url->target, "/");
}

TEST(HttpUrl, AVersionSixHostIsInBrackets) {
  auto url = parse_http_url("http://[::1]:8000/v1/models");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->port, "8000");
  EXPECT_EQ(url->target, "/v1/models");
}

TEST(HttpUrl, RefusesOtherSchemesNoHostAndAnUnclosedBracket) {
  EXPECT_FALSE(parse_http_url("https://127.0.0.1:8000/health"));
  EXPECT_FALSE(parse_http_url("http://:8000/health"));
  EXPECT_FALSE(parse_http_url("http://[::1:8000/health"));
  EXPECT_FALSE(parse_http_url(""));
}

}  // namespace
}  // namespace gl
