// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where gpulaunch installs a unit file (the system manager's /etc or /run, the user's
// ~/.config), and which file `down --purge` removes.

#include <filesystem>
#include <string_view>

#include "systemd/manager.hpp"

namespace gl {

struct UnitPlacement {
  ManagerScope scope = ManagerScope::system;
  bool runtime = false;  // /run/systemd/system: gone at reboot

  // The user manager's directory follows XDG_CONFIG_HOME, else HOME.
  std::filesystem::path directory() const;
};

// The unit file `down --purge` removes: only one gpulaunch generated, in the directory it
// installs to. `fragment_path` is the file systemd loaded the unit from (empty: none loaded);
// one elsewhere (a vendor unit under /usr/lib, a file of another name that the unit's name links
// to) is never removed: the path in gpulaunch's directory is, whether a file is there or not.
std::filesystem::path unit_file_to_purge(const UnitPlacement& placement, std::string_view unit,
                                         std::string_view fragment_path);

}  // namespace gl
