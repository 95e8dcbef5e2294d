// SPDX-License-Identifier: Apache-2.0
#include "systemd/notify.hpp"

#include <string>

#include <systemd/sd-daemon.h>

namespace gl {
namespace {

class SdNotifier final : public Notifier {
 public:
  void notify(std::string_view state) override {
    const std::string text(state);
    sd_notify(0, text.c_str());  // without NOTIFY_SOCKET (run by hand) this is a no-op
  }

  std::optional<std::chrono::microseconds> watchdog_interval() override {
    uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) <= 0) return std::nullopt;
    return std::chrono::microseconds{usec};
  }
};

}  // namespace

std::unique_ptr<Notifier> systemd_notifier() {
  return std::make_unique<SdNotifier>();
}

}  // namespace gl
