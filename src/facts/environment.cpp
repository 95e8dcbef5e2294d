// SPDX-License-Identifier: Apache-2.0
#include "facts/environment.hpp"

#include <array>
#include <cstdlib>

namespace gl {

std::optional<std::string> lookup(const EnvironmentVariables& variables, std::string_view name) {
  for (auto it = variables.rbegin(); it != variables.rend(); ++it)
    if (it->first == name) return it->second.empty() ? std::nullopt : std::optional(it->second);
  return std::nullopt;
}

std::vector<std::string> path_directories(const EnvironmentVariables& variables) {
  std::vector<std::string> directories;
  auto path = lookup(variables, "PATH");
  if (!path) return directories;
  size_t begin = 0;
  while (begin <= path->size()) {
    auto end = path->find(':', begin);
    if (end == std::string::npos) end = path->size();
    if (end > begin) directories.push_back(path->substr(begin, end - begin));
    begin = end + 1;
  }
  return directories;
}

std::string first_word(std::string_view value) {
  auto begin = value.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return "";
  auto end = value.find_first_of(" \t", begin);
  return std::string(value.substr(begin, end == std::string_view::npos ? end : end - begin));
}

std::vector<std::string> program_candidates(const EnvironmentVariables& variables,
                                            const std::string& program) {
  if (program.empty()) return {};
  if (program.find('/') != std::string::npos) return {program};
  std::vector<std::string> candidates;
  for (const auto& directory : path_directories(variables))
    candidates.push_back(directory + "/" + program);
  return candidates;
}

ShellEnvironment ShellEnvironment::current() {
  ShellEnvironment shell;
  constexpr std::array<const char*, 4> kNames{"CUDA_HOME", "CUDA_PATH", "PATH",
                                              "FLASHINFER_CUDA_ARCH_LIST"};
  for (const char* name : kNames)
    if (const char* value = std::getenv(name)) shell.variables.emplace_back(name, value);
  return shell;
}

}  // namespace gl
