// SPDX-License-Identifier: Apache-2.0
#pragma once
// The clock behind a narrow interface: what supervision waits for (backoff, GPU memory, a
// systemd job) and stamps its records with, so that tests run those waits on a fake one.
// (A Timekeeper, as gl::Clock names run/readiness's steady_clock.)

#include <chrono>
#include <cstdint>

namespace gl {

class Timekeeper {
 public:
  virtual ~Timekeeper() = default;
  // Realtime, microseconds since the epoch: what the history records and systemd's timestamps.
  virtual int64_t now_usec() = 0;
  // Monotonic: deadlines.
  virtual std::chrono::steady_clock::time_point steady_now() = 0;
  virtual void sleep(std::chrono::milliseconds duration) = 0;
};

// The system's clocks and std::this_thread::sleep_for.
Timekeeper& system_timekeeper();

}  // namespace gl
