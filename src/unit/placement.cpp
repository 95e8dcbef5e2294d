// SPDX-License-Identifier: Apache-2.0
#include "unit/placement.hpp"

#include <cstdlib>

namespace gl {

std::filesystem::path UnitPlacement::directory() const {
  if (scope == ManagerScope::user) {
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
      return std::filesystem::path(xdg) / "systemd/user";
    const char* home = std::getenv("HOME");
    return std::filesystem::path(home ? home : "/") / ".config/systemd/user";
  }
  return runtime ? "/run/systemd/system" : "/etc/systemd/system";
}

std::filesystem::path unit_file_to_purge(const UnitPlacement& placement, std::string_view unit,
                                         std::string_view fragment_path) {
  const std::filesystem::path ours = placement.directory() / unit;
  if (fragment_path.empty()) return ours;
  const std::filesystem::path loaded(fragment_path);
  if (loaded.filename() != unit || loaded.parent_path() != placement.directory()) return ours;
  return loaded;
}

}  // namespace gl
