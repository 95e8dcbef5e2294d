// SPDX-License-Identifier: Apache-2.0
#pragma once
// An engine behind HttpClient: a function answers each sending of a request (it sees the request
// and how many sendings came before it), and each sending advances a fake clock by per_request
// shared among the `concurrency` in flight.

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "fakes/util/fake_timekeeper.hpp"
#include "util/http_client.hpp"

namespace gl::testing {

class FakeHttpClient final : public HttpClient {
 public:
  using Answer = std::function<HttpAnswer(const HttpRequest&, int index)>;
  FakeHttpClient(FakeTimekeeper& clock, Answer answer)
      : clock_(clock), answer_(std::move(answer)) {}

  // Each request in turn, retried at once as `retry` says; every sending takes per_request over
  // the concurrency from the clock, and none starts at or after the deadline.
  std::vector<HttpReply> exchange_all(const std::vector<HttpRequest>& requests, int concurrency,
                                      std::chrono::steady_clock::time_point deadline,
                                      const HttpRetry& retry) override {
    std::vector<HttpReply> replies(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
      HttpReply& reply = replies[i];
      while (reply.sent <= retry.times && clock_.steady_now() < deadline) {
        reply.answer = answer_(requests[i], sent_);
        ++reply.sent;
        ++sent_;
        seen.push_back(requests[i]);
        clock_.advance(per_request / std::max(1, concurrency));
        if (!retry.accept || retry.accept(reply.answer)) break;
      }
    }
    max_concurrency = std::max(max_concurrency, concurrency);
    return replies;
  }

  std::chrono::milliseconds per_request{100};
  std::vector<HttpRequest> seen;
  int max_concurrency = 0;

 private:
  FakeTimekeeper& clock_;
  Answer answer_;
  int sent_ = 0;
};

}  // namespace gl::testing
