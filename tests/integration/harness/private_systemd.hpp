// SPDX-License-Identifier: Apache-2.0
#pragma once
// A private systemd 252 for GoogleTest integration tests: wraps systemd-harness.sh (boot, exec,
// poweroff). The destructor powers the manager off, so a failed assertion cannot leave it running.
// Needs root; skipped() says why booting is impossible here (the script's exit 77).

#include <string>
#include <vector>

namespace gpulaunch::testing {

struct ExecResult {
  int exit_code = -1;  // 128 + signal when the command was killed
  std::string out;     // stdout (stderr is passed through to the test's stderr)
};

class PrivateSystemd {
 public:
  PrivateSystemd();  // creates a state directory; does not boot
  ~PrivateSystemd();
  PrivateSystemd(const PrivateSystemd&) = delete;
  PrivateSystemd& operator=(const PrivateSystemd&) = delete;

  // Boots; true when the manager answers. False with skip_reason() set when it cannot run here.
  bool boot();
  // Runs argv inside the namespaces (nsenter -m -p); captures stdout.
  ExecResult exec(const std::vector<std::string>& argv) const;
  void poweroff();  // idempotent

  int pid() const { return pid_; }  // as seen from the host; 0 when not booted
  bool skipped() const { return skipped_; }
  const std::string& skip_reason() const { return skip_reason_; }
  const std::string& state_dir() const { return state_dir_; }

  static std::string script_path();  // GPULAUNCH_HARNESS_SCRIPT, else the path compiled in

 private:
  std::string state_dir_;
  int pid_ = 0;
  bool skipped_ = false;
  std::string skip_reason_;
};

}  // namespace gpulaunch::testing
