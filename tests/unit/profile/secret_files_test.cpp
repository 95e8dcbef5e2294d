// SPDX-License-Identifier: Apache-2.0
// [secrets]: a name and a root-only file. The unit, the snapshot and a lock carry the name and
// the path, never the value; `up` and `check` refuse a file another user could read or replace.

#include "profile/secret_files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "profile/memory_source.hpp"
#include "profile/validate.hpp"
#include "unit/render.hpp"
#include "unit/temp_dir.hpp"

namespace gl {
namespace {

using gl::testing::TempDir;

constexpr const char* kSecretValue = "hf_NotARealTokenButSecretAllTheSame";

Profile with_secret(const std::string& file) {
  Profile profile;
  profile.name = "k";
  profile.secrets["HF_TOKEN"] = file;
  return profile;
}

std::string secret_file(const TempDir& dir, mode_t mode) {
  auto file = dir.write("secrets/hf_token", kSecretValue);
  ::chmod(file.c_str(), mode);
  return file.string();
}

TEST(SecretFiles, RootOwned0600Or0400IsAccepted) {
  TempDir dir;
  const std::string file = secret_file(dir, 0600);
  EXPECT_TRUE(check_secret_files(with_secret(file), 0));
  ::chmod(file.c_str(), 0400);
  EXPECT_TRUE(check_secret_files(with_secret(file), 0));
}

TEST(SecretFiles, ReadableByOthersIsRefused) {
  TempDir dir;
  const std::string file = secret_file(dir, 0644);
  auto checked = check_secret_files(with_secret(file), 0);
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().message,
            "Refusing secret 'HF_TOKEN' file '" + file +
                "': it is owned by uid 0 with mode 0644; it must be owned by root with mode 0600 "
                "or 0400");
}

TEST(SecretFiles, OwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  TempDir dir;
  const std::string file = secret_file(dir, 0600);
  ASSERT_EQ(::chown(file.c_str(), 1000, 1000), 0);
  auto checked = check_secret_files(with_secret(file), 0);
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().message,
            "Refusing secret 'HF_TOKEN' file '" + file +
                "': it is owned by uid 1000 with mode 0600; it must be owned by root with mode "
                "0600 or 0400");
}

TEST(SecretFiles, InADirectoryAUserCanWriteIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  TempDir dir;
  const std::string file = secret_file(dir, 0600);
  ASSERT_EQ(::chown((dir.path() / "secrets").c_str(), 1000, 1000), 0);
  auto checked = check_secret_files(with_secret(file), 0);
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().message, "Refusing secret 'HF_TOKEN' file '" + file + "': '" +
                                         (dir.path() / "secrets").string() +
                                         "' is owned by uid 1000 (mode 0755)");
}

TEST(SecretFiles, MissingOrNotAFileIsRefused) {
  TempDir dir;
  auto missing = check_secret_files(with_secret(dir.str() + "/none"), 0);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "Failed to check secret 'HF_TOKEN' file '" + dir.str() +
                                         "/none': No such file or directory");
  auto directory = check_secret_files(with_secret(dir.str()), 0);
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().message,
            "Refusing secret 'HF_TOKEN' file '" + dir.str() + "': it is not a regular file");
}

// The unit names the credential and its file; the engine finds the value through
// $CREDENTIALS_DIRECTORY (HF_TOKEN_PATH for huggingface_hub), never in the unit.
TEST(SecretFiles, RenderAsACredentialWithoutTheValue) {
  TempDir dir;
  const std::string file = secret_file(dir, 0600);
  MemorySource source({{"/p/k.toml",
                        "[engine]\nkind = \"sglang\"\nvenv = \"/opt/venv\"\n[model]\n"
                        "path = \"org/model\"\n[secrets]\nHF_TOKEN = \"" +
                            file + "\"\n"}});
  auto merged = load_merged(source, "/p/k.toml");
  ASSERT_TRUE(merged) << merged.error().message;
  auto profile = validate_profile(*merged);
  ASSERT_TRUE(profile) << profile.error().message;
  const UnitFile unit = render_unit(*profile, make_launch_plan(*profile), RenderOptions{});
  EXPECT_EQ(unit.values("Service", "LoadCredential"), std::vector<std::string>{"HF_TOKEN:" + file});
  const auto environment = unit.values("Service", "Environment");
  EXPECT_NE(std::find(environment.begin(), environment.end(), "\"HF_TOKEN_PATH=%d/HF_TOKEN\""),
            environment.end());
  EXPECT_EQ(unit.to_text().find(kSecretValue), std::string::npos);
  EXPECT_EQ(snapshot_text(*merged).find(kSecretValue), std::string::npos);
}

TEST(SecretFiles, EnvMayNotSetTheSecretOrItsPath) {
  for (const char* name : {"HF_TOKEN", "HF_TOKEN_PATH"}) {
    MemorySource source(
        {{"/p/k.toml", std::string("[engine]\nkind = \"sglang\"\nvenv = \"/opt/venv\"\n[model]\n"
                                   "path = \"/m\"\n[secrets]\nHF_TOKEN = \"/etc/t\"\n[env]\n") +
                           name + " = \"x\"\n"}});
    auto profile = load_profile(source, "/p/k.toml");
    ASSERT_FALSE(profile);
    EXPECT_EQ(profile.error().message,
              std::string("/p/k.toml:9:1: 'env.") + name +
                  "' is set by 'secrets.HF_TOKEN' (its value stays out of the unit)");
  }
}

}  // namespace
}  // namespace gl
