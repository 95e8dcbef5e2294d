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
#include "profile/memory_source.hpp"
#include "profile/validate.hpp"
#include "rules/check.hpp"
#include "rules/finding.hpp"
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

// --yes: the proposal, said with the rule that made it; the venv the trials below settled on.
class ProposalChooser final : public Chooser {
 public:
  explicit ProposalChooser(std::optional<size_t> venv = std::nullopt) : venv_(venv) {}
  size_t choose(const Choice& choice) override {
    const size_t taken = choice.topic == "venv" && venv_ ? *venv_ : choice.proposed;
    fmt::print("init: {}: took {} of {} found, by the rule: {}\n", choice.topic,
               choice.options[taken], choice.options.size(), choice.rule);
    return taken;
  }

 private:
  std::optional<size_t> venv_;
};

// A trial of one venv answer, silent: the proposal at every other choice.
class TrialChooser final : public Chooser {
 public:
  explicit TrialChooser(size_t venv) : venv_(venv) {}
  size_t choose(const Choice& choice) override {
    return choice.topic == "venv" ? venv_ : choice.proposed;
  }

 private:
  size_t venv_;
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

// A profile text as `check` will judge it once written, judged before anything is written.
struct Judged {
  Profile profile;
  LaunchPlan plan;
  Facts facts;
  std::vector<Finding> findings;
};
Result<Judged> judge(const fs::path& target, const std::string& text, const ShellEnvironment& shell,
                     const std::string& root) {
  const MemorySource source(std::map<std::string, std::string>{{target.string(), text}});
  GL_TRY(Profile profile, load_profile(source, target.string()));
  LaunchPlan plan = make_launch_plan(profile);
  Facts facts = check_facts(profile, plan, shell, root);
  auto findings = evaluate(profile, plan, facts, shell);
  return Judged{std::move(profile), std::move(plan), std::move(facts), std::move(findings)};
}

const Finding* first_error(const std::vector<Finding>& findings) {
  for (const auto& finding : findings)
    if (finding.severity == Severity::error) return &finding;
  return nullptr;
}

// --yes among several venvs: each answer tried in the proposal's order, its profile judged by
// check; the first that passes is taken. Where answers of two engines pass, the node does not say
// which engine is wanted: init asks for --engine rather than ranking engines by version numbers.
Result<std::optional<size_t>> settle_venv(const InitRequest& request, const Facts& facts,
                                          const Discovery& discovery, const fs::path& target,
                                          const ShellEnvironment& shell, const std::string& root) {
  std::vector<EngineOption> answers;
  GL_TRY(const Choice venvs, venv_choice(request, discovery, answers));
  if (answers.size() < 2) return std::optional<size_t>{};
  std::vector<size_t> passing;
  std::vector<std::string> refused;
  for (size_t i = 0; i < answers.size(); ++i) {
    TrialChooser trial(i);
    auto decision = decide_init(request, facts, discovery, trial);
    if (!decision) {
      refused.push_back(fmt::format("{}: {}", venvs.options[i], decision.error().message));
      continue;
    }
    auto judged = judge(target, init_profile_text(*decision), shell, root);
    const Finding* error = judged ? first_error(judged->findings) : nullptr;
    if (judged && !error) {
      passing.push_back(i);
    } else {
      refused.push_back(fmt::format(
          "{}: {}", venvs.options[i],
          judged ? fmt::format("{} ({})", error->summary, error->code) : judged.error().message));
    }
  }
  for (const auto& line : refused) fmt::print("init: venv: not {}\n", terminal_text(line));
  if (passing.empty()) return std::optional<size_t>{};  // the proposal, judged and refused below
  for (size_t i : passing)
    if (answers[i].engine != answers[passing.front()].engine) {
      std::string which;
      for (size_t j : passing) which += fmt::format("\n  {}", terminal_text(venvs.options[j]));
      return failf(
          "init --yes: venvs of more than one engine give a profile that passes check on this "
          "node:{}\npass --engine {} or --engine {} (or --venv DIR); nothing written",
          which, engine_kind_name(answers[passing.front()].engine),
          engine_kind_name(answers[i].engine));
    }
  return std::optional<size_t>(passing.front());
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

  std::optional<size_t> settled;
  if (options.yes && !request.image) {
    GL_TRY(settled, settle_venv(request, facts, discovery, target, shell, options.root));
  }
  ProposalChooser proposal(settled);
  TerminalChooser terminal;
  Chooser& chooser = options.yes ? static_cast<Chooser&>(proposal) : terminal;
  GL_TRY(const InitDecision decision, decide_init(request, facts, discovery, chooser));
  const std::string text = init_profile_text(decision);
  // Judged as check will judge it, before a byte is written: a profile its own check refuses is
  // never left behind.
  GL_TRY(const Judged judged, judge(target, text, shell, options.root));
  const std::string against = "this node (root " + judged.facts.root + ")";
  // The profile names the discovered paths, whose names any user could have chosen.
  if (has_errors(judged.findings)) {
    fmt::print("init: the profile it would write:\n\n{}\n", terminal_lines(text));
    print_check_verdict(judged.profile, judged.plan, judged.facts, shell, against);
    fmt::print(
        "\ninit: wrote nothing: check refuses this profile on this node (the fixes above); "
        "fix the node or pass --venv/--model/--gpus, then run init again\n");
    return kCheckErrors;
  }
  GL_TRY_VOID(write_profile(target, text));
  fmt::print("init: wrote '{}':\n\n{}\n", terminal_text(target.string()), terminal_lines(text));
  return print_check_verdict(judged.profile, judged.plan, judged.facts, shell, against);
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
