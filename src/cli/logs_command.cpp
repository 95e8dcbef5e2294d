// SPDX-License-Identifier: Apache-2.0
#include <chrono>
#include <ctime>
#include <filesystem>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/context.hpp"
#include "cli/exit_status.hpp"
#include "cli/journal_lines.hpp"
#include "cli/profile_lookup.hpp"
#include "profile/profile.hpp"
#include "systemd/journal.hpp"
#include "util/terminal_text.hpp"

namespace gl {

std::string journal_line(const JournalEntry& entry) {
  std::time_t seconds = static_cast<std::time_t>(entry.realtime_usec / 1'000'000);
  std::tm local{};
  localtime_r(&seconds, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%b %d %H:%M:%S", &local);
  // The engine writes what it likes: each entry is shown as one line, escapes made visible
  // (the same with and without -f).
  return fmt::format("{} {}[{}]: {}", stamp, terminal_text(entry.identifier), entry.pid,
                     terminal_text(entry.message));
}

namespace {

bool json_lines = false;

// One line per entry: journalctl's short format, or with --json one JSON object (JSON lines, as
// `journalctl -o json`), the message as the engine wrote it (JSON escapes it).
void print_entry(const JournalEntry& entry) {
  if (json_lines)
    fmt::print("{}\n", nlohmann::ordered_json{{"realtime_usec", entry.realtime_usec},
                                              {"identifier", entry.identifier},
                                              {"pid", entry.pid},
                                              {"message", entry.message},
                                              {"cursor", entry.cursor}}
                           .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  else
    fmt::print("{}\n", journal_line(entry));
  std::fflush(stdout);
}

int logs(const CliContext& context, const std::string& profile, bool follow, size_t lines) {
  // A name neither on the search path, installed, nor a unit: a typo, not a quiet service.
  if (auto known = check_known_service(context, profile, ManagerScope::system); !known)
    return report(known.error(), kExitUsage);
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
  command->add_flag("--json", json_lines, "One JSON object per entry (JSON lines)");
  command->callback([&context] { context.exit_code = logs(context, profile, follow, lines); });
}

}  // namespace gl
