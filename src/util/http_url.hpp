// SPDX-License-Identifier: Apache-2.0
#pragma once
// An engine's URL as `run` is given it (http://host:port/path; a v6 host in brackets): where the
// health probe, the liveness probe, the metrics reads and the upgrade gate's requests go.

#include <optional>
#include <string>
#include <string_view>

namespace gl {

struct HttpUrl {
  std::string host;    // without brackets
  std::string port;    // "80" when the URL names none
  std::string target;  // "/" when the URL has no path
};

// nullopt: not http://, no host, or an unclosed '['.
std::optional<HttpUrl> parse_http_url(std::string_view text);

}  // namespace gl
