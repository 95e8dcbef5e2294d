// SPDX-License-Identifier: Apache-2.0
#pragma once
// A profile's state as Prometheus metrics, in the text exposition format node_exporter's textfile
// collector reads (prometheus/common expfmt; node_exporter collector/textfile.go, v1.5.0): one
// HELP and TYPE per family, counters named *_total, label values escaped, and no sample
// timestamps (the collector refuses a file that has any). A pure function of what root read:
// the manager's view of the unit, the history, the caches, the clock.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "caches/cache_state.hpp"
#include "supervise/history.hpp"
#include "systemd/manager.hpp"

namespace gl {

struct ProfileMetricsInput {
  std::string profile;
  UnitStatus unit;        // ActiveState=, WatchdogTimestamp
  SupervisorState state;  // the history's
  // The caches' states (inspect_caches); nullopt when they could not be looked at.
  std::optional<std::vector<CacheStatus>> caches;
  int64_t now_usec = 0;  // realtime
};

// The families of every profile, each family once.
std::string metrics_text(const std::vector<ProfileMetricsInput>& profiles);

// Every family metrics_text can emit (the man page lists them; the dashboard's queries are
// checked against them).
struct MetricFamilyDoc {
  std::string_view name;
  std::string_view type;  // gauge, counter
  std::string_view help;
};
std::vector<MetricFamilyDoc> metric_families();

}  // namespace gl
