// SPDX-License-Identifier: Apache-2.0
#pragma once
// The engine's health URL as `run` is given it (http://host:port/path; a v6 host in brackets):
// where the health probe, the liveness probe and the metrics reads go.

#include <optional>
#include <string>
#include <string_view>

namespace gl {

struct HealthUrl {
  std::string host;    // without brackets
  std::string port;    // "80" when the URL names none
  std::string target;  // "/" when the URL has no path
};

// nullopt: not http://, no host, or an unclosed '['.
std::optional<HealthUrl> parse_health_url(std::string_view text);

}  // namespace gl
