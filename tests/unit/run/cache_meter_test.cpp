// SPDX-License-Identifier: Apache-2.0
#include "run/cache_meter.hpp"

#include <unistd.h>
#include <filesystem>
#include <map>

#include <gtest/gtest.h>

#include "../temp_dir.hpp"

namespace gl {
namespace {

using testing::TempDir;

TEST(CacheMeter, WatchesTheCompilingCachesWhereTheEnvironmentPinsThem) {
  const std::map<std::string, std::string> environment{
      {"FLASHINFER_WORKSPACE_BASE", "/var/cache/gpulaunch/p/flashinfer"},
      {"TRITON_CACHE_DIR", "/var/cache/gpulaunch/p/triton"},
      {"TRITON_HOME", "/var/cache/gpulaunch/p/triton_home"},  // dumps only: not watched
      {"TORCHINDUCTOR_CACHE_DIR", "relative/inductor"},       // not absolute: not watched
      {"DG_JIT_CACHE_DIR", "/var/cache/gpulaunch/p/deep_gemm"},
      {"SGLANG_DG_CACHE_DIR", "/var/cache/gpulaunch/p/deep_gemm"},  // the same directory, once
      {"SGLANG_CACHE_DIR", "/var/cache/gpulaunch/p/sglang"},
      {"SGLANG_JIT_CACHE_DIR", "/var/cache/gpulaunch/p/sglang/jit"},  // below SGLANG_CACHE_DIR
  };
  auto directories = compiling_cache_directories([&](const char* name) -> const char* {
    auto it = environment.find(name);
    return it == environment.end() ? nullptr : it->second.c_str();
  });
  std::map<std::string, std::string> found;
  for (const auto& directory : directories) found[directory.directory] = directory.name;
  EXPECT_EQ(found, (std::map<std::string, std::string>{
                       {"/var/cache/gpulaunch/p/flashinfer", "flashinfer"},
                       {"/var/cache/gpulaunch/p/triton", "triton"},
                       {"/var/cache/gpulaunch/p/deep_gemm", "deep-gemm"},
                       {"/var/cache/gpulaunch/p/sglang", "sglang"},
                   }));
}

TEST(CacheMeter, MeasuresWithoutFollowingLinksAndWithinItsBound) {
  TempDir dir;
  dir.write("cache/flashinfer/a.o", std::string(1000, 'x'));
  dir.write("cache/flashinfer/sub/b.o", std::string(500, 'x'));
  dir.write("elsewhere/huge", std::string(100000, 'x'));
  namespace fs = std::filesystem;
  fs::create_directory_symlink(dir.path() / "elsewhere", dir.path() / "cache/flashinfer/link");
  auto meter = directory_cache_meter({{"flashinfer", (dir.path() / "cache/flashinfer").string()},
                                      {"triton", (dir.path() / "cache/missing").string()}});
  auto sizes = meter->measure();
  ASSERT_EQ(sizes.size(), 2u);
  EXPECT_EQ(sizes[0].name, "flashinfer");
  EXPECT_EQ(sizes[0].bytes, 1500u + fs::read_symlink(dir.path() / "cache/flashinfer/link")
                                        .string()
                                        .size());  // the link itself, not what it names
  EXPECT_EQ(sizes[1].bytes, 0u);                   // not there yet: nothing grew
  dir.write("cache/flashinfer/c.o", std::string(2000, 'x'));
  EXPECT_EQ(meter->measure()[0].bytes, sizes[0].bytes + 2000);
  // A bounded walk: at most that many entries looked at.
  auto bounded =
      directory_cache_meter({{"flashinfer", (dir.path() / "cache/flashinfer").string()}}, 1);
  EXPECT_LT(bounded->measure()[0].bytes, sizes[0].bytes + 2000);
}

}  // namespace
}  // namespace gl
