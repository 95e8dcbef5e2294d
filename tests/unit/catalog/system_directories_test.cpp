// SPDX-License-Identifier: Apache-2.0
#include "catalog/system_directories.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

TEST(SystemDirectories, SystemTreesAndSharedDirectoriesHoldNoCache) {
  EXPECT_EQ(system_directory_reason("/"), "it is the root directory");
  EXPECT_EQ(system_directory_reason("/var/lib/dpkg"), "it is in the system directory '/var/lib'");
  EXPECT_EQ(system_directory_reason("/var/lib/gpulaunch/k26/caches"),
            "it is in the system directory '/var/lib'");
  EXPECT_EQ(system_directory_reason("/usr"), "it is in the system directory '/usr'");
  EXPECT_EQ(system_directory_reason("/etc/ssh"), "it is in the system directory '/etc'");
  EXPECT_EQ(system_directory_reason("/var/log/journal"),
            "it is in the system directory '/var/log'");
  EXPECT_EQ(system_directory_reason("/var/cache"), "it is a system directory");
  EXPECT_EQ(system_directory_reason("/var/cache/gpulaunch"), "it is a system directory");
  EXPECT_EQ(system_directory_reason("/tmp"), "it is a system directory");
  EXPECT_EQ(system_directory_reason("/home/alice"), "it is a home directory");
  EXPECT_EQ(system_directory_reason("/run/user/1000"), "it is a home directory");
}

TEST(SystemDirectories, CacheDirectoriesOfTheirOwnAreFine) {
  for (const char* path : {"/var/cache/gpulaunch/k26", "/var/cache/gpulaunch/k26/flashinfer",
                           "/scratch/flashinfer", "/home/alice/.cache/flashinfer", "/tmp/cache",
                           "/usrlocal/cache", "/mnt/nvme/cache", "/var/library"})
    EXPECT_EQ(system_directory_reason(path), std::nullopt) << path;
}

}  // namespace
}  // namespace gl
