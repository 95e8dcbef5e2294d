// SPDX-License-Identifier: Apache-2.0
#pragma once
// A unit's journal: its own output plus what systemd said about it, read; and gpulaunch's own
// entries, written. journal.cpp is the only file that includes sd-journal.

#include <chrono>
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

// Root reads what the engine wrote, so every read is bounded in memory whatever the journal holds
// (SECURITY.md): a field is read at most kJournalFieldBytes long (sd_journal_set_data_threshold,
// and the copy cut there), and invocation() keeps at most the last kInvocationEntries entries and
// kInvocationBytes of messages, read from the tail back, so its time is bounded too. `run`'s
// verdict, a traceback and an OOM line are at the end; a bound that is hit drops only the oldest.
inline constexpr size_t kJournalFieldBytes = 64 * 1024;
inline constexpr size_t kInvocationEntries = 20'000;
inline constexpr size_t kInvocationBytes = 16 * 1024 * 1024;
// kernel_since keeps at most this many matching lines, the newest.
inline constexpr size_t kKernelEntries = 256;

class Journal {
 public:
  virtual ~Journal() = default;
  // The last `count` entries of `unit`, oldest first.
  virtual Result<std::vector<JournalEntry>> tail(std::string_view unit, size_t count) = 0;
  // Entries after those, as they arrive, until `sink` returns false.
  virtual Result<void> follow(std::string_view unit,
                              const std::function<bool(const JournalEntry&)>& sink) = 0;
  // The lines one invocation of a unit wrote (_SYSTEMD_INVOCATION_ID=), oldest first: all of
  // them, or the newest within kInvocationEntries and kInvocationBytes.
  virtual Result<std::vector<JournalEntry>> invocation(std::string_view invocation_id) = 0;
  // Kernel messages (_TRANSPORT=kernel) since `since_usec` (realtime) that contain `text`:
  // kernel lines name no unit, so callers filter by what the line says.
  virtual Result<std::vector<JournalEntry>> kernel_since(uint64_t since_usec,
                                                         std::string_view text) = 0;
};

Result<std::unique_ptr<Journal>> open_journal();

// Writing. One native entry (sd_journal_sendv): each of `fields` is "NAME=value".
Result<void> journal_send(const std::vector<std::string>& fields);

// Whether `fd` is connected to the journal: systemd sets JOURNAL_STREAM=DEVICE:INODE for the
// stdout/stderr it connects there (systemd.exec(5), "$JOURNAL_STREAM"); a shell redirect or a
// pipe leaves the variable but changes the fd, so the fd's fstat must match it.
bool stream_is_journal(int fd);

// Waits, at most `limit`, until journald has read everything written to `fd` (a stream socket
// connected to it: SIOCOUTQ, the bytes it has not read, is 0). journald writes a line as it reads
// it, and one process's native entry and its stream lines come over different sockets: an entry
// sent after this is stored after those lines.
void wait_journal_stream_read(int fd, std::chrono::milliseconds limit);

}  // namespace gl
