// SPDX-License-Identifier: Apache-2.0
#pragma once
// gpulaunch's own lines (never the engine's output, never data on stdout), with a level and the
// journal fields that let an operator find them: `journalctl -p warning GPULAUNCH_PROFILE=NAME`,
// MESSAGE_ID= per kind of event (catalog/journal_messages, explained by `journalctl -x`).
// Where stdout/stderr is the journal (systemd/journal's stream_is_journal) each line is a native
// entry with PRIORITY= and the fields; anywhere else the text alone, on the stream, as before.
// logger.cpp is the one file that includes spdlog. Used by cli/ and run/ only: the folders below
// them return errors and lines, which these two print.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gl::logging {

enum class Level { debug, info, warning, error };

// syslog's priority for a level (journal PRIORITY=): 7, 6, 4, 3.
int journal_priority(Level level);

// What a line says beyond its text.
struct Fields {
  std::string_view kind{};   // catalog/journal_messages' kind: its MESSAGE_ID=; empty: none
  std::string exit_class{};  // GPULAUNCH_CLASS=: a classified stop's class
  std::string phase{};       // GPULAUNCH_PHASE=: the start phase a line says began
  // The output written after this line must come after it in the journal (`run`'s stall line:
  // the thread dump follows it).
  bool precedes_output = false;
};

// One line as it leaves the logger: the text and its journal fields, MESSAGE= first.
struct Record {
  Level level = Level::info;
  std::string message;
  std::vector<std::pair<std::string, std::string>> fields;  // name, value
  bool precedes_output = false;                             // Fields::precedes_output
};

// Where records go: the journal, a stream, or a test's list.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void write(const Record& record) = 0;
};

enum class Stream { out, err };

struct Config {
  Level threshold = Level::info;  // -v: debug; -q: warning
  Stream stream = Stream::err;    // where the command's own lines go outside the journal
  std::string profile;            // GPULAUNCH_PROFILE= on every line; empty: none
};

// The journal when `config.stream` is the journal, the stream otherwise.
void configure(const Config& config);
// Every record to `sink` (tests).
void configure(const Config& config, std::shared_ptr<RecordSink> sink);
// Whether configure() chose the journal.
bool to_journal();

void write(Level level, std::string_view message, const Fields& fields = {});
inline void debug(std::string_view message, const Fields& fields = {}) {
  write(Level::debug, message, fields);
}
inline void info(std::string_view message, const Fields& fields = {}) {
  write(Level::info, message, fields);
}
inline void warning(std::string_view message, const Fields& fields = {}) {
  write(Level::warning, message, fields);
}
inline void error(std::string_view message, const Fields& fields = {}) {
  write(Level::error, message, fields);
}

}  // namespace gl::logging
