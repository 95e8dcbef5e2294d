// SPDX-License-Identifier: Apache-2.0
#pragma once
// `gpulaunch status` with no name: one row per profile (podman ps, kubectl get pods): name,
// engine, state, since when, restarts, the last failure's class, port, GPUs and the start phase.
// The rows are built from values (systemd's view of the unit, the supervisor's history, the
// installed snapshot), so the table and its JSON are tested without a manager.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/profile.hpp"
#include "supervise/history_records.hpp"
#include "systemd/manager.hpp"

namespace gl {

struct ServiceRow {
  std::string name;
  std::string engine;      // from the installed snapshot; "" when there is none
  std::string state;       // active, activating, restarting, failed, inactive, not-loaded
  std::string phase;       // the unit's STATUS= text
  int64_t since_usec = 0;  // realtime of the state's start; 0 when unknown
  uint32_t restarts = 0;
  std::string last_failure;  // the last classified stop's class, else systemd's result
  std::optional<long long> port;
  std::string endpoint;  // http://HOST:PORT
  std::vector<std::string> gpus;
};

// `unit` is nullopt (or not loaded) for an installed profile whose unit systemd does not have.
ServiceRow service_row(const std::string& name, const std::optional<UnitStatus>& unit,
                       const SupervisorState& supervisor, const Profile* installed);

// "45s ago", "12m ago", "3h ago", "2d ago"; "-" for 0.
std::string format_ago(int64_t since_usec, int64_t now_usec);

// The table, a header line and a row each, columns as wide as their widest cell; the state
// coloured by cli/colour where `colour`.
std::string status_table(const std::vector<ServiceRow>& rows, int64_t now_usec,
                         bool colour = false);

// One row as `status --json` prints it (beside the detail of `status NAME --json`).
nlohmann::ordered_json service_row_json(const ServiceRow& row, int64_t now_usec);

}  // namespace gl
