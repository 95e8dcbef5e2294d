// SPDX-License-Identifier: Apache-2.0
// Where units are installed and which file `down --purge` removes: only gpulaunch's own file in
// the directory it installs to, never the file systemd loaded from somewhere else.

#include "unit/placement.hpp"

#include <cstdlib>
#include <optional>
#include <string>

#include <gtest/gtest.h>

namespace gl {
namespace {

const UnitPlacement kSystem{ManagerScope::system, false};
const UnitPlacement kRuntime{ManagerScope::system, true};
constexpr std::string_view kUnit = "gpulaunch-chat.service";

// Sets a variable for one test and puts the old value back.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedVariable() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(UnitPlacement, SystemUnitsGoToEtcOrRunAndUserUnitsToTheConfigHome) {
  EXPECT_EQ(kSystem.directory(), "/etc/systemd/system");
  EXPECT_EQ(kRuntime.directory(), "/run/systemd/system");
  {
    ScopedVariable xdg("XDG_CONFIG_HOME", "/home/llm/.cfg");
    EXPECT_EQ((UnitPlacement{ManagerScope::user, false}).directory(),
              "/home/llm/.cfg/systemd/user");
  }
  ScopedVariable xdg("XDG_CONFIG_HOME", "");
  ScopedVariable home("HOME", "/home/llm");
  EXPECT_EQ((UnitPlacement{ManagerScope::user, false}).directory(),
            "/home/llm/.config/systemd/user");
}

TEST(UnitPlacement, PurgeRemovesTheFileSystemdLoadedWhenItIsGpulaunchsOwn) {
  EXPECT_EQ(unit_file_to_purge(kSystem, kUnit, "/etc/systemd/system/gpulaunch-chat.service"),
            "/etc/systemd/system/gpulaunch-chat.service");
  EXPECT_EQ(unit_file_to_purge(kRuntime, kUnit, "/run/systemd/system/gpulaunch-chat.service"),
            "/run/systemd/system/gpulaunch-chat.service");
}

TEST(UnitPlacement, PurgeNeverRemovesAFileOutsideGpulaunchsDirectoryOrOfAnotherName) {
  // Nothing loaded (the unit is not installed, or systemd forgot it): gpulaunch's path.
  EXPECT_EQ(unit_file_to_purge(kSystem, kUnit, ""), "/etc/systemd/system/gpulaunch-chat.service");
  // A vendor unit of the same name: left alone, gpulaunch's own path is what goes.
  EXPECT_EQ(unit_file_to_purge(kSystem, kUnit, "/usr/lib/systemd/system/gpulaunch-chat.service"),
            "/etc/systemd/system/gpulaunch-chat.service");
  // The name links to a file of another name in the same directory: that file is not ours.
  EXPECT_EQ(unit_file_to_purge(kSystem, kUnit, "/etc/systemd/system/other.service"),
            "/etc/systemd/system/gpulaunch-chat.service");
  // Installed at runtime, purged as a persistent one: the /run file is not touched.
  EXPECT_EQ(unit_file_to_purge(kSystem, kUnit, "/run/systemd/system/gpulaunch-chat.service"),
            "/etc/systemd/system/gpulaunch-chat.service");
}

}  // namespace
}  // namespace gl
