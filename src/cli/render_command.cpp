// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <filesystem>

#include <fmt/core.h>

#include "catalog/sandbox_allowances.hpp"
#include "cli/command_preamble.hpp"
#include "cli/context.hpp"
#include "cli/exit_status.hpp"
#include "cli/lifecycle.hpp"
#include "engines/engine_argv.hpp"
#include "gpulaunch_version.hpp"
#include "group/slurm_script.hpp"
#include "log/logger.hpp"
#include "plan/node_launch.hpp"
#include "profile/profile_name.hpp"
#include "profile/validate.hpp"
#include "unit/render.hpp"
#include "util/process.hpp"

namespace gl {

namespace {

// `render --slurm`: the script on stdout, the KillWait check on stderr.
int render_slurm(const Profile& profile, const std::string& profile_arg, const std::string& binary,
                 const std::string& cache_archive, const std::string& scontrol, bool gres) {
  SlurmScriptOptions options;
  options.gres = gres;
  // The script runs the gpulaunch on the nodes (nodes.gpulaunch), not this build tree's.
  options.gpulaunch_binary = binary.empty() ? profile.nodes.gpulaunch : binary;
  options.version = GPULAUNCH_VERSION;
  if (!cache_archive.empty())
    options.cache_archive = std::filesystem::absolute(cache_archive).lexically_normal().string();
  auto script = render_slurm_script(profile, options);
  if (!script) return report(script.error(), kExitUsage);
  auto config = run_process(scontrol, {"show", "config"}, std::chrono::seconds(5));
  std::optional<std::chrono::seconds> kill_wait;
  if (config && config->exit_code == 0) kill_wait = parse_kill_wait(config->out);
  if (!kill_wait)
    logging::info(fmt::format(
        "note: could not read the cluster's KillWait ({} show config{}): make sure it is at least "
        "server.drain_timeout ({} s), or a scancel cuts the drain short",
        scontrol, config ? "" : ": " + config.error().message,
        std::chrono::duration_cast<std::chrono::seconds>(profile.server.drain_timeout).count()));
  else if (auto warning = kill_wait_warning(profile, *kill_wait))
    logging::info(*warning);
  if (is_profile_path(profile_arg))
    logging::info(fmt::format(
        "note: the job runs profile '{}' from each node's search path (~/.config/gpulaunch/"
        "profiles, /etc/gpulaunch/profiles), not {}: place it there",
        profile.name, profile_arg));
  fmt::print("{}", *script);
  return kExitOk;
}

}  // namespace

void add_render_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("render", "Print the systemd unit a profile becomes");
  static ProfileArgs args;
  static std::string binary;
  static std::string engine_version;
  static bool infiniband = false;
  static std::string socket_interface;
  static std::vector<std::string> devices;
  static bool mps = false;
  static bool slurm = false;
  static std::string cache_archive;
  static std::string scontrol = "/usr/bin/scontrol";
  static bool no_gres = false;
  add_profile_args(command, args, {});
  command->add_flag("--slurm", slurm,
                    "Print an sbatch script for the profile's group instead: one srun step runs "
                    "`gpulaunch run --foreground` on every node (man gpulaunch, \"On a Slurm "
                    "cluster\")");
  command->add_option("--cache-archive", cache_archive,
                      "With --slurm: a `gpulaunch cache export` archive the job sbcasts to every "
                      "node and imports before the engine starts");
  command->add_flag("--no-gres", no_gres,
                    "With --slurm: ask for no GPUs as GRES (a cluster without gres/gpu; the "
                    "profile's [gpus] pick them on each node)");
  command->add_option("--scontrol", scontrol,
                      "With --slurm: the scontrol whose `show config` gives the cluster's KillWait "
                      "(default /usr/bin/scontrol)");
  command->add_option("--gpulaunch-bin", binary,
                      "gpulaunch binary the unit runs (default: this one, so a build tree renders "
                      "a unit that runs the build tree)");
  // render reads the node as `up` does (plan/node_launch: the engine release in the venv,
  // InfiniBand, optional devices, the route to rank 0), so it prints the unit `up` installs; each
  // option below renders for another node instead, and --offline for none.
  command->add_option("--engine-version", engine_version,
                      "Engine version installed in engine.venv (default: read from the venv, as "
                      "`up` does), which picks the launcher: a release that has `sglang serve` "
                      "starts with it; with no version known, `python -m sglang.launch_server`, "
                      "which every release takes");
  static bool offline = false;
  command->add_flag("--offline", offline,
                    "Read nothing from this node: the same inputs give the same unit anywhere "
                    "(only the options below describe the node)");
  command->add_flag("--infiniband", infiniband,
                    "Render for a node with InfiniBand (as `up` reads /sys/class/infiniband): the "
                    "unit allows its verbs devices and sets LimitMEMLOCK=infinity");
  std::vector<std::string> optional_devices;
  for (const auto& allowance : sandbox_allowances())
    if (allowance.when == AllowanceWhen::node_has_device)
      optional_devices.emplace_back(allowance.name);
  command
      ->add_option("--device", devices,
                   "Render for a node that has this optional device (as `up` reads /dev): the "
                   "unit allows it")
      ->check(CLI::IsMember(optional_devices));
  command->add_flag("--mps", mps,
                    "Render for a node where an MPS control daemon runs (as `up` reads "
                    "/tmp/nvidia-mps): the unit binds its pipe directory");
  command->add_option("--socket-interface", socket_interface,
                      "Render a multi-node unit for a node that routes to rank 0 through this "
                      "interface (as `up` reads the routing table): NCCL_SOCKET_IFNAME and "
                      "GLOO_SOCKET_IFNAME name it unless the profile's [env] sets them");
  command->callback([&context] {
    auto profile = load_for_rank(context, args);
    if (!profile) {
      context.exit_code = report(profile.error(), kExitUsage);
      return;
    }
    if (slurm) {
      context.exit_code =
          render_slurm(*profile, args.profile, binary, cache_archive, scontrol, !no_gres);
      return;
    }
    if (auto can_start = startable(*profile, ManagerScope::system); !can_start) {
      context.exit_code = report(can_start.error(), kExitUsage);
      return;
    }
    RenderOptions options;
    options.gpulaunch_binary = binary.empty() ? own_binary() : binary;
    options.version = GPULAUNCH_VERSION;
    // What `up` reads from this node, unless --offline; the options add to it or replace it.
    LaunchOptions launch{args.node_rank, std::nullopt};
    if (!offline) {
      const NodeLaunch node = node_launch_options(*profile, args.node_rank, NodeFs());
      for (const auto& warning : node.warnings) logging::warning(warning);
      launch = node.options;
    }
    if (!engine_version.empty()) launch.engine_version = engine_version;
    launch.infiniband = launch.infiniband || infiniband;
    for (const auto& device : devices)
      if (std::ranges::find(launch.sandbox.devices, device) == launch.sandbox.devices.end())
        launch.sandbox.devices.push_back(device);
    launch.sandbox.mps_daemon = launch.sandbox.mps_daemon || mps;
    if (!socket_interface.empty()) launch.socket_interface = socket_interface;
    const LaunchPlan plan = make_launch_plan(*profile, launch);
    // Without the release, flags whose spelling depends on it get the conservative one: say so.
    for (const auto& fit : fitted_flags(*profile, launch))
      if (fit.version_unknown && fit.spelling != fit.flag)
        logging::info(fmt::format("note: no engine version known: {} instead of {} (from {} on)",
                                  fit.spelling, fit.flag, fit.needs));
    fmt::print("{}", render_unit(*profile, plan, options).to_text());
  });
}

}  // namespace gl
