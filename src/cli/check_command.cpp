// SPDX-License-Identifier: Apache-2.0
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/context.hpp"
#include "cli/findings_report.hpp"
#include "facts/gather.hpp"
#include "plan/launch_plan.hpp"
#include "profile/secret_files.hpp"
#include "profile/validate.hpp"
#include "rules/check.hpp"

namespace gl {
namespace {

constexpr int kCheckOk = 0;
constexpr int kCheckErrors = 1;
constexpr int kCheckCouldNotRun = 2;

}  // namespace

void add_check_command(CLI::App& app, CliContext& context) {
  auto* command =
      app.add_subcommand("check", "Check a profile against this node (or recorded facts)");
  static std::string name;
  static std::string facts_file;
  static std::string root = "/";
  static bool json = false;
  command->add_option("profile", name, "Profile name or path to a .toml file")
      ->required()
      ->check(profile_argument_check());
  command->add_option("--facts", facts_file,
                      "Facts recorded by `gpulaunch facts --json` elsewhere");
  command->add_option("--root", root, "Probe the filesystem under this directory instead of /");
  command->add_flag("--json", json, "Print the findings as JSON");
  command->callback([&context] {
    auto profile = load_profile(context.profile_source(), name);
    if (!profile) {
      context.exit_code = report(profile.error(), kCheckCouldNotRun);
      return;
    }
    // The secrets' files are this node's: checked only when checking this node.
    if (facts_file.empty() && root == "/")
      if (auto secrets = check_secret_files(*profile); !secrets) {
        context.exit_code = report(secrets.error(), kCheckErrors);
        return;
      }
    auto shell = ShellEnvironment::current();
    const LaunchPlan plan = make_launch_plan(*profile);
    Facts facts;
    if (!facts_file.empty()) {
      auto loaded = load_facts_file(facts_file);
      if (!loaded) {
        context.exit_code = report(loaded.error(), kCheckCouldNotRun);
        return;
      }
      facts = std::move(*loaded);
    } else {
      auto request = facts_request(*profile, plan, shell);
      request.probe_ports = root == "/";
      if (root == "/") request.host = system_host_sources();
      facts = gather_facts(NodeFs(root), request);
    }
    auto findings = evaluate(*profile, plan, facts, shell);
    size_t errors = std::count_if(findings.begin(), findings.end(), [](const Finding& finding) {
      return finding.severity == Severity::error;
    });
    size_t warnings = findings.size() - errors;
    context.exit_code = errors ? kCheckErrors : kCheckOk;
    if (json) {
      nlohmann::json out{{"profile", profile->name},
                         {"facts", facts_file.empty() ? facts.root : facts_file},
                         {"errors", errors},
                         {"warnings", warnings},
                         {"findings", findings_to_json(findings)}};
      fmt::print("{}\n", out.dump(2));
      return;
    }
    fmt::print(
        "gpulaunch check: profile '{}' against {}\n", profile->name,
        facts_file.empty() ? "this node (root " + facts.root + ")" : "facts '" + facts_file + "'");
    print_findings(findings);
    fmt::print("\n{}: {} error(s), {} warning(s)\n",
               errors ? "FAILED, the start would fail" : "OK, nothing blocks a start", errors,
               warnings);
  });
}

}  // namespace gl
