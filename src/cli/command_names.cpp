// SPDX-License-Identifier: Apache-2.0
#include "cli/command_names.hpp"

#include <fmt/core.h>

#include "util/did_you_mean.hpp"

namespace gl {
namespace {

CLI::App* subcommand_named(CLI::App& app, const std::string& word) {
  for (CLI::App* sub : app.get_subcommands({}))
    if (sub->check_name(word)) return sub;
  return nullptr;
}

// Whether `word` is an option of `app` (or of an app above it) that takes the next word as its
// value ("-P DIR", "--profiles-dir DIR"); "--x=v" and flags do not.
bool takes_next_word(const std::vector<CLI::App*>& apps, const std::string& word) {
  if (word.find('=') != std::string::npos) return false;
  // "-Pdir": a short option with its value attached.
  if (word.size() > 2 && word[1] != '-') return false;
  for (auto it = apps.rbegin(); it != apps.rend(); ++it)
    if (const CLI::Option* option = (*it)->get_option_no_throw(word))
      return option->get_items_expected_max() > 0;
  return false;
}

}  // namespace

std::optional<std::string> unknown_command(CLI::App& app, const std::vector<std::string>& args) {
  std::vector<CLI::App*> apps{&app};
  std::string path;  // the command words so far: "gate"
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") return std::nullopt;
    if (word.size() > 1 && word[0] == '-') {
      if (takes_next_word(apps, word)) ++i;
      continue;
    }
    CLI::App& current = *apps.back();
    if (CLI::App* sub = subcommand_named(current, word)) {
      apps.push_back(sub);
      path += (path.empty() ? "" : " ") + sub->get_name();
      continue;
    }
    std::vector<std::string> visible;
    for (CLI::App* sub : current.get_subcommands({}))
      if (!sub->get_group().empty()) visible.push_back(sub->get_name());
    const std::string what = path.empty() ? fmt::format("unknown command '{}'", word)
                                          : fmt::format("unknown '{}' command '{}'", path, word);
    auto best = did_you_mean(word, visible);
    // Where the command also takes a positional (`cache PROFILE`, `cache clear PROFILE`), the
    // word is a command only when the parse failed and it is close to one ("cache clera NAME").
    if (current.get_require_subcommand_min() == 0)
      return best ? std::optional(fmt::format("{}; did you mean '{}'?", what, *best))
                  : std::nullopt;
    if (best) return fmt::format("{}; did you mean '{}'?", what, *best);
    return fmt::format("{}; see 'gpulaunch {}--help'", what, path.empty() ? "" : path + " ");
  }
  return std::nullopt;
}

}  // namespace gl
