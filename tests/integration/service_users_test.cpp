// SPDX-License-Identifier: Apache-2.0
// One uid per profile, on a real systemd 252 booted privately: two profiles without service.user
// run as their own gpulaunch-NAME users, which `up` creates; a profile that ran as a shared user
// and drops service.user keeps its compiled kernels, now owned by its own user, and says so once.

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "harness/mock_engine_suite.hpp"
#include "profile/service_user.hpp"
#include "util/state_paths.hpp"

namespace {

namespace fs = std::filesystem;
namespace state_paths = gl::state_paths;
using gpulaunch::testing::ExecResult;
using gpulaunch::testing::MockEngineHost;
using gpulaunch::testing::MockEngineSuite;
using namespace std::chrono_literals;

const std::string kGpulaunch = GL_GPULAUNCH_BINARY;
const std::string kSharedUser = "glshared";
constexpr std::string_view kMovedLine = "caches moved to the service user ";

class ServiceUsers : public MockEngineSuite<ServiceUsers> {
 public:
  static MockEngineHost* new_host() {
    return new MockEngineHost(fs::path(GL_BINARY_DIR) / "service-users-work", kGpulaunch,
                              GL_SOURCE_DIR);
  }

 protected:
  static ExecResult sh(const std::string& script) {
    return host().systemd().exec({"sh", "-c", script});
  }
  static std::string trimmed(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
  }
  static std::string owner_of(const fs::path& path) {
    return trimmed(sh("stat -c %U '" + path.string() + "'").out);
  }
  static size_t count(const std::string& text, std::string_view needle) {
    size_t found = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
      ++found;
    return found;
  }
};

TEST_F(ServiceUsers, TwoProfilesRunAsTwoUidsThatUpCreated) {
  for (const auto& [name, port] : {std::pair{"users-a", 31331}, std::pair{"users-b", 31332}}) {
    host().write_profile(name, port, "");
    auto up = gpulaunch(std::string("up ") + name + " --runtime --force");
    ASSERT_EQ(up.exit_code, 0) << up.out;
    EXPECT_NE(up.out.find("created system user gpulaunch-" + std::string(name)), std::string::npos)
        << up.out;
  }
  const std::string a = trimmed(sh("id -u gpulaunch-users-a").out);
  const std::string b = trimmed(sh("id -u gpulaunch-users-b").out);
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  EXPECT_NE(a, b);
  EXPECT_NE(a, "0");
  // Each engine process runs as its own user, and its caches are that user's.
  EXPECT_EQ(sh("pgrep -u gpulaunch-users-a >/dev/null").exit_code, 0);
  EXPECT_EQ(sh("pgrep -u gpulaunch-users-b >/dev/null").exit_code, 0);
  EXPECT_EQ(owner_of(state_paths::default_cache_root("users-a")), "gpulaunch-users-a");
  EXPECT_EQ(owner_of(state_paths::default_cache_root("users-b")), "gpulaunch-users-b");
  EXPECT_EQ(gpulaunch("down users-a").exit_code, 0);
  EXPECT_EQ(gpulaunch("down users-b").exit_code, 0);
}

TEST_F(ServiceUsers, AnUpgradedProfilesCachesChangeOwnerAndStayCurrent) {
  const std::string name = "users-up";
  const fs::path cache = state_paths::default_cache_root(name);
  ASSERT_EQ(sh("id -u " + kSharedUser +
               " >/dev/null 2>&1 || useradd --system --no-create-home "
               "--shell /usr/sbin/nologin " +
               kSharedUser)
                .exit_code,
            0);
  host().write_profile(name, 31333, "[service]\nuser = \"" + kSharedUser + "\"\n");
  auto up = gpulaunch("up " + name + " --runtime --force");
  ASSERT_EQ(up.exit_code, 0) << up.out;
  ASSERT_EQ(owner_of(cache), kSharedUser);
  // A compiled kernel the engine left as the shared user.
  ASSERT_EQ(sh("runuser -u " + kSharedUser + " -- sh -c 'mkdir -p " + cache.string() +
               "/triton/k && printf kernel >" + cache.string() + "/triton/k/kernel.cubin'")
                .exit_code,
            0);
  const auto stale_before =
      count(gpulaunch("logs " + name + " -n 400").out, "JIT caches were stale");
  ASSERT_EQ(gpulaunch("down " + name).exit_code, 0);

  // The upgrade: no service.user, so the profile's own user.
  host().write_profile(name, 31333, "");
  up = gpulaunch("up " + name + " --runtime --force");
  ASSERT_EQ(up.exit_code, 0) << up.out;
  const std::string own = gl::default_service_user(name);
  EXPECT_EQ(owner_of(cache), own);
  EXPECT_EQ(owner_of(cache / "triton/k"), own);
  EXPECT_EQ(owner_of(cache / "triton/k/kernel.cubin"), own);
  EXPECT_EQ(sh("cat " + cache.string() + "/triton/k/kernel.cubin").out, "kernel");
  auto logs = gpulaunch("logs " + name + " -n 400").out;
  EXPECT_EQ(count(logs, kMovedLine), 1u) << logs;
  EXPECT_EQ(count(logs, "JIT caches were stale"), stale_before) << logs;  // no recompile

  // Said once: the next start finds the caches the new user's already.
  ASSERT_EQ(gpulaunch("restart " + name).exit_code, 0);
  logs = gpulaunch("logs " + name + " -n 400").out;
  EXPECT_EQ(count(logs, kMovedLine), 1u) << logs;
  EXPECT_EQ(sh("cat " + cache.string() + "/triton/k/kernel.cubin").out, "kernel");
  EXPECT_EQ(gpulaunch("down " + name).exit_code, 0);
}

}  // namespace
