// SPDX-License-Identifier: Apache-2.0
#pragma once
// Quoting for unit files, by the rules systemd's parser applies (as fixed in v254; field-facts
// section 8), so any byte string reaches the process unchanged.

#include <string>
#include <string_view>
#include <vector>

namespace gl {

// One ExecStart= word: double-quoted, with %, $, \ and " escaped and control bytes C-escaped.
std::string quote_exec_word(std::string_view word);

// A whole ExecStart= command line.
std::string exec_command_line(const std::vector<std::string>& argv);

// One word of a path list (ReadWritePaths=, ...): quoted and C-escaped like an ExecStart= word,
// but with $ as is: systemd expands specifiers there, not variables.
std::string quote_path_word(std::string_view path);

// One Environment= assignment: "NAME=value", quoted; $ is not special there.
std::string quote_environment(std::string_view name, std::string_view value);

// Environment= "NAME=%d/CREDENTIAL": the path of a credential in the unit's credentials
// directory (systemd's %d). Both names are variable names, which need no quoting.
std::string credential_path_environment(std::string_view name, std::string_view credential);

// Text that stays one line of a unit file whatever it holds: control bytes (a newline, which
// would start a line such as "[Service]" or "ExecStopPost=+CMD") written as visible "\xNN",
// and a trailing backslash kept from joining the next line to this one (systemd's line
// continuation) by a space after it, which systemd strips again. For a value systemd writes into
// a transient unit with only its specifiers escaped (Description=: systemd src/core/dbus-unit.c,
// bus_unit_set_transient_property, "Description=%s" with UNIT_ESCAPE_SPECIFIERS, v252).
std::string one_line(std::string_view text);

// A value that is used verbatim in a unit file line (Description=, paths): one_line with % escaped.
std::string escape_specifiers(std::string_view text);

}  // namespace gl
