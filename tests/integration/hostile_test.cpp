// SPDX-License-Identifier: Apache-2.0
// The engine as an attacker, on a real systemd 252 booted privately: the mock SGLang runs as a
// service user in its `hostile` mode. At every start it plants links to root's files, FIFOs, hard
// links and garbage at each path a root helper (prepare-caches, record-exit, cache clear, status,
// events) touches, prints a line that looks like a CUDA OOM and a 3 MiB line without a newline,
// then crashes. Nothing outside the engine's own directories may change, every stop must still be
// recorded, and the crash-loop budget must still stop it.

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/mock_engine_suite.hpp"
#include "util/state_paths.hpp"

namespace {

namespace fs = std::filesystem;
namespace state_paths = gl::state_paths;
using gpulaunch::testing::event_of;
using gpulaunch::testing::ExecResult;
using gpulaunch::testing::MockEngineHost;
using gpulaunch::testing::MockEngineSuite;
using namespace std::chrono_literals;

const std::string kGpulaunch = GL_GPULAUNCH_BINARY;
const std::string kUser = "glhostile";
const std::string kName = "hostile";

// Root's files the engine aims at, inside the harness (its /etc, /root and /var are overlays).
const std::string kVictimFile = "/etc/gl-victim";
const std::string kSecretFile = "/root/gl-secret";
const std::string kVictimDirectory = "/var/lib/gl-victim-dir";

class Hostile : public MockEngineSuite<Hostile> {
 public:
  static MockEngineHost* new_host() {
    return new MockEngineHost(fs::path(GL_BINARY_DIR) / "hostile-work", kGpulaunch, GL_SOURCE_DIR);
  }

 protected:
  static ExecResult sh(const std::string& script) {
    return host().systemd().exec({"sh", "-c", script});
  }

  // What each victim holds, with its inode and times: any write, replacement or chmod shows.
  static std::string victims_fingerprint() {
    return sh("for f in " + kVictimFile + " " + kSecretFile + " " + kVictimDirectory + "/keep " +
              kVictimDirectory + "; do stat -c '%n %i %s %a %U %Y %Z' \"$f\"; done; cat " +
              kVictimFile + " " + kSecretFile + " " + kVictimDirectory + "/keep; ls -a " +
              kVictimDirectory)
        .out;
  }

