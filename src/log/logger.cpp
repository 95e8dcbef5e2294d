// SPDX-License-Identifier: Apache-2.0
#include "log/logger.hpp"

#include <cstdio>
#include <mutex>
#include <thread>

#include <fmt/core.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>

#include "catalog/journal_messages.hpp"
#include "systemd/journal.hpp"
#include "util/terminal_text.hpp"

namespace gl::logging {
namespace {

constexpr std::string_view kIdentifier = "gpulaunch";

// spdlog 1.10's records carry no fields of their own: write() hands the line's fields to the
// sink through this, on the same thread (the logger is synchronous).
thread_local const Record* pending = nullptr;

spdlog::level::level_enum spdlog_level(Level level) {
  switch (level) {
    case Level::debug:
      return spdlog::level::debug;
    case Level::info:
      return spdlog::level::info;
    case Level::warning:
      return spdlog::level::warn;
    case Level::error:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

std::FILE* file_of(Stream stream) {
  return stream == Stream::out ? stdout : stderr;
}

// Each record as its text alone, one line, flushed so it keeps its order with other output.
class StreamSink final : public RecordSink {
 public:
  explicit StreamSink(Stream stream) : stream_(stream) {}
  void write(const Record& record) override {
    // A message may quote untrusted text (a path, an engine line): escaped for the terminal.
    fmt::print(file_of(stream_), "{}\n", terminal_text(record.message));
    std::fflush(file_of(stream_));
  }

 private:
  Stream stream_;
};

// Each record as a native journal entry with its fields. The stream's lines written before it
// (`run`: the engine's output on stdout) are read by journald first, so the entry follows them.
class JournalSink final : public RecordSink {
  static constexpr std::chrono::milliseconds kSettle{100};

 public:
  explicit JournalSink(Stream stream) : stream_(stream) {}
  void write(const Record& record) override {
    std::vector<std::string> fields;
    fields.reserve(record.fields.size() + 2);
    for (const auto& [name, value] : record.fields) fields.push_back(name + "=" + value);
    fields.push_back(fmt::format("PRIORITY={}", journal_priority(record.level)));
    fields.push_back(fmt::format("SYSLOG_IDENTIFIER={}", kIdentifier));
    std::fflush(file_of(stream_));
    wait_journal_stream_read(::fileno(file_of(stream_)), std::chrono::seconds(2));
    // Not lost when the socket refuses it: the stream still reaches the journal.
    if (!journal_send(fields)) return StreamSink(stream_).write(record);
    // journald reads the native socket and the stream in turns: give it the time to store this
    // entry before the output that must follow it arrives on the stream.
    if (record.precedes_output) std::this_thread::sleep_for(kSettle);
  }

 private:
  Stream stream_;
};

// The spdlog sink: spdlog filters by level; the record, fields included, goes to our sink.
class RecordSinkAdapter final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit RecordSinkAdapter(std::shared_ptr<RecordSink> sink) : sink_(std::move(sink)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    if (pending) {
      sink_->write(*pending);
      return;
    }
    Record record;
    record.message.assign(message.payload.data(), message.payload.size());
    record.fields.emplace_back("MESSAGE", record.message);
    sink_->write(record);
  }
  void flush_() override {}

 private:
  std::shared_ptr<RecordSink> sink_;
};

struct State {
  Config config;
  bool journal = false;
  std::shared_ptr<spdlog::logger> logger;
};

State make_state(const Config& config, std::shared_ptr<RecordSink> sink, bool journal) {
  State state{config, journal,
              std::make_shared<spdlog::logger>(
                  "gpulaunch", std::make_shared<RecordSinkAdapter>(std::move(sink)))};
  state.logger->set_level(spdlog_level(config.threshold));
  return state;
}

State& state() {
  static State current = make_state(Config{}, std::make_shared<StreamSink>(Stream::err), false);
  return current;
}

}  // namespace

int journal_priority(Level level) {
  switch (level) {
    case Level::debug:
      return 7;  // LOG_DEBUG
    case Level::info:
      return 6;  // LOG_INFO
    case Level::warning:
      return 4;  // LOG_WARNING
    case Level::error:
      return 3;  // LOG_ERR
  }
  return 6;
}

void configure(const Config& config) {
  const bool journal = stream_is_journal(::fileno(file_of(config.stream)));
  std::shared_ptr<RecordSink> sink;
  if (journal)
    sink = std::make_shared<JournalSink>(config.stream);
  else
    sink = std::make_shared<StreamSink>(config.stream);
  state() = make_state(config, std::move(sink), journal);
}

void configure(const Config& config, std::shared_ptr<RecordSink> sink) {
  state() = make_state(config, std::move(sink), false);
}

bool to_journal() {
  return state().journal;
}

void write(Level level, std::string_view message, const Fields& fields) {
  State& current = state();
  if (!current.logger->should_log(spdlog_level(level))) return;
  Record record{level, std::string(message), {}, fields.precedes_output};
  record.fields.emplace_back("MESSAGE", record.message);
  if (auto row = journal_message(fields.kind)) record.fields.emplace_back("MESSAGE_ID", row->id);
  if (!current.config.profile.empty())
    record.fields.emplace_back("GPULAUNCH_PROFILE", current.config.profile);
  if (!fields.exit_class.empty()) record.fields.emplace_back("GPULAUNCH_CLASS", fields.exit_class);
  if (!fields.phase.empty()) record.fields.emplace_back("GPULAUNCH_PHASE", fields.phase);
  pending = &record;
  current.logger->log(spdlog_level(level), spdlog::string_view_t(message.data(), message.size()));
  pending = nullptr;
}

}  // namespace gl::logging
