// SPDX-License-Identifier: Apache-2.0
#include "profile/unsafe_directives.hpp"

#include <array>
#include <charconv>

#include <fmt/core.h>

namespace gl {
namespace {

constexpr std::string_view kIdentity = "changes the user or credentials the engine runs with";
constexpr std::string_view kHardening = "relaxes the sandbox gpulaunch writes";
constexpr std::string_view kRootFiles = "makes systemd open, read or chown files as root";
constexpr std::string_view kPrivileged = "runs commands or actions with full privileges";
constexpr std::string_view kVerdicts =
    "changes which exit statuses systemd restarts or calls success, which gpulaunch decides";
constexpr std::string_view kNode =
    "lets the engine take the node's CPUs or journal from root's own processes";

// Every directive the renderer hardens with (unit/render.cpp), the identity it runs as, and what
// systemd does as root on the unit's behalf. A prefix covers the whole family, including
// directives newer systemd versions add to it.
constexpr std::array kUnsafe{
    // identity
    UnsafeDirective{"User", false, kIdentity},
    UnsafeDirective{"Group", false, kIdentity},
    UnsafeDirective{"DynamicUser", false, kIdentity},
    UnsafeDirective{"SupplementaryGroups", false, kIdentity},
    UnsafeDirective{"PAMName", false, kIdentity},
    UnsafeDirective{"SecureBits", false, kIdentity},
    UnsafeDirective{"SELinuxContext", false, kIdentity},
    UnsafeDirective{"AppArmorProfile", false, kIdentity},
    UnsafeDirective{"SmackProcessLabel", false, kIdentity},
    UnsafeDirective{"KeyringMode", false, kIdentity},
    // privileged commands (the '+', '!' and '!!' prefixes are checked on every Exec* line)
    UnsafeDirective{"PermissionsStartOnly", false, kPrivileged},
    UnsafeDirective{"FailureAction", false, kPrivileged},
    UnsafeDirective{"SuccessAction", false, kPrivileged},
    UnsafeDirective{"StartLimitAction", false, kPrivileged},
    UnsafeDirective{"JobTimeoutAction", false, kPrivileged},
    // gpulaunch's verdicts (catalog/exit_codes): a forced restart or a status called success
    // would outlast the crash-loop budget. RestartPreventExitStatus= may only add (below).
    UnsafeDirective{"RestartForceExitStatus", false, kVerdicts},
    UnsafeDirective{"SuccessExitStatus", false, kVerdicts},
    // the node: real-time scheduling starves root's processes (RestrictRealtime= binds only
    // the engine's own calls, not what systemd sets before it starts); journald's rate limit
    // and level filter keep a flood, or a filter, from pushing `run`'s own lines out.
    UnsafeDirective{"CPUScheduling", true, kNode},  // Policy=fifo|rr, Priority=, ResetOnFork=
    UnsafeDirective{"IOSchedulingClass", false, kNode},
    UnsafeDirective{"LogRateLimit", true, kNode},  // IntervalSec=0, Burst=
    UnsafeDirective{"LogLevelMax", false, kNode},
    UnsafeDirective{"LogFilterPatterns", false, kNode},
    // hardening
    UnsafeDirective{"NoNewPrivileges", false, kHardening},
    UnsafeDirective{"Capability", true, kHardening},
    UnsafeDirective{"AmbientCapabilities", false, kHardening},
    UnsafeDirective{"Protect", true, kHardening},
    UnsafeDirective{"Private", true, kHardening},
    UnsafeDirective{"SystemCall", true, kHardening},
    UnsafeDirective{"Restrict", true, kHardening},
    UnsafeDirective{"LockPersonality", false, kHardening},
    UnsafeDirective{"MemoryDenyWriteExecute", false, kHardening},
    UnsafeDirective{"Personality", false, kHardening},
    UnsafeDirective{"DevicePolicy", false, kHardening},
    UnsafeDirective{"DeviceAllow", false, kHardening},
    UnsafeDirective{"ReadWritePaths", false, kHardening},
    UnsafeDirective{"ReadOnlyPaths", false, kHardening},
    UnsafeDirective{"InaccessiblePaths", false, kHardening},
    UnsafeDirective{"ExecPaths", false, kHardening},
    UnsafeDirective{"NoExecPaths", false, kHardening},
    UnsafeDirective{"ExecSearchPath", false, kHardening},
    UnsafeDirective{"BindPaths", false, kHardening},  // not a prefix: [Unit] has BindsTo=
    UnsafeDirective{"BindReadOnlyPaths", false, kHardening},
    UnsafeDirective{"TemporaryFileSystem", false, kHardening},
    UnsafeDirective{"Root", true, kHardening},  // RootDirectory, RootImage, ...
    UnsafeDirective{"MountAPIVFS", false, kHardening},
    UnsafeDirective{"MountImages", false, kHardening},
    UnsafeDirective{"Extension", true, kHardening},
    UnsafeDirective{"ProcSubset", false, kHardening},
    UnsafeDirective{"NetworkNamespacePath", false, kHardening},
    UnsafeDirective{"IPCNamespacePath", false, kHardening},
    UnsafeDirective{"UMask", false, kHardening},
    UnsafeDirective{"RemoveIPC", false, kHardening},
    UnsafeDirective{"Delegate", false, kHardening},
    // systemd acting as root on paths the line names
    UnsafeDirective{"StateDirectory", false, kRootFiles},
    UnsafeDirective{"CacheDirectory", false, kRootFiles},
    UnsafeDirective{"LogsDirectory", false, kRootFiles},
    UnsafeDirective{"RuntimeDirectory", false, kRootFiles},
    UnsafeDirective{"ConfigurationDirectory", false, kRootFiles},
    UnsafeDirective{"WorkingDirectory", false, kRootFiles},
    UnsafeDirective{"EnvironmentFile", false, kRootFiles},
    UnsafeDirective{"LoadCredential", true, kRootFiles},
    UnsafeDirective{"SetCredential", true, kRootFiles},
    UnsafeDirective{"ImportCredential", false, kRootFiles},
    UnsafeDirective{"Standard", true, kRootFiles},  // StandardOutput=file:/etc/...
    UnsafeDirective{"TTY", true, kRootFiles},
};

// The directives whose value decides: a directory mode looser than systemd's default 0755
// (systemd.exec(5), "RuntimeDirectoryMode= ... Defaults to 0755"), since systemd applies it as
// root to the engine's cache and state roots; an empty RestartPreventExitStatus=, which resets
// the list gpulaunch writes (a spent budget, a configuration error) and lets systemd restart
// through it; a negative OOMScoreAdjust=, which has the kernel kill root's processes first.
constexpr std::string_view kDirectoryModes[] = {"CacheDirectoryMode", "StateDirectoryMode",
                                                "RuntimeDirectoryMode", "LogsDirectoryMode",
                                                "ConfigurationDirectoryMode"};
constexpr unsigned kDefaultDirectoryMode = 0755;

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::optional<std::string> value_reason(std::string_view name, std::string_view value) {
  value = trimmed(value);
  for (auto mode_directive : kDirectoryModes) {
    if (name != mode_directive) continue;
    unsigned mode = 0;
    auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), mode, 8);
    if (value.empty() || error != std::errc{} || end != value.data() + value.size() ||
        (mode & ~kDefaultDirectoryMode) != 0)
      return fmt::format("{}={} is looser than the default {:04o} systemd applies as root", name,
                         value, kDefaultDirectoryMode);
  }
  if (name == "RestartPreventExitStatus" && value.empty())
    return fmt::format("an empty {}= resets the statuses gpulaunch stops restarts with", name);
  if (name == "OOMScoreAdjust" && value.starts_with('-'))
    return fmt::format("a negative {}= has the kernel's OOM killer pick root's processes first",
                       name);
  return std::nullopt;
}

