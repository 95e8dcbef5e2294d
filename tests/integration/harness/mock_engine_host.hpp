// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the lifecycle and supervision suites share: a private systemd (PrivateSystemd) with the
// mock SGLang installed in a venv beside it, profiles written for that mock, and gpulaunch run
// inside the harness's namespaces, with its answers parsed.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/private_systemd.hpp"

namespace gpulaunch::testing {

class MockEngineHost {
 public:
  // `work`: not under /tmp (the private systemd mounts its own); emptied and made here.
  MockEngineHost(std::filesystem::path work, std::string gpulaunch_binary,
                 std::filesystem::path source_dir);

  // Installs the mock's venv and boots; false with skip_reason() set when it cannot run here,
  // false with an empty one when it failed.
  bool boot();
  const std::string& skip_reason() const { return skip_reason_; }
  PrivateSystemd& systemd() { return systemd_; }
  const std::filesystem::path& work() const { return work_; }

  // A profile NAME for the mock: [engine], [model] (`model_path`), [server] port, then `extra`
  // verbatim (more keys or sections), then [env] with a short load time, the mode file and `env`.
  void write_profile(const std::string& name, int port, const std::string& extra,
                     const std::string& env = "", const std::string& model_path = "/models/mock");
  // The mock's failure mode for the profile's next start (MOCK_SGLANG_MODE_FILE).
  void set_mode(const std::string& name, const std::string& mode);

  // gpulaunch ARGUMENTS inside the namespaces, with this host's profiles; stdout and stderr.
  ExecResult gpulaunch(const std::string& arguments);
  nlohmann::json status_of(const std::string& name);  // `status --json`'s entry, or {}
  nlohmann::json events_of(const std::string& name);  // `events --json`, or []
  // The argv the mock recorded at its last start (in the engine's home, under the harness's
  // private /var/lib).
  std::vector<std::string> recorded_argv(const std::string& name);

  // Polls `done()` every 300 ms until it holds or `limit` passed; its last answer.
  template <class Predicate>
  static bool eventually(Predicate done, std::chrono::seconds limit = std::chrono::seconds(60)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    return done();
  }

 private:
  std::filesystem::path work_;
  std::string gpulaunch_;
  std::filesystem::path source_dir_;
  PrivateSystemd systemd_;
  std::string skip_reason_;
};

// Events of class `kind` in `events` (an `events --json` array): the first, or {}.
nlohmann::json event_of(const nlohmann::json& events, const std::string& kind);
std::optional<std::string> flag_value(const std::vector<std::string>& argv,
                                      const std::string& flag);

}  // namespace gpulaunch::testing
