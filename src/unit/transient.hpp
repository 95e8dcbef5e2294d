// SPDX-License-Identifier: Apache-2.0
#pragma once
// The service's environment, identity and sandbox as the properties of a transient unit
// (StartTransientUnit, org.freedesktop.systemd1(5)), read from the same unit model the service
// is rendered from, so `gpulaunch exec` runs a command exactly where the engine runs. Each
// directive maps to the D-Bus type systemd-run sends for it (src/shared/bus-unit-util.c,
// bus_append_execute_property and bus_append_cgroup_property, systemd 000e859, as in v250-v252).
// The service's own lifecycle (ExecStart=, Restart=, timeouts) is left out by name; any other
// directive that cannot be mapped is an error naming it, never dropped. Nothing reaches systemd
// that it would write into the transient unit's file unescaped: a value holding a control byte is
// refused, the Description= is made one line; ExecStart= systemd writes C-escaped itself
// (src/core/dbus-execute.c, bus_set_transient_exec_command, UNIT_ESCAPE_C, v247-v253).

#include <string>
#include <string_view>
#include <vector>

#include "systemd/bus_property.hpp"
#include "unit/unit_file.hpp"
#include "util/error.hpp"

namespace gl {

// The [Service] directives of `unit` that are not the service's lifecycle, as properties of the
// transient service `transient_unit` (its credentials directory stands for %d): one property
// per line, in order, as `systemd-run -p` sends them (systemd appends a repeated Environment= or
// DeviceAllow=, and an empty list resets it, as in a unit file).
Result<std::vector<BusProperty>> transient_properties(const UnitFile& unit,
                                                      std::string_view transient_unit);

// `gpulaunch exec`'s Description=, "gpulaunch exec NAME: CMD...": one line whatever the command
// holds (unit/escape's one_line), since systemd 252 writes it into the transient unit's file with
// only its specifiers escaped and reads that file back at every daemon-reload.
std::string transient_description(std::string_view profile,
                                  const std::vector<std::string>& command);

// The words of a unit file value as systemd reads them: split at whitespace, quotes removed,
// C escapes undone, "%%" -> "%", "%d" -> `credentials_directory`; any other specifier is an
// error (a transient unit's properties are not specifier-expanded).
Result<std::vector<std::string>> unit_words(std::string_view value,
                                            std::string_view credentials_directory);

}  // namespace gl
