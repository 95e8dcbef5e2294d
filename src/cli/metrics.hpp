// SPDX-License-Identifier: Apache-2.0
#pragma once
// `gpulaunch metrics`, and the one write of a profile's metrics file that every state change root
// sees calls (record-exit after each stop, up, down, restart, and the shipped timer while serving;
// a start that became ready reaches the file at the timer's next run).

#include <string>

#include <CLI/CLI.hpp>

namespace gl {

class SystemdManager;
struct Profile;
struct CliContext;

void add_metrics_command(CLI::App& app, CliContext& context);

// Root only (for anyone else it does nothing): rewrites PROFILE's file in node_exporter's textfile
// directory from the manager's view of its unit, its history and its caches. Nothing is written,
// and nothing said, where the directory does not exist; a failure is one warning line on stderr,
// never the caller's failure. `manager` may be null: it connects to the system manager itself.
// `installed`: the installed snapshot where the caller has read it (record-exit), else read here.
void write_profile_metrics(const std::string& profile, SystemdManager* manager = nullptr,
                           const Profile* installed = nullptr);
// `down --purge`: the profile is uninstalled, and its metrics file goes with it.
void remove_profile_metrics(const std::string& profile);

}  // namespace gl
