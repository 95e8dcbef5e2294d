// SPDX-License-Identifier: Apache-2.0
// `gpulaunch exec PROFILE -- CMD...`: CMD as a transient service with the installed service's
// environment, user and sandbox (unit/transient from the same unit model `up` renders), the
// caller's terminal or pipes as its stdin, stdout and stderr; exits with CMD's status.

#include <unistd.h>

#include <filesystem>

#include <fmt/core.h>
#include <fmt/format.h>

#include "cli/context.hpp"
#include "cli/lifecycle.hpp"
#include "gpulaunch_version.hpp"
#include "plan/launch_plan.hpp"
#include "profile/validate.hpp"
#include "supervise/transient_run.hpp"
#include "systemd/manager.hpp"
#include "unit/render.hpp"
#include "unit/transient.hpp"
#include "util/safe_file.hpp"
#include "util/state_paths.hpp"

namespace gl {
namespace {

// gpulaunch's own failure, apart from any status CMD may exit with (as env(1) and `docker run`).
constexpr int kExecFailed = 125;

Result<TransientService> transient_for(const std::string& name,
                                       const std::vector<std::string>& command) {
  const std::filesystem::path snapshot = state_paths::snapshot_file(name);
  std::error_code error;
  if (!std::filesystem::exists(std::filesystem::symlink_status(snapshot, error)))
    return failf("Profile '{}' is not installed (no snapshot at '{}'): run `gpulaunch up {}` first",
                 name, snapshot.string(), name);
  // Root builds a unit from it: only a file no other user could have written.
  if (auto reason = user_writable_reason(snapshot))
    return failf("Refusing to use the profile snapshot '{}': {}", snapshot.string(), *reason);
  auto profile = load_profile(DirectorySource({}), snapshot.string());
  if (!profile) return std::unexpected(profile.error());
  const LaunchPlan plan = make_launch_plan(*profile);
  RenderOptions options;
  options.gpulaunch_binary = own_binary();
  options.version = GPULAUNCH_VERSION;
  const UnitFile unit = render_unit(*profile, plan, options);

  TransientService service;
  service.unit = fmt::format("gpulaunch-{}-exec-{}.service", name, ::getpid());
  auto properties = transient_properties(unit, service.unit);
  if (!properties) return std::unexpected(properties.error());
  service.properties = std::move(*properties);
  service.description = fmt::format("gpulaunch exec {}: {}", name, fmt::join(command, " "));
  // env(1), root's, finds CMD on the unit's own PATH, as the service's user inside its sandbox.
  service.argv = {std::string(kCleanEnvProgram), "--"};
  service.argv.insert(service.argv.end(), command.begin(), command.end());
  return service;
}

int exec_in_service(const std::string& name, const std::vector<std::string>& command) {
  if (::geteuid() != 0)
    return report(Error{"gpulaunch exec: must be run as root (it starts a transient service as "
                        "the service's user)"},
                  kExecFailed);
  if (command.empty())
    return report(Error{"gpulaunch exec: a command is required: gpulaunch exec PROFILE -- CMD..."},
                  kExecFailed);
  auto service = transient_for(name, command);
  if (!service) return report(service.error(), kExecFailed);
  auto manager = connect_systemd(ManagerScope::system);
  if (!manager) return report(manager.error(), kExecFailed);
  auto status = run_transient(**manager, *service);
  if (!status) return report(status.error(), kExecFailed);
  return *status;
}

}  // namespace

void add_exec_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "exec",
      "Run a command as the profile's service runs: its environment, user and sandbox (root)");
  static std::string name;
  static std::vector<std::string> argv;
  command->add_option("profile", name, "Profile name (installed with `gpulaunch up`)")
      ->required()
      ->check(profile_name_check());
  command->add_option("command", argv, "The command and its arguments, after --")->required();
  command->footer(
      "Exit status: the command's, 128 + a signal that ended it, or 125 when gpulaunch could not "
      "run it.");
  command->callback([&context] { context.exit_code = exec_in_service(name, argv); });
}

}  // namespace gl
