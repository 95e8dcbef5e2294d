// SPDX-License-Identifier: Apache-2.0
#pragma once
// The installed unit's drop-ins (`systemctl edit`'s /etc/systemd/system/UNIT.d/*.conf and the
// others systemd reads: the manager's DropInPaths=, in its order) laid over the rendered unit,
// so `gpulaunch exec` runs under what the engine runs under. Read the way systemd's parser reads
// a unit file (src/shared/conf-parser.c, v252): '#' and ';' start a comment line, a line ending
// in a backslash continues on the next, whitespace around the key and value is dropped.

#include <string_view>

#include "unit/unit_file.hpp"
#include "util/error.hpp"

namespace gl {

// Appends each Key=Value of `text` to its section of `unit`, in order: systemd appends a list
// directive and lets the last value of any other win, and an empty value resets a list, which
// unit/transient sends the same way. `shown` names the file in an error ("path:line: ...").
Result<void> apply_drop_in(UnitFile& unit, std::string_view text, std::string_view shown);

}  // namespace gl
