// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <filesystem>
#include <optional>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "catalog/engines.hpp"
#include "cli/context.hpp"
#include "cli/profile_lookup.hpp"
#include "profile/installed_snapshot.hpp"
#include "profile/profile_name.hpp"
#include "profile/validate.hpp"
#include "systemd/manager.hpp"
#include "util/state_paths.hpp"
#include "util/terminal_text.hpp"

namespace gl {
namespace {

// One profile as `list` shows it: where it comes from, what it runs, whether its unit runs.
struct ListedProfile {
  std::string name;
  std::string file;  // on the search path; else the installed snapshot
  bool installed_only = false;
  std::vector<std::string> shadows{};
  std::string engine{};  // "" when the profile does not load
  std::optional<long long> port{};
  std::string problem{};  // why it does not load
  std::string state{};    // the unit's ActiveState, "not-loaded", or "" without a manager
};

std::string absolute_text(const std::filesystem::path& path) {
  std::error_code ignored;
  return std::filesystem::absolute(path, ignored).lexically_normal().string();
}

std::vector<ListedProfile> listed_profiles(const CliContext& context) {
  std::vector<ListedProfile> listed;
  const DirectorySource source = context.profile_source();
  for (const auto& entry : source.list()) {
    ListedProfile profile{.name = entry.name, .file = absolute_text(entry.path)};
    for (const auto& shadowed : entry.shadows) profile.shadows.push_back(absolute_text(shadowed));
    if (auto loaded = load_profile(source, entry.name)) {
      profile.engine = std::string(engine_kind_name(loaded->engine.kind));
      profile.port = loaded->server.port;
    } else {
      profile.problem = loaded.error().message;
    }
    listed.push_back(std::move(profile));
  }
  // Installed profiles that are on no search path any more: still serving from their snapshot.
  for (const auto& name : installed_profile_names()) {
    if (std::any_of(listed.begin(), listed.end(), [&](const auto& p) { return p.name == name; }))
      continue;
    ListedProfile profile{
        .name = name, .file = state_paths::snapshot_file(name).string(), .installed_only = true};
    auto loaded = load_installed_profile(name);
    if (loaded && *loaded) {
      profile.engine = std::string(engine_kind_name((*loaded)->engine.kind));
      profile.port = (*loaded)->server.port;
    } else if (!loaded) {
      profile.problem = loaded.error().message;
    }
    listed.push_back(std::move(profile));
  }
  std::sort(listed.begin(), listed.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  // The units' state where the system manager answers (none in a container without systemd).
  if (auto manager = connect_systemd(ManagerScope::system))
    for (auto& profile : listed) {
      auto state = (*manager)->status(unit_name_for(profile.name));
      if (state) profile.state = state->load_state == "loaded" ? state->active_state : "not-loaded";
    }
  return listed;
}

void print_json(const std::vector<ListedProfile>& listed) {
  auto all = nlohmann::ordered_json::array();
  auto optional_text = [](const std::string& text) {
    return text.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(text);
  };
  for (const auto& profile : listed)
    all.push_back(
        {{"profile", profile.name},
         {"file", profile.file},
         {"installed_only", profile.installed_only},
         {"shadows", profile.shadows},
         {"engine", optional_text(profile.engine)},
         {"port", profile.port ? nlohmann::ordered_json(*profile.port) : nlohmann::ordered_json()},
         {"state", optional_text(profile.state)},
         {"problem", optional_text(profile.problem)}});
  fmt::print("{}\n", all.dump(2));
}

void print_table(const std::vector<ListedProfile>& listed) {
  size_t name_width = 4, engine_width = 6, state_width = 5;
  for (const auto& profile : listed) {
    name_width = std::max(name_width, profile.name.size());
    engine_width = std::max(engine_width, profile.engine.size());
    state_width = std::max(state_width, profile.state.size());
  }
  auto line = [&](const std::string& name, const std::string& engine, const std::string& port,
                  const std::string& state, const std::string& file) {
    fmt::print("{:<{}}  {:<{}}  {:<5}  {:<{}}  {}\n", name, name_width, engine, engine_width, port,
               state, state_width, file);
  };
  line("NAME", "ENGINE", "PORT", "STATE", "FILE");
  for (const auto& profile : listed) {
    line(profile.name, profile.engine.empty() ? "-" : profile.engine,
         profile.port ? std::to_string(*profile.port) : "-",
         profile.state.empty() ? "-" : profile.state,
         profile.installed_only ? profile.file + " (installed snapshot only)" : profile.file);
    for (const auto& shadowed : profile.shadows)
      fmt::print("{:<{}}    (shadows {})\n", "", name_width, shadowed);
    if (!profile.problem.empty())
      fmt::print("{:<{}}    (does not load: {})\n", "", name_width, terminal_text(profile.problem));
  }
}

}  // namespace

void add_list_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "list", "List profiles: engine, port, the unit's state and the file each comes from");
  static bool json = false;
  command->add_flag("--json", json, "Machine-readable output");
  command->callback([&context] {
    const auto listed = listed_profiles(context);
    if (json)
      print_json(listed);
    else
      print_table(listed);
  });
}

}  // namespace gl
