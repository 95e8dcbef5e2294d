// SPDX-License-Identifier: Apache-2.0
#include "util/own_programs.hpp"

#include <filesystem>

namespace gl {

std::string record_start_program(std::string_view gpulaunch_binary) {
  return (std::filesystem::path(gpulaunch_binary).parent_path() / kRecordStartProgram).string();
}

}  // namespace gl
