#include "cli/context.hpp"

#include <fmt/core.h>

namespace gl {

DirectorySource CliContext::profile_source() const {
  std::vector<std::filesystem::path> directories(extra_profile_dirs.begin(),
                                                 extra_profile_dirs.end());
  for (auto& directory : default_search_path()) directories.push_back(std::move(directory));
  return DirectorySource(std::move(directories));
}

int report(const Error& error, int exit_code) {
  fmt::print(stderr, "{}\n", error.message);
  return exit_code;
}

}  // namespace gl
