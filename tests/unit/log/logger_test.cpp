// SPDX-License-Identifier: Apache-2.0
// The logger's choices: which lines pass the threshold (-v/-q), the journal fields each carries,
// the priority of each level; the records reach a fake sink in place of the journal.

#include "log/logger.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "catalog/journal_messages.hpp"

namespace gl::logging {
namespace {

class FakeSink : public RecordSink {
 public:
  void write(const Record& record) override { records.push_back(record); }
  std::vector<Record> records;
};

std::optional<std::string> field(const Record& record, std::string_view name) {
  for (const auto& [key, value] : record.fields)
    if (key == name) return value;
  return std::nullopt;
}

class LoggerTest : public ::testing::Test {
 protected:
  std::shared_ptr<FakeSink> use(Level threshold, std::string profile = "") {
    auto sink = std::make_shared<FakeSink>();
    configure(Config{threshold, Stream::err, std::move(profile)}, sink);
    return sink;
  }
  // Later tests and the rest of the binary get the default: lines on stderr.
  void TearDown() override { configure(Config{}); }
};

TEST_F(LoggerTest, TheDefaultThresholdDropsDebugLinesOnly) {
  auto sink = use(Level::info);
  debug("probing 127.0.0.1:8080");
  info("starting gpulaunch-k26.service");
  warning("warning: could not reset the failure count");
  error("Failed to start gpulaunch-k26.service: job failed");
  ASSERT_EQ(sink->records.size(), 3u);
  EXPECT_EQ(sink->records[0].message, "starting gpulaunch-k26.service");
  EXPECT_EQ(sink->records[1].level, Level::warning);
  EXPECT_EQ(sink->records[2].level, Level::error);
}

TEST_F(LoggerTest, VerboseKeepsDebugAndQuietKeepsWarningsAndErrors) {
  auto verbose = use(Level::debug);
  debug("probing");
  EXPECT_EQ(verbose->records.size(), 1u);
  auto quiet = use(Level::warning);
  debug("probing");
  info("restarting gpulaunch-k26.service");
  warning("warning: x");
  error("Failed to restart");
  ASSERT_EQ(quiet->records.size(), 2u);
  EXPECT_EQ(quiet->records[0].message, "warning: x");
  EXPECT_EQ(quiet->records[1].message, "Failed to restart");
}

TEST_F(LoggerTest, AClassifiedStopCarriesProfileClassAndTheClassMessageId) {
  auto sink = use(Level::info, "k26-ar");
  Fields fields;
  fields.kind = "cuda-oom";
  fields.exit_class = "cuda-oom";
  warning("gpulaunch: stop classified as cuda-oom: torch.OutOfMemoryError", fields);
  ASSERT_EQ(sink->records.size(), 1u);
  const Record& record = sink->records[0];
  EXPECT_EQ(field(record, "MESSAGE"),
            "gpulaunch: stop classified as cuda-oom: torch.OutOfMemoryError");
  EXPECT_EQ(field(record, "GPULAUNCH_PROFILE"), "k26-ar");
  EXPECT_EQ(field(record, "GPULAUNCH_CLASS"), "cuda-oom");
  EXPECT_EQ(field(record, "MESSAGE_ID"), std::string(journal_message("cuda-oom")->id));
  EXPECT_FALSE(field(record, "GPULAUNCH_PHASE"));
}

TEST_F(LoggerTest, APhaseLineCarriesItsPhaseAndAPlainLineNoEventFields) {
  auto sink = use(Level::info);
  Fields phase;
  phase.kind = kPhaseMessage;
  phase.phase = "weights";
  info("gpulaunch: phase weights", phase);
  info("gpulaunch: started engine, pid 12");
  ASSERT_EQ(sink->records.size(), 2u);
  EXPECT_EQ(field(sink->records[0], "GPULAUNCH_PHASE"), "weights");
  EXPECT_EQ(field(sink->records[0], "MESSAGE_ID"), std::string(journal_message("phase")->id));
  // No profile configured (a CLI command): no GPULAUNCH_PROFILE=, and no kind: no MESSAGE_ID=.
  EXPECT_THAT(sink->records[1].fields, ::testing::ElementsAre(::testing::Pair(
                                           "MESSAGE", "gpulaunch: started engine, pid 12")));
}

TEST_F(LoggerTest, AMessageWithBracesIsNotAFormatString) {
  auto sink = use(Level::info);
  error("Failed to parse '{}': {\"a\": 1}");
  ASSERT_EQ(sink->records.size(), 1u);
  EXPECT_EQ(sink->records[0].message, "Failed to parse '{}': {\"a\": 1}");
}

TEST_F(LoggerTest, AMessageOnTheTerminalHasItsEscapesShownNotRun) {
  // A path an engine or a model's owner chose, quoted in an error: OSC 52 would set root's
  // clipboard, the newline would forge a second line.
  configure(Config{});
  ::testing::internal::CaptureStderr();
  error("Failed to open '/m/x\x1b]52;c;Y3VybA==\x07\nerror: forged': gone");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "Failed to open '/m/x\\x1b]52;c;Y3VybA==\\x07\\x0aerror: forged': gone\n");
}

TEST(JournalPriority, LevelsAreSyslogPriorities) {
  // syslog(3): LOG_ERR 3, LOG_WARNING 4, LOG_INFO 6, LOG_DEBUG 7: what journalctl -p filters on.
  EXPECT_EQ(journal_priority(Level::error), 3);
  EXPECT_EQ(journal_priority(Level::warning), 4);
  EXPECT_EQ(journal_priority(Level::info), 6);
  EXPECT_EQ(journal_priority(Level::debug), 7);
}

}  // namespace
}  // namespace gl::logging
