// SPDX-License-Identifier: Apache-2.0
#pragma once
// Real directories for the cache tests: a fresh mkdtemp tree per test, removed afterwards.

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "caches/cache_records.hpp"
#include "caches/prepare.hpp"
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

  // Root's records for the tree's caches, as state_paths::cache_stamp_directory would hold
  // them; root-owned, so only root runs the tests that use them.
  std::filesystem::path records() const { return base / "state/k26/caches"; }
  PrepareOptions options() const { return {records(), {::geteuid(), ::getegid()}}; }
  std::optional<Stamp> stamp() const {
    auto opened = CacheRecords::open(records());
    if (!opened) return std::nullopt;
    auto read = opened->stamp();
    return read ? *read : std::nullopt;
  }

  std::filesystem::path base;
};

// The fixture for tests that prepare or clear: root's records must be root's.
class RootTree : public TempTree {
 public:
  void SetUp() override {
    if (::geteuid() != 0)
      GTEST_SKIP() << "needs root: cache records live in root-owned directories";
    TempTree::SetUp();
  }
};

}  // namespace gl::test
