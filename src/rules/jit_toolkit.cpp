// SPDX-License-Identifier: Apache-2.0
#include "rules/jit_toolkit.hpp"

#include "facts/node_fs.hpp"

namespace gl {
namespace {

const ToolkitFact* toolkit_for_root(const Facts& facts, const std::string& root) {
  return facts.toolkit_with_nvcc(normal_path(root) + "/bin/nvcc");
}

}  // namespace

JitPick pick_jit_toolkit(const EnvironmentVariables& environment, const Facts& facts) {
  for (std::string_view variable : {"CUDA_HOME", "CUDA_PATH"})
    if (auto root = lookup(environment, variable))
      return {normal_path(*root), std::string(variable), toolkit_for_root(facts, *root)};
  for (const auto& directory : path_directories(environment)) {
    std::string nvcc = normal_path(directory) + "/nvcc";
    const ToolkitFact* toolkit = facts.toolkit_with_nvcc(nvcc);
    if (toolkit && toolkit->nvcc_exists)
      return {parent_path(directory), "`which nvcc` = " + nvcc, toolkit};
  }
  if (const ToolkitFact* toolkit = toolkit_for_root(facts, "/usr/local/cuda");
      toolkit && toolkit->root_exists)
    return {"/usr/local/cuda", "the default /usr/local/cuda", toolkit};
  return {};
}

}  // namespace gl
