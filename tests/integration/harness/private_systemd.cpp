// SPDX-License-Identifier: Apache-2.0
#include "private_systemd.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

extern char** environ;

namespace gpulaunch::testing {
namespace {

// Runs argv, stdout captured, stderr inherited; returns the exit status (128 + signal if killed).
ExecResult run(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t child = 0;
  const int spawn_error = posix_spawnp(&child, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  ExecResult result;
  if (spawn_error != 0) {
    close(pipe_fds[0]);
    result.exit_code = 127;
    return result;
  }
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n > 0) {
      result.out.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace

std::string PrivateSystemd::script_path() {
  if (const char* path = std::getenv("GPULAUNCH_HARNESS_SCRIPT"); path && *path) return path;
  return GPULAUNCH_HARNESS_SCRIPT_DEFAULT;
}

PrivateSystemd::PrivateSystemd() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "gpulaunch-private-systemd.XXXXXX");
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  state_dir_ = pattern;
}

PrivateSystemd::~PrivateSystemd() {
  try {
    poweroff();
    std::error_code ignored;
    std::filesystem::remove_all(state_dir_, ignored);
  } catch (...) {
  }
}

bool PrivateSystemd::boot() {
  const ExecResult result = run({"bash", script_path(), "boot", state_dir_});
  if (result.exit_code == 77) {
    skipped_ = true;
    skip_reason_ = "systemd-harness.sh cannot boot here (needs root and unshare); see stderr";
    return false;
  }
  if (result.exit_code != 0) return false;
  pid_ = std::atoi(result.out.c_str());
  return pid_ > 0;
}

ExecResult PrivateSystemd::exec(const std::vector<std::string>& argv) const {
  std::vector<std::string> full{"bash", script_path(), "exec", state_dir_, "--"};
  full.insert(full.end(), argv.begin(), argv.end());
  return run(full);
}

void PrivateSystemd::poweroff() {
  run({"bash", script_path(), "poweroff", state_dir_});
  pid_ = 0;
}

}  // namespace gpulaunch::testing
