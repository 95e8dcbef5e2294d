// SPDX-License-Identifier: Apache-2.0
#pragma once
// An engine behind HttpClient: a function answers each request (it sees the request and how
// many came before it), and each batch advances a fake clock by per_request for each round of
// `concurrency` requests.

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

  std::vector<HttpAnswer> exchange_all(const std::vector<HttpRequest>& requests, int concurrency,
                                       std::chrono::steady_clock::time_point) override {
    std::vector<HttpAnswer> answers;
    for (const auto& request : requests) {
      answers.push_back(answer_(request, sent_));
      ++sent_;
      seen.push_back(request);
    }
    max_concurrency = std::max(max_concurrency, concurrency);
    // Rounds of `concurrency` requests, each taking per_request.
    const int n = static_cast<int>(requests.size());
    const int rounds = (n + std::max(1, concurrency) - 1) / std::max(1, concurrency);
    clock_.advance(per_request * rounds);
    return answers;
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
