// SPDX-License-Identifier: Apache-2.0
#include "cli/unit_diff.hpp"

#include <filesystem>

#include "util/atomic_file.hpp"
#include "util/process.hpp"

namespace gl {

std::string unit_diff(const std::string& installed, const std::string& updated,
                      const std::string& label) {
  std::string pattern = (std::filesystem::temp_directory_path() / "gpulaunch-diff-XXXXXX").string();
  if (!mkdtemp(pattern.data())) return "(could not compute the difference)\n";
  const std::filesystem::path directory = pattern;
  const auto before = directory / "installed", after = directory / "new";
  std::string text = "(could not compute the difference)\n";
  if (write_file_atomically(before, installed) && write_file_atomically(after, updated)) {
    auto diff =
        run_process("/usr/bin/diff", {"-u", "--label", label + " (installed)", before.string(),
                                      "--label", label + " (new)", after.string()});
    if (diff && diff->exit_code <= 1) text = diff->out;
  }
  std::error_code ignored;
  std::filesystem::remove_all(directory, ignored);
  return text;
}

}  // namespace gl
