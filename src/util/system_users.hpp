// SPDX-License-Identifier: Apache-2.0
#pragma once
// The node's accounts: looking users and groups up (the system's databases, NSS included), and
// creating the system user a profile's engine runs as, the way sysusers.d(5) does, behind an
// interface so the decisions are tested without touching /etc.

#include <sys/types.h>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace gl {

struct Account {
  uid_t uid = 0;
  gid_t gid = 0;  // primary group
};

// nullopt when there is no such user (group); an error only when the lookup itself fails.
Result<std::optional<Account>> lookup_user(const std::string& name);
Result<std::optional<gid_t>> lookup_group(const std::string& name);

// The groups that own the GPU device nodes an engine may open: /dev/dri/card* (video) and
// /dev/dri/renderD* (render), as packaging/sysusers.d/gpulaunch.conf gives its user.
inline constexpr std::string_view kGpuDeviceGroups[] = {"video", "render"};

// A system user as sysusers.d(5) describes one: no login shell, its own primary group.
struct SystemUserSpec {
  std::string name;
  std::string description;
  std::string home;
  std::vector<std::string> groups;  // supplementary, each already existing
};

// The sysusers.d(5) lines for `spec`: a `u` line, then one `m` line per group.
std::vector<std::string> sysusers_lines(const SystemUserSpec& spec);

class SystemUsers {
 public:
  virtual ~SystemUsers() = default;
  virtual Result<bool> user_exists(const std::string& name) const = 0;
  virtual Result<bool> group_exists(const std::string& name) const = 0;
  virtual Result<void> create(const SystemUserSpec& spec) = 0;
};

// The node's own: the lookups above, and systemd-sysusers --inline with sysusers_lines (its
// exit status says whether it worked; nothing it prints is read).
std::unique_ptr<SystemUsers> node_system_users();

// Makes `name` exist, created as a system user in the GPU device groups the node has, with
// `home` (which it does not create) and `description`. Returns whether it was created now; an
// existing account is left as its administrator made it.
Result<bool> ensure_system_user(SystemUsers& users, const std::string& name,
                                const std::string& description, const std::string& home);

}  // namespace gl
