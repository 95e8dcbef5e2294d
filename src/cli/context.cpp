// SPDX-License-Identifier: Apache-2.0
#include "cli/context.hpp"

#include <fmt/core.h>

#include "profile/profile_name.hpp"

namespace gl {

DirectorySource CliContext::profile_source() const {
  std::vector<std::filesystem::path> directories(extra_profile_dirs.begin(),
                                                 extra_profile_dirs.end());
  for (auto& directory : default_search_path()) directories.push_back(std::move(directory));
  return DirectorySource(std::move(directories));
}

const CLI::Validator& profile_name_check() {
  static const CLI::Validator check(
      [](std::string& value) {
        auto valid = check_profile_name(value);
        return valid ? std::string() : valid.error().message;
      },
      "");
  return check;
}

const CLI::Validator& profile_argument_check() {
  static const CLI::Validator check(
      [](std::string& value) {
        auto name = profile_name_of(value);
        return name ? std::string() : name.error().message;
      },
      "");
  return check;
}

int report(const Error& error, int exit_code) {
  logging::error(error.message);
  return exit_code;
}

}  // namespace gl
