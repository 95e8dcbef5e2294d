// SPDX-License-Identifier: Apache-2.0
#include <chrono>
#include <ctime>
#include <filesystem>

#include <fmt/core.h>

#include "cli/context.hpp"
#include "profile/profile.hpp"
#include "systemd/journal.hpp"
#include "util/terminal_text.hpp"

namespace gl {
namespace {

void print_entry(const JournalEntry& entry) {
  std::time_t seconds = static_cast<std::time_t>(entry.realtime_usec / 1'000'000);
  std::tm local{};
  localtime_r(&seconds, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%b %d %H:%M:%S", &local);
  // The engine writes what it likes: each entry is shown as one line, escapes made visible
  // (the same with and without -f).
  fmt::print("{} {}[{}]: {}\n", stamp, terminal_text(entry.identifier), entry.pid,
             terminal_text(entry.message));
  std::fflush(stdout);
}

int logs(const std::string& profile, bool follow, size_t lines) {
  const std::string unit = unit_name_for(profile);
  auto journal = open_journal();
  if (!journal) return report(journal.error());
  auto entries = (*journal)->tail(unit, lines);
  if (!entries) return report(entries.error());
  for (const auto& entry : *entries) print_entry(entry);
  if (!follow) return 0;
  auto followed = (*journal)->follow(unit, [](const JournalEntry& entry) {
    print_entry(entry);
    return true;
  });
  return followed ? 0 : report(followed.error());
}

}  // namespace

void add_logs_command(CLI::App& app, CliContext& context) {
  auto* command =
      app.add_subcommand("logs", "Show a service's journal: the engine's output and systemd's");
  static std::string profile;
  static bool follow = false;
  static size_t lines = 50;
  command->add_option("profile", profile, "Profile name")->required()->check(profile_name_check());
  command->add_flag("-f,--follow", follow, "Keep printing new lines");
  command->add_option("-n,--lines", lines, "How many past lines to show");
  command->callback([&context] { context.exit_code = logs(profile, follow, lines); });
}

}  // namespace gl
