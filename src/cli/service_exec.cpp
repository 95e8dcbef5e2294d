// SPDX-License-Identifier: Apache-2.0
#include "cli/service_exec.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include <fmt/core.h>
#include <fmt/format.h>

#include "cli/command_preamble.hpp"
#include "cli/context.hpp"
#include "cli/lifecycle.hpp"
#include "cli/prepare_caches.hpp"
#include "cli/profile_lookup.hpp"
#include "gpulaunch_version.hpp"
#include "log/logger.hpp"
#include "plan/node_launch.hpp"
#include "profile/installed_snapshot.hpp"
#include "supervise/transient_run.hpp"
#include "systemd/manager.hpp"
#include "unit/drop_in.hpp"
#include "unit/render.hpp"
#include "unit/transient.hpp"
#include "util/did_you_mean.hpp"
#include "util/safe_file.hpp"
#include "util/state_paths.hpp"
#include "util/try.hpp"
#include "util/unique_fd.hpp"

namespace gl {
namespace {

// Root lays the installed unit's drop-ins over the rendered unit: only files no other user could
// have written, read bounded and without following a link.
Result<void> apply_drop_ins(UnitFile& unit, const std::vector<std::string>& paths) {
  constexpr size_t kMaxDropInBytes = 1024 * 1024;
  for (const auto& path : paths) {
    if (auto reason = user_writable_reason(path))
      return failf("Refusing to use the drop-in '{}': {}", path, *reason);
    GL_TRY(auto read, read_regular_nofollow(path, kMaxDropInBytes));
    if (!read) continue;  // removed since the manager loaded it
    GL_TRY_VOID(apply_drop_in(unit, read->content, path));
  }
  return {};
}

// The installed profile (profile/installed_snapshot), before anything else is asked of the node:
// an uninstalled profile is refused without a manager.
Result<Profile> installed_profile(const std::string& name) {
  GL_TRY(auto installed, load_installed_profile(name));
  if (!installed)
    return failf(
        "Profile '{}' is not installed (no snapshot at '{}'){}: run `gpulaunch up {}` first", name,
        state_paths::snapshot_file(name).string(),
        did_you_mean_suffix(name, installed_profile_names()), name);
  return std::move(*installed);
}

Result<TransientService> transient_for(const std::string& name, const Profile& profile,
                                       const ServiceExec& request, SystemdManager& manager) {
  // The node's facts the installed unit was rendered with (engine release, InfiniBand, devices):
  // the same sandbox and command line as the service.
  GL_TRY_VOID(check_node_rank(profile, request.node_rank));
  const NodePlan node = node_launch_plan(profile, request.node_rank, NodeFs());
  for (const auto& warning : node.launch.warnings) logging::warning(warning);
  const LaunchPlan& plan = node.plan;
  RenderOptions options;
  options.gpulaunch_binary = own_binary();
  options.version = GPULAUNCH_VERSION;
  UnitFile unit = render_unit(profile, plan, options);
  // `systemctl edit` drop-ins (InaccessiblePaths= and the like) hold for it too.
  GL_TRY(const UnitStatus installed, manager.status(unit_name_for(name)));
  if (request.refuse_while_running && installed.running())
    return failf(
        "Refusing to {} while {} is {}: the command needs the service's port and GPUs; stop it "
        "with `gpulaunch down {}` first",
        request.what, unit_name_for(name), installed.active_state, name);
  GL_TRY_VOID(apply_drop_ins(unit, installed.drop_in_paths));
  GL_TRY(auto command, request.command(profile, node.launch.options));

  TransientService service;
  service.unit = fmt::format("gpulaunch-{}-{}-{}.service", name, request.unit_word, ::getpid());
  GL_TRY(auto properties, transient_properties(unit, service.unit));
  service.properties = std::move(properties);
  service.description = transient_description(name, command);
  // env(1), root's, finds the command on the unit's own PATH, as the service's user inside its
  // sandbox.
  service.argv = {std::string(kCleanEnvProgram), "--"};
  service.argv.insert(service.argv.end(), command.begin(), command.end());
  return service;
}

volatile sig_atomic_t g_interrupted = 0;  // the signal that interrupted exec, or 0

void on_interrupt(int signal) {
  g_interrupted = signal;
}

// SIGINT, SIGTERM and SIGHUP only mark the wait as interrupted (no SA_RESTART: the manager's
// wait wakes), so run_transient stops the unit instead of gpulaunch dying with it running.
void catch_interruptions() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(signal, &action, nullptr);
}

// A terminal stdout or stderr, given to the command as a pipe whose other end is copied to it.
class TerminalRelay {
 public:
  TerminalRelay() = default;
  TerminalRelay(const TerminalRelay&) = delete;
  TerminalRelay& operator=(const TerminalRelay&) = delete;
  ~TerminalRelay() { finish(); }

