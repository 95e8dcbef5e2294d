// SPDX-License-Identifier: Apache-2.0
// gpulaunch's own lines as native journal entries, on a real systemd 252 and journald booted
// privately (tests/integration/harness), with the mock SGLang driven into a CUDA OOM: the
// classified stop is found by priority and profile, carries its class and MESSAGE_ID, and the
// generated catalog explains it in `journalctl -x`; the engine's own lines pass unchanged.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "catalog/journal_messages.hpp"
#include "harness/mock_engine_suite.hpp"

namespace {

namespace fs = std::filesystem;
using gpulaunch::testing::event_of;
using gpulaunch::testing::MockEngineHost;
using gpulaunch::testing::MockEngineSuite;

const std::string kGpulaunch = GL_GPULAUNCH_BINARY;
const std::string kRestart = "[restart]\ndelay = \"1s\"\nmax_delay = \"4s\"\n";
// What the mock SGLang prints when it runs out of GPU memory (mock/sglang's launch_server.py,
// PyTorch's torch.OutOfMemoryError message): the engine's line, as the journal must keep it.
const std::string kEngineOomLine = "torch.OutOfMemoryError: CUDA out of memory.";

class JournalFields : public MockEngineSuite<JournalFields> {
 public:
  static MockEngineHost* new_host() {
    return new MockEngineHost(fs::path(GL_BINARY_DIR) / "journal-fields-work", kGpulaunch,
                              GL_SOURCE_DIR);
  }

