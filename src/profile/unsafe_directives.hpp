// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `service.extra` and `service.unit_extra` may not say unless the profile sets
// `service.allow_unsafe_extra = true`: lines that run a command with privileges, change the
// identity the engine runs as, make systemd open or chown files as root, or undo the hardening
// the renderer writes, override gpulaunch's exit-status verdicts, or take the node from root. One
// table; validation and gpulaunch.toml(5) both read it. A few directives are judged by value
// (a directory mode looser than 0755, an empty RestartPreventExitStatus=, a negative
// OOMScoreAdjust=); every other directive service.extra may set is harmless by a test
// (tests/unit/profile/unsafe_directives_test.cpp).

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gl {

struct UnsafeDirective {
  std::string_view name;  // a directive, or a prefix of directives when `prefix` is set
  bool prefix;
  std::string_view why;  // completes "it ..."
};

std::span<const UnsafeDirective> unsafe_directives();

// Why the directive line "Key=Value" is unsafe (e.g. "User= changes the user the engine runs
// as"), or nullopt.
std::optional<std::string> unsafe_directive_reason(std::string_view line);

}  // namespace gl