  // The fd the command gets in place of `fd`: `fd` itself unless it is a terminal.
  Result<int> wrap(int fd) {
    if (!::isatty(fd)) return fd;
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0)
      return failf("Failed to make a pipe for the command's output: {}", std::strerror(errno));
    UniqueFd read_end(ends[0]);
    writers_.emplace_back(ends[1]);
    threads_.emplace_back([this, from = std::move(read_end), fd] { copy(from.get(), fd); });
    return ends[1];
  }
  // Once the unit was handed its copies: ours are closed, so the pipes end with the command.
  void close_writers() { writers_.clear(); }
  // Copies what is left, then stops, even if a process outside the ended unit held a pipe.
  void finish() {
    close_writers();
    done_ = true;
    for (auto& thread : threads_)
      if (thread.joinable()) thread.join();
    threads_.clear();
  }

 private:
  void copy(int from, int to) {
    char buffer[65536];
    for (;;) {
      pollfd ready{from, POLLIN, 0};
      const int polled = ::poll(&ready, 1, 200);
      if (polled < 0 && errno != EINTR) return;
      if (polled <= 0) {
        if (done_) return;
        continue;
      }
      const ssize_t got = ::read(from, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return;
      for (ssize_t written = 0; written < got;) {
        const ssize_t put = ::write(to, buffer + written, static_cast<size_t>(got - written));
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) return;
        written += put;
      }
    }
  }

  std::vector<UniqueFd> writers_;
  std::vector<std::jthread> threads_;
  std::atomic<bool> done_{false};
};

int exec_in_service_as_root(const std::string& name, const ServiceExec& request) {
  auto installed = installed_profile(name);
  if (!installed) return report(installed.error(), kServiceExecFailed);
  auto manager = connect_systemd(ManagerScope::system);
  if (!manager) return report(manager.error(), kServiceExecFailed);
  auto service = transient_for(name, *installed, request, **manager);
  if (!service) return report(service.error(), kServiceExecFailed);
  if (request.prepare_caches)
    if (auto prepared =
            prepare_profile_caches(name, *installed, std::string(state_paths::kStateRoot));
        !prepared)
      return report(prepared.error(), kServiceExecFailed);
  UniqueFd null_input;
  if (::isatty(STDIN_FILENO)) {
    null_input = UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!null_input)
      return report(Error{fmt::format("Failed to open /dev/null: {}", std::strerror(errno))},
                    kServiceExecFailed);
    service->stdin_fd = null_input.get();
  }
  TerminalRelay relay;
  auto out = relay.wrap(STDOUT_FILENO);
  if (!out) return report(out.error(), kServiceExecFailed);
  auto err = relay.wrap(STDERR_FILENO);
  if (!err) return report(err.error(), kServiceExecFailed);
  service->stdout_fd = *out;
  service->stderr_fd = *err;
  catch_interruptions();
  bool handed_over = false;
  auto status = run_transient(**manager, *service, [&] {
    if (!handed_over) {  // the start job was sent with the unit's copies of the fds
      relay.close_writers();
      null_input = UniqueFd();
      handed_over = true;
    }
    return g_interrupted != 0;
  });
  relay.finish();
  if (!status) return report(status.error(), kServiceExecFailed);
  // Stopped on the caller's signal: the status a shell gives a command that signal ended (systemd
  // counts its own stop as a clean end and collects the unit).
  if (g_interrupted != 0) return 128 + g_interrupted;
  return *status;
}

}  // namespace

int exec_in_service(const std::string& name, const ServiceExec& request) {
  if (::geteuid() != 0)
    return report(Error{fmt::format("gpulaunch {}: must be run as root (it starts a transient "
                                    "service as the service's user)",
                                    request.what)},
                  kServiceExecFailed);
  return exec_in_service_as_root(name, request);
}

}  // namespace gl
