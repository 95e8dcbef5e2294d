// SPDX-License-Identifier: Apache-2.0
#pragma once
// gpulaunch's one HTTP client (Boost.Beast, in http_client.cpp): `run`'s health probes, liveness
// probe and metrics reads, and the upgrade gate's requests all go through it, with the same
// Authorization header (the engine's API key) and a deadline on every exchange.
//
// Two faces: start_http_exchange() for `run`'s event loop (the caller's io_context), and
// HttpClient, a narrow blocking interface (a fake in tests/fakes/util/) for the gate, which
// posts a batch with a bounded number of requests in flight.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/http_url.hpp"

namespace boost::asio {
class io_context;
}

namespace gl {

// The status and body, or a nullopt status when nothing answered within the timeout.
struct HttpAnswer {
  std::optional<int> status;
  std::string body;
};

inline bool is_2xx(const std::optional<int>& status) {
  return status && *status >= 200 && *status < 300;
}

struct HttpRequest {
  std::string target;
  std::string body;  // empty: a GET; otherwise a POST of this JSON body
  std::chrono::milliseconds timeout{10'000};
  std::string api_key;  // sent as "Authorization: Bearer KEY" when not empty
};

// One exchange on `io`; `done` is called once, from io's thread.
void start_http_exchange(boost::asio::io_context& io, const HttpUrl& url, HttpRequest request,
                         std::function<void(HttpAnswer)> done);

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // Every request, at most `concurrency` in flight; answers in the requests' order. Requests
  // not started by `deadline` get a nullopt status without being sent.
  virtual std::vector<HttpAnswer> exchange_all(const std::vector<HttpRequest>& requests,
                                               int concurrency,
                                               std::chrono::steady_clock::time_point deadline) = 0;
};

std::unique_ptr<HttpClient> http_client(const HttpUrl& url);

}  // namespace gl
