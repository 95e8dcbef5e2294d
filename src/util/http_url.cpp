// SPDX-License-Identifier: Apache-2.0
#include "util/http_url.hpp"

namespace gl {

std::optional<HttpUrl> parse_http_url(std::string_view text) {
  constexpr std::string_view scheme = "http://";
  if (!text.starts_with(scheme)) return std::nullopt;
  text.remove_prefix(scheme.size());
  auto slash = text.find('/');
  std::string_view authority = text.substr(0, slash);
  HttpUrl url{"", "80", slash == std::string_view::npos ? "/" : std::string(text.substr(slash))};
  if (authority.starts_with('[')) {  // [v6]:port
    auto close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    url.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size() && authority[close + 1] == ':')
      url.port = std::string(authority.substr(close + 2));
  } else {
    auto colon = authority.rfind(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) url.port = std::string(authority.substr(colon + 1));
  }
  if (url.host.empty()) return std::nullopt;
  return url;
}

}  // namespace gl
