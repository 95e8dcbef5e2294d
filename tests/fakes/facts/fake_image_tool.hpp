// SPDX-License-Identifier: Apache-2.0
#pragma once
// An image store in memory: inspect answers a JSON text, mount a directory (an image root laid
// out by tests/support/image_fixture), each or both failing on demand; every call is recorded.

#include <optional>
#include <string>
#include <vector>

#include "facts/image_tool.hpp"

namespace gl::test {

class FakeImageTool : public ImageTool {
 public:
  std::optional<std::string> inspect_json;  // nullopt: the image is not in the store
  std::optional<std::string> root;          // nullopt: mounting fails
  std::vector<std::string> calls;           // "inspect REF", "mount REF", "unmount REF"

  Result<std::string> inspect(const std::string& reference) override {
    calls.push_back("inspect " + reference);
    if (!inspect_json)
      return failf("Failed to inspect image '{}': podman exited with status 125", reference);
    return *inspect_json;
  }
  Result<std::string> mount(const std::string& reference) override {
    calls.push_back("mount " + reference);
    if (!root) return failf("Failed to mount image '{}': podman exited with status 125", reference);
    return *root;
  }
  Result<void> unmount(const std::string& reference) override {
    calls.push_back("unmount " + reference);
    return {};
  }
  std::string podman_version = "4.3.1";
  Result<std::string> version() override { return podman_version; }
};

}  // namespace gl::test
