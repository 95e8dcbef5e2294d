// SPDX-License-Identifier: Apache-2.0
#pragma once
// What happened to a profile's engine, kept where state_paths puts it: events.jsonl (one event
// per line, appended, for `gpulaunch events`) and supervisor.json (the few numbers the next start
// decides from), replaced atomically. Both live in a root-owned directory and only root writes
// them (record-exit, peer-failed, restart, up); `run`, as the service user, only reads. Every
// open goes through safe_file: no link followed, regular files only, bounded; a bad file is
// reported and replaced, never a crash or a hang.

#include <sys/types.h>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "supervise/history_records.hpp"
#include "util/error.hpp"

namespace gl {

// How root writes the history: safe_file's functions, or a test's stand-in for a full disk.
struct HistoryWriter {
  using Write =
      std::function<Result<void>(int directory_fd, std::string_view name, std::string_view content,
                                 mode_t mode, const std::string& shown)>;
  Write replace;  // default: write_atomically_at
  Write append;   // default: append_at
};

// Where one profile's history is: state_paths' places, or a test's.
struct HistoryPlace {
  std::filesystem::path directory;          // events.jsonl, supervisor.json
  std::filesystem::path runtime_directory;  // the unrecorded-stop marker (a tmpfs)
  std::string events_name;
  std::string supervisor_name;
  std::string marker_name;
  // Whose directories they are: root's (0755) for a unit, or the user's own (0700) for
  // `run --foreground`, which writes its history itself.
  uid_t owner = 0;
};

HistoryPlace history_place(std::string_view profile);

// The bounds every read of the history takes, and the mode of its files.
inline constexpr size_t kMaxSupervisorStateBytes = 64 * 1024;
inline constexpr size_t kMaxEventsBytes = 16 * 1024 * 1024;
inline constexpr mode_t kHistoryFileMode = 0644;
// Events as events.jsonl holds them: one JSON object a line.
std::string events_text(const std::vector<SupervisorEvent>& events);

class History {
 public:
  explicit History(std::string_view profile) : History(history_place(profile)) {}
  explicit History(HistoryPlace place, HistoryWriter writer = {});

  // For anyone (`run` as the service user, `status`, `events`): nothing is created or changed;
  // defaults when nothing was recorded yet, an error when a file is bad.
  Result<SupervisorState> state() const;
  // The last `count` events, oldest first, from events.jsonl and then events.jsonl.1 before it;
  // lines that do not parse are skipped. An error when either cannot be read.
  Result<std::vector<SupervisorEvent>> events(size_t count) const;
  // Why record-exit could not record a stop, while that holds.
  Result<std::optional<std::string>> unrecorded() const;

  // Root only; the directory is created root-owned (0755) or refused when anyone else could
  // write it.
  struct Current {
    SupervisorState state;
    std::string problem;  // a bad supervisor.json, to report once: it is replaced at save()
  };
  Current state_to_update() const;
  // Makes the directory root's (0755) before systemd would make it, under the unit's UMask=, as
  // the parent of the engine's StateDirectory=.
  Result<void> create() const;
  Result<void> save(const SupervisorState& state) const;
  // Appends one line. Anything but a regular file at the name (a link, a FIFO, a hard link) is
  // replaced by a fresh file: the answer then says so, in one line, for the caller to report.
  // Past 4 MiB the file is first renamed to events.jsonl.1 (replacing the one before), so the
  // history keeps a bounded tail that every read can take whole.
  Result<std::string> append(const SupervisorEvent& event) const;
  Result<void> mark_unrecorded(std::string_view why) const;
  Result<void> clear_unrecorded() const;

  const std::filesystem::path& directory() const { return place_.directory; }

 private:
  HistoryPlace place_;
  HistoryWriter writer_;
};

}  // namespace gl
