// SPDX-License-Identifier: Apache-2.0
#pragma once
// `record-start`, shared by `gpulaunch record-start` and the gpulaunch-record-start executable.

#include <string>

namespace gl {

// Records the ready start of profile `name` (INVOCATION_ID names it). Always 0: a failure to
// record is a journal line, never a failed unit.
int record_start(const std::string& name);

}  // namespace gl
