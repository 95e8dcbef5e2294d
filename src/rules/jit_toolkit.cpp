// SPDX-License-Identifier: Apache-2.0
#include "rules/jit_toolkit.hpp"

#include "facts/node_fs.hpp"

namespace gl {
namespace {

const ToolkitFact* toolkit_for_root(const Facts& facts, const std::string& root) {
  return facts.toolkit_with_nvcc(normal_path(root) + "/bin/nvcc");
}

JitPick pick(std::string root, std::string how, const ToolkitFact* toolkit) {
  JitPick result;
  result.root = std::move(root);
  result.how = std::move(how);
  result.toolkit = toolkit;
  return result;
}

JitPick pick_root(const EnvironmentVariables& environment, const Facts& facts) {
  for (std::string_view variable : {"CUDA_HOME", "CUDA_PATH"})
    if (auto root = lookup(environment, variable))
      return pick(normal_path(*root), std::string(variable), toolkit_for_root(facts, *root));
  for (const auto& directory : path_directories(environment)) {
    std::string nvcc = normal_path(directory) + "/nvcc";
    const ToolkitFact* toolkit = facts.toolkit_with_nvcc(nvcc);
    if (toolkit && toolkit->nvcc_exists)
      return pick(parent_path(directory), "`which nvcc` = " + nvcc, toolkit);
  }
  if (const ToolkitFact* toolkit = toolkit_for_root(facts, "/usr/local/cuda");
      toolkit && toolkit->root_exists)
    return pick("/usr/local/cuda", "the default /usr/local/cuda", toolkit);
  return {};
}

}  // namespace

JitPick pick_jit_toolkit(const EnvironmentVariables& environment, const Facts& facts) {
  JitPick pick = pick_root(environment, facts);
  if (auto nvcc = lookup(environment, "FLASHINFER_NVCC")) {
    pick.nvcc_override = first_word(*nvcc);
    for (const auto& candidate : program_candidates(environment, pick.nvcc_override))
      if (const ToolkitFact* toolkit = facts.toolkit_with_nvcc(normal_path(candidate));
          toolkit && toolkit->nvcc_exists) {
        pick.nvcc_override = normal_path(candidate);
        pick.compiler = toolkit;
        break;
      }
  }
  if (auto launcher = lookup(environment, "FLASHINFER_NVCC_LAUNCHER"))
    pick.launcher = first_word(*launcher);
  return pick;
}

}  // namespace gl