  static nlohmann::json plan() {
    const fs::path home = state_paths::engine_home(kName);
    const fs::path cache = state_paths::default_cache_root(kName);
    auto entry = [](const fs::path& path, const std::string& kind, const std::string& target = "") {
      return nlohmann::json{{"path", path.string()}, {"kind", kind}, {"target", target}};
    };
    return nlohmann::json::array({
        // Root-owned: the engine must not even be able to plant these.
        entry(state_paths::events_file(kName), "symlink", kVictimFile),
        entry(state_paths::supervisor_file(kName), "fifo"),
        entry(state_paths::cache_stamp_directory(kName), "symlink", kVictimDirectory),
        entry(state_paths::snapshot_file(kName), "symlink", kVictimFile),
        // The engine's own: root must neither follow, block on, nor trust them.
        entry(home / "events.jsonl", "symlink", kVictimFile),
        entry(home / "supervisor.json", "fifo"),
        entry(cache / ".gpulaunch-fingerprint", "symlink", kSecretFile),
        entry(cache / "flashinfer", "symlink", kVictimDirectory),
        entry(cache / "torch_extensions" / "build.lock", "hardlink", kVictimFile),
        entry(cache / "tvm-ffi" / "stale.lock", "fifo"),
        entry(cache / "triton", "fifo"),
        entry(cache / "xdg" / "garbage.json", "garbage"),
    });
  }
};

TEST_F(Hostile, AHostileEngineChangesNothingOutsideItsOwnDirectoriesAndStillStaysDown) {
  ASSERT_EQ(sh("id -u " + kUser +
               " >/dev/null 2>&1 || useradd --system --no-create-home "
               "--shell /usr/sbin/nologin " +
               kUser)
                .exit_code,
            0);
  ASSERT_EQ(
      sh("printf 'victim\\n' >" + kVictimFile + " && chmod 0644 " + kVictimFile +
         " && printf 'root secret\\n' >" + kSecretFile + " && chmod 0600 " + kSecretFile +
         " && mkdir -p " + kVictimDirectory + " && printf 'keep\\n' >" + kVictimDirectory + "/keep")
          .exit_code,
      0);
  const fs::path plan_file = host().work() / "hostile-plan.json";
  std::ofstream(plan_file) << plan().dump(1);
  fs::permissions(plan_file, fs::perms::others_read, fs::perm_options::add);
  const std::string report = (state_paths::engine_home(kName) / "hostile-report.json").string();
  host().write_profile(kName, 31251,
                       "[service]\nuser = \"" + kUser +
                           "\"\n[restart]\ndelay = \"1s\"\nmax_delay = \"2s\"\nbudget = 3\n",
                       "MOCK_SGLANG_HOSTILE_PLAN = \"" + plan_file.string() +
                           "\"\nMOCK_SGLANG_HOSTILE_REPORT = \"" + report +
                           "\"\nMOCK_SGLANG_FLOOD_BYTES = \"3145728\"\n");
  host().set_mode(kName, "hostile");
  const std::string before = victims_fingerprint();
  ASSERT_NE(before.find("root secret"), std::string::npos) << before;

  auto up = gpulaunch("up " + kName + " --runtime --force");
  EXPECT_NE(up.exit_code, 0) << up.out;  // it never serves

  // The budget engages: three crashes in a row, then it stays down.
  nlohmann::json events;
  ASSERT_TRUE(eventually([&] { return has_event(events = events_of(kName), "crash-loop"); }, 120s))
      << events.dump(2) << "\n"
      << gpulaunch("logs " + kName + " -n 50").out;
  // Its planted line makes each stop read as a CUDA OOM: the engine may choose how its own stops
  // are classified (and so its own step-down), nothing more. Each stop counts against the budget.
  int failures = 0;
  for (const auto& event : events) failures += event["class"] == "cuda-oom";
  EXPECT_EQ(failures, 3) << events.dump(2);
  EXPECT_EQ(event_of(events, "cuda-oom")["evidence"],
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. (planted by a "
            "hostile engine)");
  auto status = status_of(kName);
  EXPECT_EQ(status["state"], "failed") << status.dump(2);
  EXPECT_EQ(status["consecutive_failures"], 3) << status.dump(2);

  // The engine really tried: its own paths took the plants, root's refused them.
  auto planted = nlohmann::json::parse(sh("cat " + report).out, nullptr, false);
  ASSERT_TRUE(planted.is_object()) << sh("cat " + report).out;
  for (const auto& root_owned :
       {state_paths::events_file(kName), state_paths::supervisor_file(kName),
        state_paths::cache_stamp_directory(kName), state_paths::snapshot_file(kName)})
    EXPECT_TRUE(planted[root_owned.string()].get<std::string>().starts_with("refused: "))
        << root_owned << ": " << planted.dump(1);
  EXPECT_EQ(planted[(state_paths::engine_home(kName) / "events.jsonl").string()], "planted");
  EXPECT_EQ(planted[(state_paths::default_cache_root(kName) / "flashinfer").string()], "planted");

  // An operator's clear on top of the plants, as root.
  auto clear = gpulaunch("cache clear " + kName);
  std::printf("cache clear over the plants (exit %d):\n%s\n", clear.exit_code, clear.out.c_str());

  // Nothing outside the engine's own directories changed, and root's secret was copied nowhere.
  EXPECT_EQ(victims_fingerprint(), before);
  EXPECT_EQ(sh("grep -rl 'root secret' /var/lib/gpulaunch /var/cache/gpulaunch /run/gpulaunch "
               "2>/dev/null")
                .out,
            "");
  // Root's history is regular files owned by root, readable by everyone, not by the engine.
  EXPECT_EQ(sh("stat -c '%F %U %a' " + state_paths::events_file(kName).string() + " " +
               state_paths::supervisor_file(kName).string())
                .out,
            "regular file root 644\nregular file root 644\n");

  // The 3 MiB line did not wedge forwarding: what the engine printed after it reached the journal.
  auto logs = gpulaunch("logs " + kName + " -n 400").out;
  EXPECT_NE(logs.find("mock-sglang: flood done, crashing"), std::string::npos)
      << logs.substr(0, 2000);
  gpulaunch("down " + kName + " --runtime --purge");
}

// Issue 28, item 5: an engine exiting 79 was recorded as "crash-loop budget spent" with no
// failure counted; 78, 81 and 200-244 passed the same way. Each is a crash now: it counts, and
// with budget 1 the next start stays down on gpulaunch's own decision.
TEST_F(Hostile, AnEngineExitingWithOneOfGpulaunchsStatusesIsAnOrdinaryCrash) {
  int port = 31260;
  for (const std::string code : {"78", "79", "81", "200", "244"}) {
    const std::string name = "verdict" + code;
    host().write_profile(
        name, port++, "[restart]\ndelay = \"1s\"\nmax_delay = \"1s\"\nbudget = 1\n",
        "MOCK_SGLANG_CRASH_EXIT = \"" + code + "\"\nMOCK_SGLANG_CRASH_AFTER = \"1\"\n");
    host().set_mode(name, "crash");
    gpulaunch("up " + name + " --runtime --force");
    nlohmann::json events;
    ASSERT_TRUE(eventually([&] { return has_event(events = events_of(name), "crash-loop"); }, 90s))
        << code << ": " << events.dump(2) << "\n"
        << gpulaunch("logs " + name + " -n 40").out;
    const auto crash = event_of(events, "crash");
    ASSERT_FALSE(crash.empty()) << code << ": " << events.dump(2);
    EXPECT_EQ(event_of(events, "config-error").dump(), "{}") << code << ": " << events.dump(2);
    EXPECT_EQ(event_of(events, "setup-failure").dump(), "{}") << code << ": " << events.dump(2);
    EXPECT_EQ(status_of(name)["consecutive_failures"], 1)
        << code << ": " << status_of(name).dump(2);
    auto logs = gpulaunch("logs " + name + " -n 80").out;
    EXPECT_NE(logs.find("engine exited with status " + code +
                        ", one of gpulaunch's own: counted as a crash; exiting with 1"),
              std::string::npos)
        << code << ": " << logs;
    gpulaunch("down " + name + " --runtime --purge");
  }
}

// Issue 28, item 3: record-exit read the whole invocation's journal: one 1 GiB engine line under
// memory_max = 300M got it OOM-killed at every stop, nothing was recorded and the budget never
// held. Its reads are bounded now: the stop is recorded and the budget stops the engine.
TEST_F(Hostile, AGigabyteOfOutputUnderASmallMemoryLimitStillRecordsEveryStop) {
  const std::string name = "flood";
  ASSERT_EQ(sh("id -u " + kUser +
               " >/dev/null 2>&1 || useradd --system --no-create-home "
               "--shell /usr/sbin/nologin " +
               kUser)
                .exit_code,
            0);
  host().write_profile(name, 31270,
                       "[service]\nuser = \"" + kUser +
                           "\"\nmemory_max = \"300M\"\n[restart]\ndelay = \"1s\"\nmax_delay = "
                           "\"1s\"\nbudget = 1\n",
                       "MOCK_SGLANG_FLOOD_BYTES = \"1073741824\"\n");
  host().set_mode(name, "hostile");
  gpulaunch("up " + name + " --runtime --force");
  nlohmann::json events;
  ASSERT_TRUE(eventually([&] { return has_event(events = events_of(name), "crash-loop"); }, 300s))
      << events.dump(2) << "\n"
      << gpulaunch("logs " + name + " -n 20").out.substr(0, 4000);
  EXPECT_EQ(status_of(name)["consecutive_failures"], 1) << status_of(name).dump(2);
  auto killed = sh("journalctl --no-pager -u gpulaunch-" + name +
                   ".service | grep -c 'oom-kill\\|Killed process' || true");
  EXPECT_EQ(killed.out, "0\n") << killed.out;
  gpulaunch("down " + name + " --runtime --purge");
}

}  // namespace
