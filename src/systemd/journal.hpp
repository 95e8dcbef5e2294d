// SPDX-License-Identifier: Apache-2.0
#pragma once
// A unit's journal: its own output plus what systemd said about it. journal.cpp is the only
// file that includes sd-journal.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace gl {

struct JournalEntry {
  uint64_t realtime_usec = 0;
  std::string identifier;  // SYSLOG_IDENTIFIER, or _COMM
  uint32_t pid = 0;
  std::string message;
  // sd_journal_get_cursor's: where this entry is (`journalctl --cursor=`), so that `events` can
  // point at the line a thread dump starts with.
  std::string cursor{};
};

class Journal {
 public:
  virtual ~Journal() = default;
  // The last `count` entries of `unit`, oldest first.
  virtual Result<std::vector<JournalEntry>> tail(std::string_view unit, size_t count) = 0;
  // Entries after those, as they arrive, until `sink` returns false.
  virtual Result<void> follow(std::string_view unit,
                              const std::function<bool(const JournalEntry&)>& sink) = 0;
  // Every line one invocation of a unit wrote (_SYSTEMD_INVOCATION_ID=), oldest first.
  virtual Result<std::vector<JournalEntry>> invocation(std::string_view invocation_id) = 0;
  // Kernel messages (_TRANSPORT=kernel) since `since_usec` (realtime) that contain `text`:
  // kernel lines name no unit, so callers filter by what the line says.
  virtual Result<std::vector<JournalEntry>> kernel_since(uint64_t since_usec,
                                                         std::string_view text) = 0;
};

Result<std::unique_ptr<Journal>> open_journal();

}  // namespace gl