bool matches(const UnsafeDirective& entry, std::string_view name) {
  return entry.prefix ? name.starts_with(entry.name) : name == entry.name;
}

// The prefixes systemd reads before an Exec* command's path: '@' (argv[0]), '-' (ignore
// failure), ':' (no variable expansion) are harmless; '+' (full privileges) and '!', '!!'
// (skip User=, Group= and capabilities) are not. Anything else before the path ('|', a
// backslash escape, a quote hiding a prefix) cannot be told apart from them and is refused.
std::optional<std::string> exec_reason(std::string_view key, std::string_view value) {
  bool command_start = true;
  size_t at = 0;
  while (at < value.size()) {
    while (at < value.size() && (value[at] == ' ' || value[at] == '\t')) ++at;
    size_t end = at;
    while (end < value.size() && value[end] != ' ' && value[end] != '\t') ++end;
    const std::string_view word = value.substr(at, end - at);
    at = end;
    if (word.empty()) break;
    if (word == ";") {  // systemd runs the next word as another command
      command_start = true;
      continue;
    }
    if (!command_start) continue;
    command_start = false;
    // Quotes are removed before systemd reads the prefixes: look through them too.
    size_t i = word.find_first_not_of("@-:\"'");
    const char first = i == std::string_view::npos ? '\0' : word[i];
    if (first == '+')
      return fmt::format("{}= with the '+' prefix runs its command with full privileges", key);
    if (first == '!')
      return fmt::format("{}= with the '{}' prefix runs its command as root, ignoring User=", key,
                         word.substr(i, 2) == "!!" ? "!!" : "!");
    const bool plain = first == '/' || (first >= 'a' && first <= 'z') ||
                       (first >= 'A' && first <= 'Z') || (first >= '0' && first <= '9');
    if (!plain)
      return fmt::format(
          "{}= command '{}' does not start with a path, so a privilege prefix could hide in it",
          key, word);
  }
  return std::nullopt;
}

}  // namespace

std::span<const UnsafeDirective> unsafe_directives() {
  return kUnsafe;
}

std::optional<std::string> unsafe_directive_reason(std::string_view line) {
  const size_t equals = line.find('=');
  const std::string_view name = line.substr(0, equals);
  const std::string_view value =
      equals == std::string_view::npos ? std::string_view{} : line.substr(equals + 1);
  for (const auto& entry : kUnsafe)
    if (matches(entry, name)) return fmt::format("{}= {}", name, entry.why);
  if (auto reason = value_reason(name, value)) return reason;
  // ExecStart=, ExecStartPre=, ExecStopPost=, ExecCondition=, ExecReload=, ...: commands.
  if (name.starts_with("Exec")) return exec_reason(name, value);
  return std::nullopt;
}

}  // namespace gl
