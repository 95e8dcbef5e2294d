// SPDX-License-Identifier: Apache-2.0
#pragma once
// A clock that moves only when something sleeps on it (or a test advances it): waits of minutes
// take no time, and a test can say how long was slept.

#include <chrono>
#include <cstdint>

#include "util/timekeeper.hpp"

namespace gl::testing {

class FakeTimekeeper final : public Timekeeper {
 public:
  explicit FakeTimekeeper(int64_t realtime_usec = 1'800'000'000'000'000)
      : realtime_usec_(realtime_usec) {}

  int64_t now_usec() override { return realtime_usec_; }
  std::chrono::steady_clock::time_point steady_now() override { return steady_; }
  void sleep(std::chrono::milliseconds duration) override {
    slept_ += duration;
    advance(duration);
  }

  void advance(std::chrono::milliseconds duration) {
    steady_ += duration;
    realtime_usec_ += std::chrono::duration_cast<std::chrono::microseconds>(duration).count();
  }
  // The sum of every sleep() so far.
  std::chrono::milliseconds slept() const { return slept_; }

 private:
  int64_t realtime_usec_;
  std::chrono::steady_clock::time_point steady_{};
  std::chrono::milliseconds slept_{0};
};

}  // namespace gl::testing
