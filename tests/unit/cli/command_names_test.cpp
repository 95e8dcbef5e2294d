// SPDX-License-Identifier: Apache-2.0
#include "cli/command_names.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

// The shape of gpulaunch's own command line: global options with values, a required command,
// `gate` with required verbs, `cache` with a profile positional and optional verbs, a hidden one.
struct Cli {
  CLI::App app{"test", "gpulaunch"};
  std::vector<std::string> dirs;
  std::string profile, cache_profile, gate_profile;
  bool flag = false;
  Cli() {
    app.add_option("-P,--profiles-dir", dirs, "dirs");
    app.add_flag("-v", flag, "verbose");
    app.require_subcommand(1);
    app.add_subcommand("status", "s")->add_option("profile", profile, "p");
    app.add_subcommand("list", "l");
    app.add_subcommand("run", "hidden")->group("");
    auto* gate = app.add_subcommand("gate", "g");
    gate->require_subcommand(1);
    gate->add_subcommand("record", "r")->add_option("profile", gate_profile, "p");
    gate->add_subcommand("check", "c")->add_option("profile", gate_profile, "p");
    auto* cache = app.add_subcommand("cache", "c");
    cache->add_option("profile", cache_profile, "p");
    cache->add_subcommand("clear", "c")->add_option("profile", cache_profile, "p");
  }
  std::optional<std::string> unknown(std::vector<std::string> args) {
    return unknown_command(app, args);
  }
};

TEST(CommandNames, ATypoOfACommandNamesTheClosestOne) {
  Cli cli;
  EXPECT_EQ(cli.unknown({"stauts"}), "unknown command 'stauts'; did you mean 'status'?");
  // After a global option and its value, which is no command word.
  EXPECT_EQ(cli.unknown({"-P", "/x", "lsit"}), "unknown command 'lsit'; did you mean 'list'?");
  EXPECT_EQ(cli.unknown({"--profiles-dir=x", "-v", "lsit"}),
            "unknown command 'lsit'; did you mean 'list'?");
}

TEST(CommandNames, NoCloseCommandPointsAtHelp) {
  Cli cli;
  EXPECT_EQ(cli.unknown({"frobnicate"}), "unknown command 'frobnicate'; see 'gpulaunch --help'");
  // A hidden command is never offered.
  EXPECT_EQ(cli.unknown({"rnu"}), "unknown command 'rnu'; see 'gpulaunch --help'");
}

TEST(CommandNames, NestedVerbsAreCheckedToo) {
  Cli cli;
  EXPECT_EQ(cli.unknown({"gate", "recrod", "demo"}),
            "unknown 'gate' command 'recrod'; did you mean 'record'?");
  EXPECT_EQ(cli.unknown({"gate", "zzz"}),
            "unknown 'gate' command 'zzz'; see 'gpulaunch gate --help'");
  // `cache` also takes a profile: a word is a verb's typo only when it is close to one.
  EXPECT_EQ(cli.unknown({"cache", "clera", "demo"}),
            "unknown 'cache' command 'clera'; did you mean 'clear'?");
  EXPECT_EQ(cli.unknown({"cache", "demo"}), std::nullopt);
}

TEST(CommandNames, KnownCommandsAndTheirArgumentsPass) {
  Cli cli;
  EXPECT_EQ(cli.unknown({"status", "stauts"}), std::nullopt);  // a profile name, not a command
  EXPECT_EQ(cli.unknown({"gate", "record", "demo"}), std::nullopt);
  EXPECT_EQ(cli.unknown({"run"}), std::nullopt);
  EXPECT_EQ(cli.unknown({"--", "stauts"}), std::nullopt);
}

}  // namespace
}  // namespace gl
