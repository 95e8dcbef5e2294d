// SPDX-License-Identifier: Apache-2.0
#pragma once
// One profile's metrics file in node_exporter's textfile directory (state_paths), written by root
// only: replaced atomically (a scrape never reads half a file), in a directory only root can
// change (safe_file's rule), never through a link.

#include <filesystem>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace gl {

struct MetricsWrite {
  bool done = false;
  std::string path;  // the file
  std::string note;  // why nothing was done (no such directory: node_exporter not installed)
};

Result<MetricsWrite> write_metrics_file(const std::filesystem::path& directory,
                                        std::string_view profile, std::string_view text);
// The profile is uninstalled: its file goes (a missing file or directory is not an error).
Result<MetricsWrite> remove_metrics_file(const std::filesystem::path& directory,
                                         std::string_view profile);

}  // namespace gl
