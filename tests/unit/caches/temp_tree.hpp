#pragma once
// Real directories for the cache tests: a fresh mkdtemp tree per test, removed afterwards.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "catalog/jit_caches.hpp"
#include "plan/launch_plan.hpp"

namespace gl::test {

class TempTree : public ::testing::Test {
 public:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "gl-caches-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    base = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::permissions(base, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ignored);
    std::filesystem::remove_all(base, ignored);  // removes symlinks, never follows them
  }

  static void write(const std::filesystem::path& path, const std::string& content = "x") {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << content;
  }

  static std::string read(const std::filesystem::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // A plan whose caches sit where make_launch_plan would put them under `root`.
  static LaunchPlan plan_under(const std::filesystem::path& root) {
    LaunchPlan plan;
    plan.cache_root = root.string();
    for (const auto& cache : jit_caches())
      plan.caches.push_back(
          {std::string(cache.name), (root / cache.directory).string(), cache.keys_itself});
    return plan;
  }

  std::filesystem::path base;
};

}  // namespace gl::test
