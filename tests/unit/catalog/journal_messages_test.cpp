// SPDX-License-Identifier: Apache-2.0
// The MESSAGE_ID table, the kinds that use it and the catalog file generated from it stay in
// step: every exit class and event kind has a well-formed ID of its own, the binary prints the
// same file, and journalctl reads that file back into its catalog database.

#include "catalog/journal_messages.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <fmt/core.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "supervise/exit_class.hpp"
#include "supervise/start_timeline.hpp"
#include "temp_dir.hpp"
#include "util/process.hpp"

namespace gl {
namespace {

using ::testing::HasSubstr;

TEST(JournalMessages, IdsAreUniqueWellFormed128BitIds) {
  std::set<std::string_view> ids, kinds;
  for (const JournalMessage& message : journal_messages()) {
    EXPECT_TRUE(kinds.insert(message.kind).second) << "kind twice: " << message.kind;
    EXPECT_TRUE(ids.insert(message.id).second) << "ID twice: " << message.id;
    // sd_id128_from_string's plain form: 32 hex digits; lowercase as journalctl prints them.
    EXPECT_EQ(message.id.size(), 32u) << message.kind;
    EXPECT_EQ(message.id.find_first_not_of("0123456789abcdef"), std::string_view::npos)
        << message.kind;
    EXPECT_NE(message.id, std::string(32, '0')) << message.kind;
    EXPECT_FALSE(message.subject.empty()) << message.kind;
    EXPECT_EQ(message.subject.find('\n'), std::string_view::npos) << message.kind;
    // A text line starting with "-- " would open another entry in the catalog file.
    EXPECT_FALSE(message.text.starts_with("-- ")) << message.kind;
    EXPECT_EQ(message.text.find("\n-- "), std::string_view::npos) << message.kind;
  }
}

TEST(JournalMessages, EveryExitClassAndEventKindHasARow) {
  for (int value = static_cast<int>(ExitClass::clean); value <= static_cast<int>(ExitClass::crash);
       ++value) {
    const std::string_view name = exit_class_name(static_cast<ExitClass>(value));
    ASSERT_TRUE(parse_exit_class(name)) << value;
    EXPECT_TRUE(journal_message(name)) << name;
  }
  for (std::string_view kind :
       {kReadyMessage, kPhaseMessage, kStallMessage, kStepDownMessage, kBackOffMessage,
        kCrashLoopStopMessage, kStableMessage, kKeepsDyingMessage, kOperatorResetMessage,
        kCacheQuarantinedMessage, kStartedEventKind})
    EXPECT_TRUE(journal_message(kind)) << kind;
  EXPECT_FALSE(journal_message(""));
  EXPECT_FALSE(journal_message("no-such-kind"));
}

TEST(JournalMessages, TheOomAndStallExplanationsNameTheFix) {
  EXPECT_THAT(std::string(journal_message("cuda-oom")->text), HasSubstr("engine.mem_fraction"));
  EXPECT_THAT(std::string(journal_message("cuda-oom")->text),
              HasSubstr("gpulaunch events @GPULAUNCH_PROFILE@"));
  EXPECT_THAT(std::string(journal_message("host-oom")->text), HasSubstr("service.memory_max"));
  EXPECT_THAT(std::string(journal_message("stalled")->text), HasSubstr("journalctl --cursor="));
}

TEST(JournalMessages, TheCatalogFileHasOneEntryPerRowInSystemdsFormat) {
  const std::string catalog = journal_catalog();
  for (const JournalMessage& message : journal_messages()) {
    EXPECT_THAT(catalog,
                HasSubstr(fmt::format("\n-- {}\nSubject: {}\nDefined-By: gpulaunch\n\n{}\n",
                                      message.id, message.subject, message.text)));
  }
  size_t entries = 0;
  std::istringstream lines(catalog);
  for (std::string line; std::getline(lines, line);) entries += line.starts_with("-- ");
  EXPECT_EQ(entries, journal_messages().size());
}

TEST(JournalMessages, TheBinaryPrintsTheSameCatalog) {
  auto printed = run_process(GL_GPULAUNCH_BINARY, {"internal-catalog"}, std::chrono::seconds(10));
  ASSERT_TRUE(printed) << printed.error().message;
  EXPECT_EQ(printed->exit_code, 0);
  EXPECT_EQ(printed->out, journal_catalog());
}

// journalctl --update-catalog reads the file into the database `journalctl -x` looks IDs up in.
TEST(JournalMessages, JournalctlCompilesTheCatalog) {
  if (!std::filesystem::exists("/usr/bin/journalctl")) GTEST_SKIP() << "no journalctl";
  testing::TempDir root;
  root.write("usr/lib/systemd/catalog/gpulaunch.catalog", journal_catalog());
  auto updated = run_process("/usr/bin/journalctl", {"--root=" + root.str(), "--update-catalog"},
                             std::chrono::seconds(30));
  ASSERT_TRUE(updated) << updated.error().message;
  ASSERT_EQ(updated->exit_code, 0) << updated->out;
  auto listed = run_process("/usr/bin/journalctl", {"--root=" + root.str(), "--list-catalog"},
                            std::chrono::seconds(30));
  ASSERT_TRUE(listed) << listed.error().message;
  for (const JournalMessage& message : journal_messages())
    EXPECT_THAT(listed->out,
                HasSubstr(fmt::format("{} gpulaunch: {}\n", message.id, message.subject)));
}

}  // namespace
}  // namespace gl
