// SPDX-License-Identifier: Apache-2.0
#pragma once
// A journal entry as `logs` and `status NAME` print it, journalctl's short format: "Dec 07
// 10:43:05 IDENT[PID]: MESSAGE", the engine's escapes made visible. Defined in logs_command.cpp.

#include <string>

#include "systemd/journal.hpp"

namespace gl {

std::string journal_line(const JournalEntry& entry);

}  // namespace gl
