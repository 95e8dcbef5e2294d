// SPDX-License-Identifier: Apache-2.0
// The exit status scheme of the operator's commands (cli/exit_status.hpp, the manual's EXIT
// STATUS): every command, fed a typo of a profile, command or flag, exits 2 with one line that
// names it, with did-you-mean where a name is close; the cheap successes exit 0. No systemd is
// needed: a name neither on the search path nor installed is refused before any manager is asked.

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "util/process.hpp"

namespace gl::test {
namespace {

using ::testing::HasSubstr;

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class ExitStatus : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/gl-exit-status-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    scratch_ = pattern;
    std::filesystem::create_directories(scratch_ / "profiles");
    std::ofstream(scratch_ / "profiles/demo.toml") << "[engine]\nkind = \"sglang\"\n"
                                                      "venv = \"/opt/gpulaunch/venvs/demo\"\n"
                                                      "[model]\npath = \"/models/demo\"\n"
                                                      "[server]\nport = 30080\n";
  }
  void TearDown() override { std::filesystem::remove_all(scratch_); }

  // stdout and stderr apart, from a clean environment with the scratch profiles first.
  CliRun gpulaunch(const std::vector<std::string>& args) {
    const auto err_file = scratch_ / "stderr.txt";
    std::vector<std::string> sh{"-c",
                                "exec \"$@\" 2>\"$0\"",
                                err_file.string(),
                                "/usr/bin/env",
                                "-i",
                                "PATH=/usr/bin:/bin",
                                "HOME=" + scratch_.string(),
                                GPULAUNCH_BIN,
                                "-P",
                                (scratch_ / "profiles").string()};
    sh.insert(sh.end(), args.begin(), args.end());
    auto result = run_process("/bin/sh", sh, std::chrono::seconds(30));
    EXPECT_TRUE(result) << (result ? "" : result.error().message);
    std::ifstream in(err_file);
    std::string err{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    return result ? CliRun{result->exit_code, result->out, err} : CliRun{};
  }

  std::filesystem::path scratch_;
};

std::string joined(const std::vector<std::string>& args) {
  std::string text;
  for (const auto& arg : args) text += (text.empty() ? "" : " ") + arg;
  return text;
}

// Each command that takes a profile name, with "dmeo" for "demo": 2 and the closest name.
TEST_F(ExitStatus, AnUnknownProfileIsAUsageErrorWithTheClosestName) {
  const auto archive = (scratch_ / "caches.tar").string();
  const std::vector<std::vector<std::string>> commands{
      {"show", "dmeo"},
      {"render", "dmeo"},
      {"env", "dmeo"},
      {"warm", "dmeo"},
      {"up", "dmeo", "--dry-run"},
      {"down", "dmeo"},
      {"restart", "dmeo"},
      {"status", "dmeo"},
      {"logs", "dmeo"},
      {"events", "dmeo"},
      {"metrics", "dmeo"},
      {"facts", "dmeo"},
      {"check", "dmeo"},
      {"cache", "dmeo"},
      {"cache", "clear", "dmeo"},
      {"cache", "export", "dmeo", "-o", archive},
      {"lock", "dmeo"},
      {"gate", "record", "dmeo"},
      {"gate", "check", "dmeo"},
  };
  for (const auto& command : commands) {
    auto run = gpulaunch(command);
    EXPECT_EQ(run.exit_code, 2) << joined(command) << ": " << run.err;
    EXPECT_THAT(run.err, HasSubstr("'dmeo' not found")) << joined(command);
    EXPECT_THAT(run.err, HasSubstr("(did you mean 'demo'?)")) << joined(command);
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << joined(command) << run.err;
    EXPECT_EQ(run.out, "") << joined(command);
  }
}

// `down` and `logs` of a typo used to say "not running" and print nothing, with exit 0.
TEST_F(ExitStatus, DownOfATypoIsNotNotRunning) {
  auto run = gpulaunch({"down", "dmeo"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "profile 'dmeo' not found: neither on the search path nor installed (did you mean "
            "'demo'?)\n");
}

TEST_F(ExitStatus, AnUnknownFlagIsAUsageErrorForEveryCommand) {
  const std::vector<std::vector<std::string>> commands{
      {"list"},
      {"show", "demo"},
      {"render", "demo"},
      {"env", "demo"},
      {"warm", "demo"},
      {"up", "demo"},
      {"down", "demo"},
      {"restart", "demo"},
      {"status"},
      {"logs", "demo"},
      {"events", "demo"},
      {"metrics"},
      {"facts"},
      {"check", "demo"},
      {"init", "x"},
      {"cache", "demo"},
      {"lock", "demo"},
      {"verify", "x"},
      {"gate", "record", "demo"},
      {"diff", "a", "b"},
  };
  std::vector<std::vector<std::string>> with_flag;
  for (auto command : commands) {
    command.push_back("--no-such-flag");
    with_flag.push_back(std::move(command));
  }
  // exec's command follows "--": the flag goes before it.
  with_flag.push_back({"exec", "demo", "--no-such-flag", "--", "/bin/true"});
  for (const auto& command : with_flag) {
    auto run = gpulaunch(command);
    EXPECT_EQ(run.exit_code, 2) << joined(command) << ": " << run.err;
    EXPECT_THAT(run.err, HasSubstr("--no-such-flag")) << joined(command);
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << joined(command) << run.err;
  }
}

TEST_F(ExitStatus, AnUnknownCommandNamesTheClosestOne) {
  auto run = gpulaunch({"stauts"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "gpulaunch: unknown command 'stauts'; did you mean 'status'?\n");
  run = gpulaunch({"gate", "recrod", "demo"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "gpulaunch: unknown 'gate' command 'recrod'; did you mean 'record'?\n");
  run = gpulaunch({"cache", "clera", "demo", "x"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "gpulaunch: unknown 'cache' command 'clera'; did you mean 'clear'?\n");
  run = gpulaunch({"frobnicate"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "gpulaunch: unknown command 'frobnicate'; see 'gpulaunch --help'\n");
  // No command at all, and a gate without its verb: usage errors too.
  EXPECT_EQ(gpulaunch({}).exit_code, 2);
  EXPECT_EQ(gpulaunch({"gate"}).exit_code, 2);
}

TEST_F(ExitStatus, AnUnknownCacheNameIsAUsageError) {
  auto run = gpulaunch({"cache", "clear", "demo", "flashinfr"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_THAT(run.err, HasSubstr("Unknown cache 'flashinfr' (did you mean 'flashinfer'?)"));
}

TEST_F(ExitStatus, CheapSuccessesExitZero) {
  for (const std::vector<std::string>& command :
       std::vector<std::vector<std::string>>{{"--help"},
                                             {"--version"},
                                             {"list"},
                                             {"show", "demo"},
                                             {"render", "demo"},
                                             {"gate", "--help"}}) {
    auto run = gpulaunch(command);
    EXPECT_EQ(run.exit_code, 0) << joined(command) << ": " << run.err;
    EXPECT_NE(run.out, "") << joined(command);
  }
}

// `list`: one row per profile, and the same as JSON.
TEST_F(ExitStatus, ListIsATableAndJson) {
  auto run = gpulaunch({"list"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("NAME  ENGINE  PORT   STATE  FILE\n"));
  EXPECT_THAT(run.out, HasSubstr("\ndemo  sglang  30080  "));
  auto json = gpulaunch({"list", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto listed = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(listed.is_array()) << json.out;
  bool found = false;
  for (const auto& entry : listed)
    if (entry["profile"] == "demo") {
      found = true;
      EXPECT_EQ(entry["engine"], "sglang");
      EXPECT_EQ(entry["port"], 30080);
      EXPECT_EQ(entry["file"], (scratch_ / "profiles/demo.toml").string());
    }
  EXPECT_TRUE(found) << json.out;
}

// The read commands that work without a service speak JSON on --json, and only JSON on stdout.
TEST_F(ExitStatus, ReadCommandsPrintJson) {
  for (const std::vector<std::string>& command : std::vector<std::vector<std::string>>{
           {"list", "--json"}, {"show", "demo", "--json"}, {"env", "demo", "--json"}}) {
    auto run = gpulaunch(command);
    EXPECT_EQ(run.exit_code, 0) << joined(command) << ": " << run.err;
    EXPECT_FALSE(nlohmann::json::parse(run.out, nullptr, false).is_discarded())
        << joined(command) << ": " << run.out;
  }
  auto show = nlohmann::json::parse(gpulaunch({"show", "demo", "--json"}).out, nullptr, false);
  EXPECT_EQ(show["profile"], "demo");
  EXPECT_EQ(show["values"]["server"]["port"], 30080);
  EXPECT_EQ(show["sources"], nlohmann::json({(scratch_ / "profiles/demo.toml").string()}));
  auto env = nlohmann::json::parse(gpulaunch({"env", "demo", "--json"}).out, nullptr, false);
  EXPECT_EQ(env["unit"], "gpulaunch-demo.service");
  EXPECT_TRUE(env["environment"].is_array());
}

// `--help` in groups, as an operator looks for a command (issue 46): every visible command is in
// one of them (none left under CLI11's plain "Subcommands:"), and each command's own --help ends
// with an example of it.
TEST_F(ExitStatus, HelpIsGroupedAndEachCommandHasAnExample) {
  auto help = gpulaunch({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  const auto lifecycle = help.out.find("\nLifecycle:\n  up ");
  const auto inspect = help.out.find("\nInspect:\n");
  const auto fleet = help.out.find("\nFleet, caches and setup:\n");
  EXPECT_NE(lifecycle, std::string::npos) << help.out;
  EXPECT_LT(lifecycle, inspect) << help.out;
  EXPECT_LT(inspect, fleet) << help.out;
  EXPECT_EQ(help.out.find("Subcommands:"), std::string::npos) << help.out;
  EXPECT_THAT(help.out, HasSubstr("\n  gpulaunch up k26-ar             # Lifecycle\n"));
  // Each command named in a group section.
  std::vector<std::string> commands;
  std::istringstream lines(help.out.substr(lifecycle, help.out.find("\nExamples") - lifecycle));
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("  ") && line.size() > 2 && line[2] != ' ')
      commands.push_back(line.substr(2, line.find(' ', 2) - 2));
  EXPECT_GE(commands.size(), 21u) << help.out;
  for (const auto& command : commands) {
    auto own = gpulaunch({command, "--help"});
    EXPECT_EQ(own.exit_code, 0) << command;
    EXPECT_THAT(own.out, HasSubstr("\nExample: gpulaunch " + command)) << own.out;
  }
}

}  // namespace
}  // namespace gl::test
