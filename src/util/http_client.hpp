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

// A request is sent again, up to `times` more times, while `accept` refuses its answer (no answer
// in time, a 503, a body without what the caller needs). The retry takes the next free place in
// flight: it waits for no round of the others, so an error answered at once costs no throughput.
struct HttpRetry {
  int times = 0;
  std::function<bool(const HttpAnswer&)> accept;  // empty: any answer is accepted
};

// A request's last answer and how many times it was sent (0: not started by the deadline).
struct HttpReply {
  HttpAnswer answer;
  int sent = 0;
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // Every request, at most `concurrency` in flight, each retried as `retry` says; replies in the
  // requests' order. Nothing starts at or after `deadline`, and no exchange outlives it.
  virtual std::vector<HttpReply> exchange_all(const std::vector<HttpRequest>& requests,
                                              int concurrency,
                                              std::chrono::steady_clock::time_point deadline,
                                              const HttpRetry& retry = {}) = 0;
};

std::unique_ptr<HttpClient> http_client(const HttpUrl& url);

}  // namespace gl
