// SPDX-License-Identifier: Apache-2.0
#include "util/timekeeper.hpp"

#include <thread>

namespace gl {
namespace {

class SystemTimekeeper final : public Timekeeper {
 public:
  int64_t now_usec() override {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  std::chrono::steady_clock::time_point steady_now() override {
    return std::chrono::steady_clock::now();
  }
  void sleep(std::chrono::milliseconds duration) override { std::this_thread::sleep_for(duration); }
};

}  // namespace

Timekeeper& system_timekeeper() {
  static SystemTimekeeper clock;
  return clock;
}

}  // namespace gl
