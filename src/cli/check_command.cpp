// SPDX-License-Identifier: Apache-2.0
#include <algorithm>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/check_verdict.hpp"
#include "cli/colour.hpp"
#include "cli/context.hpp"
#include "cli/findings_report.hpp"
#include "cli/profile_lookup.hpp"
#include "facts/gather.hpp"
#include "plan/launch_plan.hpp"
#include "profile/installed_snapshot.hpp"
#include "profile/secret_files.hpp"
#include "profile/validate.hpp"
#include "rules/check.hpp"
#include "rules/installed_profiles.hpp"
#include "rules/service_view.hpp"
#include "systemd/manager.hpp"
#include "util/state_paths.hpp"

namespace gl {
namespace {

// One installed profile's verdict for `check --all`.
struct Summary {
  std::string name;
  std::string snapshot;
  int exit_code = kCheckOk;
  std::string worst = "ok";  // error, warning, info, ok; "failed" when it could not be checked
  std::vector<Finding> findings;
  std::string problem;  // why it could not be checked
};

Summary check_installed(const NodeFs& node, const InstalledProfileFact& installed) {
  Summary summary;
  summary.name = installed.name;
  summary.snapshot = installed.snapshot;
  auto failed = [&](std::string why) {
    summary.exit_code = kCheckCouldNotRun;
    summary.worst = "failed";
    summary.problem = std::move(why);
    return summary;
  };
  if (installed.problem) return failed(*installed.problem);
  auto read = load_installed_profile(installed.name, installed_snapshot_path(node, installed));
  if (!read) return failed(read.error().message);
  if (!*read) return failed(fmt::format("no snapshot at '{}' any more", installed.snapshot));
  const std::optional<Profile>& profile = *read;
  if (node.root() == "/")
    if (auto secrets = check_secret_files(*profile); !secrets) {
      summary.exit_code = kCheckErrors;
      summary.worst = "error";
      summary.problem = secrets.error().message;
      return summary;
    }
  const auto shell = ShellEnvironment::current();
  const LaunchPlan plan = make_launch_plan(*profile);
  auto request = facts_request(*profile, plan, shell);
  // A running profile holds its own port: at boot and for a fleet tool that is no finding.
  request.probe_ports = false;
  summary.findings = evaluate(*profile, plan, gather_facts(node, request), shell);
  if (count_of(summary.findings, Severity::error) > 0) {
    summary.exit_code = kCheckErrors;
    summary.worst = "error";
  } else if (count_of(summary.findings, Severity::warning) > 0) {
    summary.worst = "warning";
  } else if (!summary.findings.empty()) {
    summary.worst = "info";
  }
  return summary;
}

int check_all(const std::string& root, bool json) {
  const NodeFs node(root);
  const auto installed = probe_installed_profiles(node);
  std::vector<Summary> summaries;
  int exit_code = kCheckOk;
  for (const auto& profile : installed) {
    summaries.push_back(check_installed(node, profile));
    exit_code = std::max(exit_code, summaries.back().exit_code);
  }
  if (json) {
    auto list = nlohmann::json::array();
    for (const auto& summary : summaries)
      list.push_back({{"profile", summary.name},
                      {"snapshot", summary.snapshot},
                      {"worst", summary.worst},
                      {"exit_code", summary.exit_code},
                      {"problem", summary.problem},
                      {"findings", findings_to_json(summary.findings)}});
    fmt::print(
        "{}\n",
        nlohmann::json{{"root", root}, {"exit_code", exit_code}, {"profiles", list}}.dump(2));
    return exit_code;
  }
  if (summaries.empty()) {
    fmt::print("gpulaunch check --all: no installed profiles in {} (root {})\n",
               state_paths::snapshot_directory().string(), root);
    return exit_code;
  }
  size_t width = 7;
  for (const auto& summary : summaries) width = std::max(width, summary.name.size());
  fmt::print("{:<{}}  {:<7}  {:>8}  {}\n", "PROFILE", width, "WORST", "FINDINGS", "FIRST");
  for (const auto& summary : summaries) {
    std::string first = summary.problem;
    if (first.empty() && !summary.findings.empty())
      first = fmt::format("{}[{}] {}", severity_name(summary.findings.front().severity),
                          summary.findings.front().code, summary.findings.front().summary);
    const size_t count = summary.problem.empty() ? summary.findings.size() : 1;
    fmt::print("{:<{}}  {:<7}  {:>8}  {}\n", summary.name, width, summary.worst, count,
               first.empty() ? "-" : first);
  }
  return exit_code;
}

}  // namespace

Facts check_facts(const Profile& profile, const LaunchPlan& plan, const ShellEnvironment& shell,
                  const std::string& root) {
  auto request = facts_request(profile, plan, shell);
  request.probe_ports = root == "/";
  if (root == "/") request.host = system_host_sources();
  Facts facts = gather_facts(NodeFs(root), request);
  // Where the profile is already serving, the node is judged as its service sees it: the port
  // its own processes alone hold is no conflict (rules/service_view).
  const bool taken = std::ranges::any_of(facts.ports, [](const PortFact& p) { return p.taken; });
  if (root == "/" && taken)
    if (auto manager = connect_systemd(ManagerScope::system))
      see_as_service(facts, **manager, NodeFs(root), profile.unit_name());
  return facts;
}

int print_check_verdict(const Profile& profile, const LaunchPlan& plan, const Facts& facts,
                        const ShellEnvironment& shell, const std::string& against) {
  const auto findings = evaluate(profile, plan, facts, shell);
  const size_t errors = count_of(findings, Severity::error);
  const size_t warnings = count_of(findings, Severity::warning);
  fmt::print("gpulaunch check: profile '{}' against {}\n", profile.name, against);
  print_findings(findings);
  fmt::print("\n{}: {} error(s), {} warning(s)\n",
             errors ? paint("FAILED, the start would fail", Tone::error)
                    : paint("OK, nothing blocks a start", Tone::ok),
             errors, warnings);
  return errors ? kCheckErrors : kCheckOk;
}

void add_check_command(CLI::App& app, CliContext& context) {
  auto* command =
      app.add_subcommand("check", "Check a profile against this node (or recorded facts)");
  static std::string name;
  static std::string facts_file;
  static std::string root = "/";
  static bool json = false;
  static bool all = false;
  static bool node = false;
  static bool acknowledge_xids = false;
  auto* profile_option =
      command->add_option("profile", name, "Profile name or path to a .toml file")
          ->check(profile_argument_check());
  auto* facts_option = command->add_option("--facts", facts_file,
                                           "Facts recorded by `gpulaunch facts --json` elsewhere");
  command->add_option("--root", root, "Probe the filesystem under this directory instead of /");
  command->add_flag("--json", json, "Print the findings as JSON");
  command
      ->add_flag("--all", all,
                 "Check every profile `up` installed on this node (its snapshot under "
                 "/var/lib/gpulaunch/snapshots), one summary line each; exit status the worst")
      ->excludes(profile_option)
      ->excludes(facts_option);
  command
      ->add_flag("--node", node,
                 "Judge this node without a profile (driver, GPU health, Xid since boot, fabric, "
                 "device nodes, /dev/shm, peer memory, toolkits, CDI): exit 0 pass or warnings, "
                 "1 an error, 2 could not run; a scheduler's prolog")
      ->excludes(profile_option)
      ->excludes("--all");
  command
      ->add_flag("--acknowledge-xids", acknowledge_xids,
                 "With --node, on this host as root: set the Xid lines of this boot so far aside "
                 "(once the GPU they name has been reset), then judge the node")
      ->needs("--node");
  command->callback([&context] {
    if (node) {
      context.exit_code = check_node({root, facts_file, json, acknowledge_xids});
      return;
    }
    if (all) {
      context.exit_code = check_all(root, json);
      return;
    }
    if (name.empty()) {
      context.exit_code =
          report(Error{"check needs a profile, or --all, or --node"}, kCheckCouldNotRun);
      return;
    }
    auto profile = load_profile_or_installed(context, name);
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
      facts = check_facts(*profile, plan, shell, root);
    }
    if (!json) {
      context.exit_code =
          print_check_verdict(*profile, plan, facts, shell,
                              facts_file.empty() ? "this node (root " + facts.root + ")"
                                                 : "facts '" + facts_file + "'");
      return;
    }
    auto findings = evaluate(*profile, plan, facts, shell);
    const size_t errors = count_of(findings, Severity::error);
    const size_t warnings = count_of(findings, Severity::warning);
    context.exit_code = errors ? kCheckErrors : kCheckOk;
    nlohmann::json out{{"profile", profile->name},
                       {"facts", facts_file.empty() ? facts.root : facts_file},
                       {"errors", errors},
                       {"warnings", warnings},
                       {"findings", findings_to_json(findings)}};
    fmt::print("{}\n", out.dump(2));
  });
}

}  // namespace gl
