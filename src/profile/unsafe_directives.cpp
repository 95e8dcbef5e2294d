// SPDX-License-Identifier: Apache-2.0
#include "profile/unsafe_directives.hpp"

#include <array>

#include <fmt/core.h>

namespace gl {
namespace {

constexpr std::string_view kIdentity = "changes the user or credentials the engine runs with";
constexpr std::string_view kHardening = "relaxes the sandbox gpulaunch writes";
constexpr std::string_view kRootFiles = "makes systemd open, read or chown files as root";
constexpr std::string_view kPrivileged = "runs commands or actions with full privileges";

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
  // ExecStart=, ExecStartPre=, ExecStopPost=, ExecCondition=, ExecReload=, ...: commands.
  if (name.starts_with("Exec")) return exec_reason(name, value);
  return std::nullopt;
}

}  // namespace gl
