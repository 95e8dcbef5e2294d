// SPDX-License-Identifier: Apache-2.0
#include "util/process.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <future>

#include <boost/asio/io_context.hpp>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>

#include "util/try.hpp"

namespace gl {
namespace {

namespace bp = boost::process;

std::atomic<unsigned long long> g_started{0};

// Runs in the forked child, before exec: drops to `identity` for good. Boost reports a
// handler's error to the parent but still calls execve afterwards, so a failed drop must end
// the child here, never exec as root.
struct DropPrivileges : bp::extend::handler {
  uid_t uid;
  gid_t gid;

  template <typename Executor>
  void on_exec_setup(Executor& exec) const {
    if (::setgroups(1, &gid) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0 ||
        ::setuid(0) == 0) {  // regaining root must be impossible
      exec.set_error(std::error_code(errno ? errno : EPERM, std::system_category()),
                     "dropping privileges");
      ::_exit(126);
    }
  }
};

template <typename... Extra>
Result<ProcessOutput> run(const std::string& program, const std::vector<std::string>& args,
                          std::chrono::milliseconds timeout, Extra&&... extra) {
  boost::asio::io_context io;
  std::future<std::string> out;
  std::error_code start_error;
  ++g_started;
  bp::child child(bp::exe = program, bp::args = args, bp::std_out > out, bp::std_err > bp::null,
                  bp::std_in < bp::null, io, start_error, std::forward<Extra>(extra)...);
  if (start_error) return failf("Failed to run '{}': {}", program, start_error.message());
  // Returns once the output pipe closes and the exit is reaped, or at the deadline.
  io.run_for(timeout);
  if (!io.stopped()) {
    std::error_code ignored;
    child.terminate(ignored);
    return failf("Failed to run '{}': no answer within {} ms", program, timeout.count());
  }
  std::error_code wait_error;
  child.wait(wait_error);
  ProcessOutput result;
  result.exit_code = child.exit_code();
  result.out = out.get();
  return result;
}

}  // namespace

Result<ProcessOutput> run_process(const std::string& program, const std::vector<std::string>& args,
                                  std::chrono::milliseconds timeout) {
  return run(program, args, timeout);
}

Result<PipelineOutput> run_pipeline(const std::string& program,
                                    const std::vector<std::string>& source_args,
                                    const std::vector<std::string>& target_args,
                                    std::chrono::milliseconds timeout) {
  boost::asio::io_context io;
  std::future<std::string> source_err;
  std::future<std::string> target_out;
  std::error_code start_error;
  bp::pipe between;
  ++g_started;
  bp::child target(bp::exe = program, bp::args = target_args,
                   bp::std_in<between, bp::std_out> target_out, bp::std_err > bp::null, io,
                   start_error);
  if (start_error) return failf("Failed to run '{}': {}", program, start_error.message());
  ++g_started;
  bp::child source(bp::exe = program, bp::args = source_args, bp::std_out > between,
                   bp::std_err > source_err, bp::std_in < bp::null, io, start_error);
  // Only the children hold the pipe now: the target sees its end when the source exits.
  between.close();
  if (start_error) {
    std::error_code ignored;
    target.terminate(ignored);
    return failf("Failed to run '{}': {}", program, start_error.message());
  }
  io.run_for(timeout);
  if (!io.stopped()) {
    std::error_code ignored;
    source.terminate(ignored);
    target.terminate(ignored);
    return failf("Failed to run '{}': no answer within {} ms", program, timeout.count());
  }
  std::error_code wait_error;
  source.wait(wait_error);
  target.wait(wait_error);
  PipelineOutput result;
  result.source_exit = source.exit_code();
  result.source_err = source_err.get();
  result.target_exit = target.exit_code();
  result.target_out = target_out.get();
  return result;
}

Result<Identity> unprivileged_identity(const std::optional<std::string>& service_user) {
  std::string name = service_user && *service_user != "root" ? *service_user : "nobody";
  struct passwd entry {};
  struct passwd* found = nullptr;
  std::vector<char> buffer(16384);
  int error = ::getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (error != 0) return failf("Failed to look up user '{}': {}", name, std::strerror(error));
  if (!found) return failf("Failed to look up user '{}': no such user", name);
  if (found->pw_uid == 0)
    return failf("Refusing to run untrusted programs as '{}': it is uid 0", name);
  return Identity{name, found->pw_uid, found->pw_gid};
}

Result<ProcessOutput> run_unprivileged(const std::string& program,
                                       const std::vector<std::string>& args,
                                       const std::optional<std::string>& service_user,
                                       std::chrono::milliseconds timeout) {
  bp::environment clean;
  clean["PATH"] = "/usr/bin:/bin";
  if (::geteuid() != 0) return run(program, args, timeout, clean, bp::start_dir = "/");
  GL_TRY(const auto identity, unprivileged_identity(service_user));
  DropPrivileges drop;
  drop.uid = identity.uid;
  drop.gid = identity.gid;
  return run(program, args, timeout, clean, bp::start_dir = "/", drop);
}

unsigned long long processes_started() {
  return g_started.load();
}

}  // namespace gl
