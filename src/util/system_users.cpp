// SPDX-License-Identifier: Apache-2.0
#include "util/system_users.hpp"

#include <grp.h>
#include <pwd.h>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "util/process.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

constexpr std::size_t kLookupBuffer = 16384;
constexpr std::string_view kSysusers = "/usr/bin/systemd-sysusers";
constexpr std::chrono::seconds kSysusersTimeout{30};

// sysusers.d(5) quotes a field with "" where it holds a space.
std::string field(std::string_view value) {
  if (value.find(' ') == std::string_view::npos) return std::string(value);
  return "\"" + std::string(value) + "\"";
}

class NodeSystemUsers final : public SystemUsers {
 public:
  Result<bool> user_exists(const std::string& name) const override {
    GL_TRY(auto account, lookup_user(name));
    return account.has_value();
  }
  Result<bool> group_exists(const std::string& name) const override {
    GL_TRY(auto group, lookup_group(name));
    return group.has_value();
  }
  Result<void> create(const SystemUserSpec& spec) override {
    std::vector<std::string> args{"--inline"};
    for (auto& line : sysusers_lines(spec)) args.push_back(std::move(line));
    GL_TRY(auto ran, run_process(std::string(kSysusers), args, kSysusersTimeout));
    if (ran.exit_code != 0)
      return failf("Failed to create system user '{}': {} exited with status {}", spec.name,
                   kSysusers, ran.exit_code);
    GL_TRY(auto made, user_exists(spec.name));
    if (!made)
      return failf("Failed to create system user '{}': {} did not create it", spec.name, kSysusers);
    return {};
  }
};

}  // namespace

Result<std::optional<Account>> lookup_user(const std::string& name) {
  struct passwd entry {};
  struct passwd* found = nullptr;
  std::vector<char> buffer(kLookupBuffer);
  int error = ::getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (error != 0) return failf("Failed to look up user '{}': {}", name, std::strerror(error));
  if (!found) return std::optional<Account>{};
  return std::optional<Account>(Account{entry.pw_uid, entry.pw_gid});
}

Result<std::optional<gid_t>> lookup_group(const std::string& name) {
  struct group entry {};
  struct group* found = nullptr;
  std::vector<char> buffer(kLookupBuffer);
  int error = ::getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (error != 0) return failf("Failed to look up group '{}': {}", name, std::strerror(error));
  if (!found) return std::optional<gid_t>{};
  return std::optional<gid_t>(entry.gr_gid);
}

std::vector<std::string> sysusers_lines(const SystemUserSpec& spec) {
  std::vector<std::string> lines{
      fmt::format("u {} - {} {}", spec.name, field(spec.description), field(spec.home))};
  for (const auto& group : spec.groups) lines.push_back(fmt::format("m {} {}", spec.name, group));
  return lines;
}

std::unique_ptr<SystemUsers> node_system_users() {
  return std::make_unique<NodeSystemUsers>();
}

Result<bool> ensure_system_user(SystemUsers& users, const std::string& name,
                                const std::string& description, const std::string& home) {
  GL_TRY(auto exists, users.user_exists(name));
  if (exists) return false;
  SystemUserSpec spec{name, description, home, {}};
  // An `m` line would create a missing group; only the ones udev made are joined.
  for (auto group : kGpuDeviceGroups) {
    GL_TRY(auto present, users.group_exists(std::string(group)));
    if (present) spec.groups.emplace_back(group);
  }
  GL_TRY_VOID(users.create(spec));
  return true;
}

}  // namespace gl
