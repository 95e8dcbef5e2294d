// SPDX-License-Identifier: Apache-2.0
#pragma once
// The service's side of Type=notify. notify.cpp is the only file that includes sd-daemon.

#include <chrono>
#include <memory>
#include <optional>
#include <string_view>

namespace gl {

class Notifier {
 public:
  virtual ~Notifier() = default;
  virtual void notify(std::string_view state) = 0;  // "READY=1", "STATUS=...", ...
  // WatchdogSec= as systemd passed it to this process, if set.
  virtual std::optional<std::chrono::microseconds> watchdog_interval() = 0;
};

std::unique_ptr<Notifier> systemd_notifier();

}  // namespace gl
