// SPDX-License-Identifier: Apache-2.0
#pragma once
// The programs gpulaunch installs besides itself, spelled once (src/CMakeLists.txt names the
// same targets).

#include <string>
#include <string_view>

namespace gl {

// The unit's ExecStartPost=: a small executable, because it holds the start job.
inline constexpr std::string_view kRecordStartProgram = "gpulaunch-record-start";

// gpulaunch-record-start beside `gpulaunch_binary`: both install to the same directory, and a
// build tree has both in src/.
std::string record_start_program(std::string_view gpulaunch_binary);

}  // namespace gl
