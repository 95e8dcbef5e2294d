// SPDX-License-Identifier: Apache-2.0
#include "harness/mock_engine_host.hpp"

#include <cstdlib>
#include <fstream>

#include "util/state_paths.hpp"

namespace gpulaunch::testing {

namespace fs = std::filesystem;

MockEngineHost::MockEngineHost(fs::path work, std::string gpulaunch_binary, fs::path source_dir)
    : work_(std::move(work)),
      gpulaunch_(std::move(gpulaunch_binary)),
      source_dir_(std::move(source_dir)) {}

bool MockEngineHost::boot() {
  fs::remove_all(work_);
  fs::create_directories(work_ / "profiles");
  const std::string install = "bash '" + (source_dir_ / "mock/install.sh").string() + "' '" +
                              (work_ / "venv").string() + "' >/dev/null";
  if (std::system(install.c_str()) != 0) return false;
  if (systemd_.boot()) return true;
  if (systemd_.skipped()) skip_reason_ = systemd_.skip_reason();
  return false;
}

void MockEngineHost::write_profile(const std::string& name, int port, const std::string& extra,
                                   const std::string& env, const std::string& model_path) {
  std::ofstream(work_ / "profiles" / (name + ".toml"))
      << "[engine]\nkind = \"sglang\"\nvenv = \"" << (work_ / "venv").string() << "\"\n"
      << "[model]\npath = \"" << model_path << "\"\n"
      << "[server]\nport = " << port << "\n"
      << extra << "\n[env]\nMOCK_SGLANG_LOAD_SECONDS = \"1\"\n"
      << "MOCK_SGLANG_MODE_FILE = \"" << (work_ / (name + ".mode")).string() << "\"\n"
      << env;
}

void MockEngineHost::set_mode(const std::string& name, const std::string& mode) {
  std::ofstream(work_ / (name + ".mode")) << mode;
}

ExecResult MockEngineHost::gpulaunch(const std::string& arguments) {
  return systemd_.exec(
      {"sh", "-c",
       "'" + gpulaunch_ + "' -P '" + (work_ / "profiles").string() + "' " + arguments + " 2>&1"});
}

nlohmann::json MockEngineHost::status_of(const std::string& name) {
  auto all = nlohmann::json::parse(gpulaunch("status " + name + " --json").out, nullptr, false);
  if (!all.is_array() || all.empty()) return nlohmann::json::object();
  return all[0];
}

nlohmann::json MockEngineHost::events_of(const std::string& name) {
  auto events = nlohmann::json::parse(gpulaunch("events " + name + " --json").out, nullptr, false);
  return events.is_array() ? events : nlohmann::json::array();
}

std::vector<std::string> MockEngineHost::recorded_argv(const std::string& name) {
  // The mock writes it in its HOME, the engine's own directory.
  auto recorded = systemd_.exec(
      {"cat", (gl::state_paths::engine_home(name) / "mock-sglang-argv.json").string()});
  auto json = nlohmann::json::parse(recorded.out, nullptr, false);
  return json.is_array() ? json.get<std::vector<std::string>>() : std::vector<std::string>{};
}

nlohmann::json event_of(const nlohmann::json& events, const std::string& kind) {
  for (const auto& event : events)
    if (event["class"] == kind) return event;
  return nlohmann::json::object();
}

std::optional<std::string> flag_value(const std::vector<std::string>& argv,
                                      const std::string& flag) {
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == flag) return argv[i + 1];
  return std::nullopt;
}

}  // namespace gpulaunch::testing
