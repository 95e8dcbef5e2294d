// SPDX-License-Identifier: Apache-2.0
#pragma once
// The variables gpulaunch pins in the unit's environment itself (plan/launch_plan writes them),
// one row each: the profile key that sets it instead (a profile's [env] may not: profile/
// section_readers refuses it with this key), and whether it stays on the host for an engine.image
// (the image has its own PATH, toolkit and libraries, and CDI numbers the assigned GPUs from 0
// inside, so the host's CUDA_VISIBLE_DEVICES indices would name the wrong ones:
// plan/container_command). The JIT caches' variables are pinned too, by their own table
// (catalog/jit_caches).

#include <string_view>

namespace gl {

struct PinnedVariable {
  std::string_view name;
  std::string_view instead;  // the profile key that sets it
  bool host_only;            // never passed into an engine image's container
};

inline constexpr PinnedVariable kPinnedVariables[] = {
    {"CUDA_HOME", "toolkit.cuda_home", true},
    {"CUDA_PATH", "toolkit.cuda_home", true},
    {"PATH", "engine.venv", true},
    {"LD_LIBRARY_PATH", "toolkit.cuda_home", true},
    {"VIRTUAL_ENV", "engine.venv", true},
    {"CUDA_VISIBLE_DEVICES", "gpus.devices", true},
    {"CUDA_DEVICE_ORDER", "gpus.devices", false},
    {"FLASHINFER_CUDA_ARCH_LIST", "toolkit.arch_list", false},
    {"TORCH_CUDA_ARCH_LIST", "toolkit.arch_list", false},
};

// The row of `name`, or nullptr where gpulaunch does not pin it.
constexpr const PinnedVariable* find_pinned_variable(std::string_view name) {
  for (const auto& row : kPinnedVariables)
    if (row.name == name) return &row;
  return nullptr;
}

}  // namespace gl
