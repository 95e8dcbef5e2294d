// SPDX-License-Identifier: Apache-2.0
#pragma once
// SystemUsers over an in-memory set of accounts: what `up` would create, without /etc.

#include <set>
#include <string>
#include <vector>

#include "util/system_users.hpp"

namespace gl {

class FakeSystemUsers final : public SystemUsers {
 public:
  std::set<std::string> users;
  std::set<std::string> groups{"video"};
  std::vector<SystemUserSpec> created;
  bool fail_create = false;

  Result<bool> user_exists(const std::string& name) const override { return users.contains(name); }
  Result<bool> group_exists(const std::string& name) const override {
    return groups.contains(name);
  }
  Result<void> create(const SystemUserSpec& spec) override {
    if (fail_create) return failf("Failed to create system user '{}': refused", spec.name);
    created.push_back(spec);
    users.insert(spec.name);
    return {};
  }
};

}  // namespace gl
