// SPDX-License-Identifier: Apache-2.0
// `gpulaunch init NAME`: from a bare node to a profile that passes `check`. Discovery in
// facts/discovery, the proposal in rules/init_proposal, the choosing here (a terminal's prompts,
// or --yes), the profile written whole and never over another, then `check`'s verdict on it.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include <fmt/core.h>

#include "catalog/discovery_places.hpp"
#include "catalog/hub_cache.hpp"
#include "cli/check_verdict.hpp"
#include "cli/context.hpp"
#include "facts/discovery.hpp"
#include "facts/gather.hpp"
#include "plan/launch_plan.hpp"
#include "profile/validate.hpp"
#include "rules/init_proposal.hpp"
#include "util/safe_file.hpp"
#include "util/terminal_text.hpp"
#include "util/try.hpp"

namespace gl {
namespace {
namespace fs = std::filesystem;

void print_options(const Choice& choice) {
  fmt::print("init: {} ({} found; proposed by the rule: {}):\n", choice.topic,
             choice.options.size(), choice.rule);
  for (size_t i = 0; i < choice.options.size(); ++i)
    fmt::print("  {}) {}{}\n", i + 1, choice.options[i],
               i == choice.proposed ? "  [proposed]" : "");
}

// --yes: the proposal, said with the rule that made it.
class ProposalChooser final : public Chooser {
 public:
  size_t choose(const Choice& choice) override {
    fmt::print("init: {}: took {} of {} found, by the rule: {}\n", choice.topic,
               choice.options[choice.proposed], choice.options.size(), choice.rule);
    return choice.proposed;
  }
};

// A terminal: the answers listed, a number read back; Enter takes the proposal.
class TerminalChooser final : public Chooser {
 public:
  size_t choose(const Choice& choice) override {
    print_options(choice);
    while (true) {
      fmt::print("Which {} [{}]? ", choice.topic, choice.proposed + 1);
      std::fflush(stdout);
      std::string line;
      if (!std::getline(std::cin, line)) return choice.proposed;
      if (line.empty()) return choice.proposed;
      size_t number = 0;
      try {
        number = std::stoul(line);
      } catch (...) {
        number = 0;
      }
      if (number >= 1 && number <= choice.options.size()) return number - 1;
      fmt::print("Answer 1 to {}, or Enter for {}.\n", choice.options.size(), choice.proposed + 1);
    }
  }
};

struct InitOptions {
  std::string name;
  std::string engine;
  std::string venv;
  std::string image;
  std::string model;
  std::vector<std::string> gpus;
  bool yes = false;
  std::string output;
  std::string root = "/";
};

// Where the profile goes: -o FILE, else the first --profiles-dir, else the search path's
// directory for whoever runs it (root: /etc/gpulaunch/profiles).
fs::path profile_target(const CliContext& context, const InitOptions& options) {
  if (!options.output.empty()) return options.output;
  fs::path directory;
  if (!context.extra_profile_dirs.empty()) {
    directory = context.extra_profile_dirs.front();
  } else {
    const auto search = default_search_path();
    directory = ::geteuid() == 0 ? fs::path("/etc/gpulaunch/profiles")
                                 : (search.size() > 3 ? search[1] : search.front());
  }
  return directory / (options.name + ".toml");
}

// Root writes only where no user could change the profile afterwards (SECURITY.md).
Result<UniqueFd> profile_directory(const fs::path& parent) {
  if (::geteuid() == 0) return open_root_owned_directory(parent);
  std::error_code error;
  fs::create_directories(parent, error);
  if (error) return failf("Failed to create '{}': {}", parent.string(), error.message());
  return open_directory_nofollow(parent);
}

Result<void> write_profile(const fs::path& path, const std::string& text) {
  GL_TRY(auto fd, profile_directory(fs::absolute(path).parent_path()));
  return create_atomically_at(fd.get(), path.filename().string(), text, 0644, path.string());
}

Result<int> run_init(CliContext& context, const InitOptions& options) {
  if (!options.image.empty() && !options.venv.empty())
    return failf("init: --image and --venv name two engines: pass one");
  InitRequest request;
  if (!options.image.empty()) request.image = options.image;
  request.name = options.name;
  if (!options.engine.empty()) {
    request.engine = parse_engine_kind(options.engine);
    if (!request.engine) {
      std::string kinds;
      for (const auto& kind : engine_kind_names()) kinds += (kinds.empty() ? "" : ", ") + kind;
      return failf("init --engine '{}': not an engine kind (one of {})", options.engine, kinds);
    }
  }
  if (!options.venv.empty()) request.venv = fs::path(options.venv).lexically_normal().string();
  if (!options.model.empty()) request.model = options.model;
  request.gpus = options.gpus;
  if (!options.yes && !::isatty(STDIN_FILENO))
    return failf(
        "init asks at each choice it makes, on a terminal: run it on one, or pass --yes "
        "to take the proposal");

  const fs::path target = profile_target(context, options);
  std::error_code error;
  if (fs::exists(fs::symlink_status(target, error)))
    return failf(
        "init: '{}' exists already: init never overwrites a profile; remove it or pick "
        "another NAME or -o FILE",
        target.string());
  if (options.output.empty())
    if (auto found = context.profile_source().find(options.name, fs::current_path(error)))
      return failf(
          "init: profile '{}' exists already at '{}': init never overwrites a profile; "
          "remove it or pick another NAME",
          options.name, found->string());

  const auto shell = ShellEnvironment::current();
  const NodeFs node(options.root);
  FactsRequest facts_wanted;
  facts_wanted.environments = {{"shell", shell.variables}};
  facts_wanted.probe_ports = false;
  // The image read as `check` reads it: inspected and mounted by root's podman, never run.
  facts_wanted.image = request.image;
  const Facts facts = gather_facts(node, facts_wanted);

  DiscoveryRequest wanted;
  wanted.trusted_only = ::geteuid() == 0;
  wanted.venv = request.venv;
  wanted.model = request.model;
  if (auto hub = hub_cache_directory(shell.variables)) wanted.hub_caches.push_back(*hub);
  if (auto hub = hub_cache_directory({{"HOME", std::string(kRootHome)}}))
    if (wanted.hub_caches.empty() || wanted.hub_caches.front() != *hub)
      wanted.hub_caches.push_back(*hub);
  const Discovery discovery = discover(node, wanted);
  for (const auto& skipped : discovery.skipped)
    fmt::print("init: skipped {}: {}\n", terminal_text(skipped.path),
               terminal_text(skipped.reason));

  ProposalChooser proposal;
  TerminalChooser terminal;
  Chooser& chooser = options.yes ? static_cast<Chooser&>(proposal) : terminal;
  GL_TRY(const InitDecision decision, decide_init(request, facts, discovery, chooser));
  const std::string text = init_profile_text(decision);
  GL_TRY_VOID(write_profile(target, text));
  // The profile names the discovered paths, whose names any user could have chosen.
  fmt::print("init: wrote '{}':\n\n{}\n", terminal_text(target.string()), terminal_lines(text));

  GL_TRY(const Profile profile, load_profile(context.profile_source(), target.string()));
  const LaunchPlan plan = make_launch_plan(profile);
  const Facts judged = check_facts(profile, plan, shell, options.root);
  return print_check_verdict(profile, plan, judged, shell, "this node (root " + judged.root + ")");
}

}  // namespace

void add_init_command(CLI::App& app, CliContext& context) {
  auto* command =
      app.add_subcommand("init", "Look at this node and write a profile for it that passes check");
  static InitOptions options;
  command->add_option("name", options.name, "The new profile's name")
      ->required()
      ->check(profile_name_check());
  command->add_option("--engine", options.engine,
                      "Engine kind (sglang, vllm, trtllm); default: the venv's");
  command->add_option("--venv", options.venv,
                      "The engine's venv; default: the venvs found in the usual places");
  command->add_option(
      "--image", options.image,
      "An engine image in root's podman store (read, never run); instead of --venv");
  command->add_option("--model", options.model,
                      "Model directory, GGUF file or hub id; default: the models found");
  command->add_option("--gpus", options.gpus, "GPUs to use (indices or UUIDs, comma-separated)")
      ->delimiter(',');
  command->add_flag("--yes", options.yes,
                    "Take the proposal at each choice (its rule is printed) instead of asking");
  command->add_option("-o,--output", options.output,
                      "Write the profile to FILE instead of the profile search path");
  command->add_option("--root", options.root,
                      "Probe the filesystem under this directory instead of /");
  command->callback([&context] {
    auto result = run_init(context, options);
    context.exit_code = result ? *result : report(result.error(), kCheckCouldNotRun);
  });
}

}  // namespace gl
