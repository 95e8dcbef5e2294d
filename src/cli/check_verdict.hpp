// SPDX-License-Identifier: Apache-2.0
#pragma once
// `check`'s verdict on one profile, as `check` prints it: `init` prints it on the profile it
// wrote. Defined in check_command.cpp.

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "facts/environment.hpp"
#include "facts/facts.hpp"
#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"
#include "rules/finding.hpp"

namespace gl {

inline constexpr int kCheckOk = 0;
inline constexpr int kCheckErrors = 1;
inline constexpr int kCheckCouldNotRun = 2;

// How many of `findings` are of `severity`.
inline size_t count_of(const std::vector<Finding>& findings, Severity severity) {
  return std::count_if(findings.begin(), findings.end(),
                       [&](const Finding& finding) { return finding.severity == severity; });
}

// The facts check gathers for `profile` on the node under `root` ("/": this host, its ports and
// journal too).
Facts check_facts(const Profile& profile, const LaunchPlan& plan, const ShellEnvironment& shell,
                  const std::string& root);

// The findings and the verdict line; kCheckErrors when an error would stop a start.
int print_check_verdict(const Profile& profile, const LaunchPlan& plan, const Facts& facts,
                        const ShellEnvironment& shell, const std::string& against);

// `check --node`: the node without a profile (cli/check_node.cpp), on `root` or recorded facts;
// kCheckErrors on an error, kCheckCouldNotRun when the root or the facts cannot be read.
struct NodeCheckOptions {
  std::string root = "/";
  std::string facts_file;
  bool json = false;
  // Sets this boot's Xid lines so far aside (state_paths::xids_acknowledged_file), after the
  // operator reset the GPU: this host only, as root.
  bool acknowledge_xids = false;
};
int check_node(const NodeCheckOptions& options);

}  // namespace gl