 protected:
  // journalctl ARGS inside the private systemd, one JSON object per entry (-o json).
  static std::vector<nlohmann::json> journal(const std::vector<std::string>& args) {
    std::vector<std::string> argv{"journalctl", "--no-pager", "-o", "json"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<nlohmann::json> entries;
    std::istringstream lines(host().systemd().exec(argv).out);
    for (std::string line; std::getline(lines, line);) {
      auto entry = nlohmann::json::parse(line, nullptr, false);
      if (entry.is_object()) entries.push_back(std::move(entry));
    }
    return entries;
  }
  static std::string text(const nlohmann::json& entry, const std::string& field) {
    return entry.contains(field) && entry[field].is_string() ? entry[field].get<std::string>()
                                                             : std::string();
  }
};

TEST_F(JournalFields, ACudaOomStopIsAWarningWithItsClassAndTheCatalogExplainsIt) {
  host().write_profile("jfoom", 31311, kRestart);
  set_mode("jfoom", "cuda-oom");
  gpulaunch("up jfoom --runtime --force");  // the first start never serves
  set_mode("jfoom", "normal");
  ASSERT_TRUE(eventually([&] { return has_event(events_of("jfoom"), "cuda-oom"); }))
      << gpulaunch("logs jfoom -n 100").out;

  // journalctl -p warning GPULAUNCH_PROFILE=jfoom: the classified stop, nothing below warning.
  std::vector<nlohmann::json> warnings;
  ASSERT_TRUE(eventually([&] {
    warnings = journal({"-p", "warning", "GPULAUNCH_PROFILE=jfoom", "GPULAUNCH_CLASS=cuda-oom"});
    return !warnings.empty();
  })) << gpulaunch("logs jfoom -n 100").out;
  const nlohmann::json& stop = warnings.front();
  EXPECT_EQ(text(stop, "MESSAGE").rfind("gpulaunch: stop classified as cuda-oom: ", 0), 0u)
      << stop.dump(2);
  EXPECT_NE(text(stop, "MESSAGE").find(kEngineOomLine), std::string::npos) << stop.dump(2);
  EXPECT_EQ(text(stop, "PRIORITY"), "4");
  EXPECT_EQ(text(stop, "MESSAGE_ID"), std::string(gl::journal_message("cuda-oom")->id));
  EXPECT_EQ(text(stop, "SYSLOG_IDENTIFIER"), "gpulaunch");
  EXPECT_EQ(text(stop, "_TRANSPORT"), "journal");  // a native entry, not a stdout line
  for (const auto& entry : journal({"-p", "warning", "GPULAUNCH_PROFILE=jfoom"}))
    EXPECT_LE(std::stoi(text(entry, "PRIORITY")), 4) << entry.dump(2);

  // run's own lines are entries of the unit's invocation, as record-exit reads them back.
  const auto unit_lines = journal({"-u", "gpulaunch-jfoom.service"});
  bool saw_engine_oom = false, saw_run_start = false;
  for (const auto& entry : unit_lines) {
    const std::string message = text(entry, "MESSAGE");
    if (message.rfind(kEngineOomLine, 0) == 0) {
      saw_engine_oom = true;
      // The engine's line passes through its stdout unchanged, with no fields of ours.
      EXPECT_EQ(text(entry, "_TRANSPORT"), "stdout") << entry.dump(2);
      EXPECT_FALSE(entry.contains("GPULAUNCH_PROFILE")) << entry.dump(2);
    }
    if (message.rfind("gpulaunch: started engine, pid ", 0) == 0) {
      saw_run_start = true;
      EXPECT_EQ(text(entry, "_TRANSPORT"), "journal") << entry.dump(2);
      EXPECT_EQ(text(entry, "PRIORITY"), "6") << entry.dump(2);
      EXPECT_EQ(text(entry, "GPULAUNCH_PROFILE"), "jfoom") << entry.dump(2);
      EXPECT_FALSE(text(entry, "_SYSTEMD_INVOCATION_ID").empty()) << entry.dump(2);
    }
  }
  EXPECT_TRUE(saw_engine_oom);
  EXPECT_TRUE(saw_run_start);

  // The generated catalog, compiled by journalctl --update-catalog into the private /var (an
  // overlay: the host's database is not touched), explains the stop in journalctl -x.
  auto updated = host().systemd().exec(
      {"sh", "-c",
       "set -e; root=$(mktemp -d); mkdir -p \"$root/usr/lib/systemd/catalog\"; '" + kGpulaunch +
           "' internal-catalog > \"$root/usr/lib/systemd/catalog/gpulaunch.catalog\"; "
           "journalctl --root=\"$root\" --update-catalog; mkdir -p /var/lib/systemd/catalog; "
           "cp \"$root/var/lib/systemd/catalog/database\" /var/lib/systemd/catalog/database"});
  ASSERT_EQ(updated.exit_code, 0);
  const std::string explained = host()
                                    .systemd()
                                    .exec({"journalctl", "--no-pager", "-x",
                                           "GPULAUNCH_PROFILE=jfoom", "GPULAUNCH_CLASS=cuda-oom"})
                                    .out;
  EXPECT_NE(explained.find("Subject: " + std::string(gl::journal_message("cuda-oom")->subject)),
            std::string::npos)
      << explained;
  // @GPULAUNCH_PROFILE@ filled in from the entry: the fix names this profile.
  EXPECT_NE(explained.find("gpulaunch events jfoom"), std::string::npos) << explained;
  gpulaunch("down jfoom --runtime --purge");
}

// A stall: `run`'s stall line is a native entry (error, the stall's MESSAGE_ID) and still the
// first line at its cursor, with the engine's thread dump (stdout lines) after it, and
// record-exit's `stalled` stop a warning with its class.
TEST_F(JournalFields, AStallLineIsAnEntryBeforeTheThreadDumpItAnnounces) {
  const std::string wedge = (host().work() / "jfstall.wedge").string();
  fs::remove(wedge);
  host().write_profile("jfstall", 31312,
                       "liveness = \"generate\"\nliveness_interval = \"5s\"\n"
                       "liveness_timeout = \"10s\"\n" +
                           kRestart,
                       "MOCK_WEDGE_FILE = \"" + wedge + "\"\n");
  set_mode("jfstall", "normal");
  ASSERT_EQ(gpulaunch("up jfstall --runtime --force").exit_code, 0);
  std::this_thread::sleep_for(std::chrono::seconds(6));  // probed healthy once
  std::ofstream(wedge) << "wedge\n";
  nlohmann::json events;
  ASSERT_TRUE(eventually([&] { return has_event(events = events_of("jfstall"), "stalled"); },
                         std::chrono::seconds(60)))
      << gpulaunch("logs jfstall -n 80").out;
  fs::remove(wedge);
  const std::string cursor = event_of(events, "stalled")["journal_cursor"];
  const auto from_stall = journal({"-u", "gpulaunch-jfstall.service", "--cursor=" + cursor});
  ASSERT_FALSE(from_stall.empty());
  const nlohmann::json& stall = from_stall.front();
  EXPECT_EQ(text(stall, "MESSAGE").rfind("gpulaunch: stalled: no forward progress for ", 0), 0u)
      << stall.dump(2);
  EXPECT_EQ(text(stall, "_TRANSPORT"), "journal");
  EXPECT_EQ(text(stall, "PRIORITY"), "3");
  EXPECT_EQ(text(stall, "MESSAGE_ID"), std::string(gl::journal_message("stall")->id));
  bool dump_follows = false;
  for (const auto& entry : from_stall)
    dump_follows = dump_follows || text(entry, "MESSAGE") == "Fatal Python error: Aborted";
  EXPECT_TRUE(dump_follows) << gpulaunch("logs jfstall -n 80").out;
  const auto stops = journal({"GPULAUNCH_PROFILE=jfstall", "GPULAUNCH_CLASS=stalled"});
  ASSERT_FALSE(stops.empty()) << gpulaunch("logs jfstall -n 80").out;
  EXPECT_EQ(text(stops.front(), "PRIORITY"), "4");
  gpulaunch("down jfstall --runtime --purge");
}

}  // namespace
