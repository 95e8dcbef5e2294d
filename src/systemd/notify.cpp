// SPDX-License-Identifier: Apache-2.0
#include "systemd/notify.hpp"

#include <cstdlib>
#include <mutex>
#include <string>

#include <fmt/core.h>

#include "systemd/libsystemd.hpp"

namespace gl {
namespace {

// sd_notify(3) and sd_watchdog_enabled(3) read $NOTIFY_SOCKET and $WATCHDOG_USEC and do nothing
// without them: a command run by hand never loads libsystemd for them.
// A library that cannot load is said once on stderr (the journal, under systemd): the start would
// otherwise time out without a word.
bool systemd_asks(const char* variable) {
  const char* value = std::getenv(variable);
  if (value == nullptr || *value == '\0') return false;
  const auto loaded = libsystemd::load();
  if (!loaded) {
    static std::once_flag said;
    std::call_once(said, [&] { fmt::print(stderr, "gpulaunch: {}\n", loaded.error().message); });
  }
  return loaded.has_value();
}

class SdNotifier final : public Notifier {
 public:
  void notify(std::string_view state) override {
    if (!systemd_asks("NOTIFY_SOCKET")) return;
    const std::string text(state);
    libsystemd::sym_sd_notify(0, text.c_str());
  }

  std::optional<std::chrono::microseconds> watchdog_interval() override {
    if (!systemd_asks("WATCHDOG_USEC")) return std::nullopt;
    uint64_t usec = 0;
    if (libsystemd::sym_sd_watchdog_enabled(0, &usec) <= 0) return std::nullopt;
    return std::chrono::microseconds{usec};
  }
};

}  // namespace

std::unique_ptr<Notifier> systemd_notifier() {
  return std::make_unique<SdNotifier>();
}

}  // namespace gl
