// SPDX-License-Identifier: Apache-2.0
// Upgrade gates on a real systemd 252 booted privately (tests/integration/harness): the mock
// SGLang's answers and speed follow its release (mock/sglang: a "+mock.gibberish" release answers
// with scrambled words, "+mock.slow5x" steps five times slower, "+mock.flaky" answers every third
// completion with a 503). A profile's gate recorded on the good release; then an upgrade to each
// (a venv of that release: a changed unit): another good release passes, gibberish and the slow
// one are rolled back with the gate's message, the flaky-but-correct one is kept. One booted
// systemd for all of it; the mock loads in a second and the gate's load is 8 requests of 8
// tokens, so the whole suite stays under a minute.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/mock_engine_suite.hpp"

namespace {

namespace fs = std::filesystem;
using gpulaunch::testing::MockEngineHost;
using gpulaunch::testing::MockEngineSuite;

const std::string kGpulaunch = GL_GPULAUNCH_BINARY;
const fs::path kWork = fs::path(GL_BINARY_DIR) / "upgrade-gate-work";

class UpgradeGate : public MockEngineSuite<UpgradeGate> {
 public:
  static MockEngineHost* new_host() { return new MockEngineHost(kWork, kGpulaunch, GL_SOURCE_DIR); }

 protected:
  // A venv of the mock at RELEASE (0.5.6+mock.FLAW): what an upgrade installs.
  static std::string venv(const std::string& flaw) {
    const fs::path path = kWork / ("venv-" + flaw);
    if (!fs::exists(path / "bin")) {
      const std::string install = "MOCK_SGLANG_VERSION='0.5.6+mock." + flaw + "' bash '" +
                                  (fs::path(GL_SOURCE_DIR) / "mock/install.sh").string() + "' '" +
                                  path.string() + "' >/dev/null";
      EXPECT_EQ(std::system(install.c_str()), 0) << install;
    }
    return path.string();
  }
  static void write_profile(const std::string& flaw) {
    std::ofstream(kWork / "profiles" / "gated.toml")
        << "[engine]\nkind = \"sglang\"\nvenv = \"" << venv(flaw) << "\"\n"
        << "[model]\npath = \"/models/mock\"\n"
        << "[server]\nport = 31421\nready_timeout = \"20s\"\n"
        << "[gate]\nprompts = [\"The capital of France is\", \"2 + 2 =\"]\nmax_tokens = 8\n"
        << "requests = 8\nconcurrency = 4\nmax_duration = \"30s\"\n"
        << "[env]\nMOCK_SGLANG_LOAD_SECONDS = \"1\"\n";
  }
  static bool has(const std::string& out, const std::string& text) {
    return out.find(text) != std::string::npos;
  }
};

TEST_F(UpgradeGate, AGoodUpgradePassesGibberishAndSlowOnesAreRolledBackAFlakyOneIsKept) {
  write_profile("good");
  auto first = gpulaunch("up gated --runtime --force");
  ASSERT_EQ(first.exit_code, 0) << first.out;
  EXPECT_FALSE(has(first.out, "gate:")) << first.out;  // a first install is no change to gate
  // Not recorded yet: a change is started without a gate, and says so.
  write_profile("flaky");
  auto unrecorded = gpulaunch("up gated --runtime --force");
  ASSERT_EQ(unrecorded.exit_code, 0) << unrecorded.out;
  EXPECT_TRUE(has(unrecorded.out, "gate: no record for 'gated' yet")) << unrecorded.out;
  EXPECT_FALSE(has(unrecorded.out, "gate: asking")) << unrecorded.out;  // nothing to compare with
  write_profile("good");
  ASSERT_EQ(gpulaunch("up gated --runtime --force").exit_code, 0);
  auto recorded = gpulaunch("gate record gated");
  ASSERT_EQ(recorded.exit_code, 0) << recorded.out;
  EXPECT_TRUE(has(recorded.out,
                  "recorded the gate of 'gated' into /var/lib/gpulaunch/gated/"
                  "gate.json"))
      << recorded.out;
  auto checked = gpulaunch("gate check gated");
  EXPECT_EQ(checked.exit_code, 0) << checked.out;

  // A good upgrade (another release that answers as the recorded one, as fast): kept.
  write_profile("good2");
  auto good = gpulaunch("up gated --runtime --force");
  EXPECT_EQ(good.exit_code, 0) << good.out;
  EXPECT_TRUE(has(good.out, "gate: passed: answers as recorded")) << good.out;
  EXPECT_FALSE(has(good.out, "retried")) << good.out;
  EXPECT_FALSE(has(good.out, "rolled back")) << good.out;

  // Gibberish: the prompt that differs, where, and the rollback.
  write_profile("gibberish");
  auto gibberish = gpulaunch("up gated --runtime --force");
  EXPECT_EQ(gibberish.exit_code, 1) << gibberish.out;
  EXPECT_TRUE(has(gibberish.out,
                  "Failed the upgrade gate of gpulaunch-gated.service: prompt 1 "
                  "'The capital of France is' differs from the record at "
                  "character "))
      << gibberish.out;
  EXPECT_TRUE(has(gibberish.out,
                  "Rolling back gpulaunch-gated.service: the changed unit failed "
                  "its upgrade gate"))
      << gibberish.out;
  EXPECT_TRUE(has(gibberish.out,
                  "rolled back: gpulaunch-gated.service runs its previous unit "
                  "again"))
      << gibberish.out;
  EXPECT_EQ(gpulaunch("gate check gated").exit_code, 0);  // the good release serves again
  const auto rolled = gpulaunch::testing::event_of(events_of("gated"), "rolled-back");
  EXPECT_TRUE(has(rolled.value("evidence", ""), "differs from the record")) << rolled.dump(2);

  // Five times slower: the throughput against the floor.
  write_profile("slow5x");
  auto slow = gpulaunch("up gated --runtime --force");
  EXPECT_EQ(slow.exit_code, 1) << slow.out;
  EXPECT_TRUE(has(slow.out, "tok/s is below the floor")) << slow.out;
  EXPECT_TRUE(has(slow.out, "rolled back: gpulaunch-gated.service runs its previous unit again"))
      << slow.out;

  // Flaky but correct: retried within the bound, at once, so above the default floor (half the
  // recorded throughput): kept.
  write_profile("flaky");
  auto flaky = gpulaunch("up gated --runtime --force");
  EXPECT_EQ(flaky.exit_code, 0) << flaky.out;
  EXPECT_TRUE(has(flaky.out, "gate: passed")) << flaky.out;
  EXPECT_TRUE(has(flaky.out, "request(s) retried")) << flaky.out;
  EXPECT_FALSE(has(flaky.out, "rolled back")) << flaky.out;
  gpulaunch("down gated --runtime --purge");
}

}  // namespace
