// SPDX-License-Identifier: Apache-2.0
#pragma once
// Keeps what the service would have told systemd (READY=1, STATUS=..., EXTEND_TIMEOUT_USEC=...).

#include <algorithm>
#include <string>
#include <vector>

#include "systemd/notify.hpp"

namespace gl::testing {

class FakeNotifier final : public Notifier {
 public:
  void notify(std::string_view state) override { sent.emplace_back(state); }
  std::optional<std::chrono::microseconds> watchdog_interval() override { return watchdog; }

  // The last message starting with `prefix` ("STATUS="), without it; "" when none was sent.
  std::string last(std::string_view prefix) const {
    for (auto it = sent.rbegin(); it != sent.rend(); ++it)
      if (it->starts_with(prefix)) return it->substr(prefix.size());
    return {};
  }

  std::vector<std::string> sent;
  std::optional<std::chrono::microseconds> watchdog;
};

}  // namespace gl::testing
