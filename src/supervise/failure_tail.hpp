// SPDX-License-Identifier: Apache-2.0
#pragma once
// The journal tail `up` and `restart` print when a start fails: the engine's own lines (and
// systemd's), with the answers to gpulaunch's readiness probes, which the engine's access log
// writes once a second, counted into one line instead of filling the tail.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "systemd/journal.hpp"

namespace gl {

struct FailureTail {
  std::vector<std::string> lines;  // the newest `keep` lines that are not probe answers
  // "gpulaunch's /health probe: 14 answers 503, last 2s ago"; none where no line was one.
  std::optional<std::string> probes;
};

// The status of an access line answering GET `health_path` (catalog/access_log); none for any
// other line.
std::optional<int> probe_answer_status(std::string_view line, std::string_view health_path);

// `entries` oldest first (Journal::tail); `now_usec` realtime.
FailureTail failure_tail(const std::vector<JournalEntry>& entries, std::string_view health_path,
                         size_t keep, uint64_t now_usec);

// The path of a health URL: "http://127.0.0.1:8000/health" -> "/health".
std::string url_path(std::string_view url);

}  // namespace gl
