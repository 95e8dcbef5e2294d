// SPDX-License-Identifier: Apache-2.0
#pragma once
// The container engine's image store, reached through its command line: the image's config as
// `podman image inspect` prints it, and its root filesystem as `podman image mount` exposes it
// (read without running anything from it). The one place that runs podman; tests use a fake.

#include <memory>
#include <string>

#include "util/error.hpp"

namespace gl {

class ImageTool {
 public:
  virtual ~ImageTool() = default;
  // The JSON `podman image inspect REFERENCE` prints (an array of one object).
  virtual Result<std::string> inspect(const std::string& reference) = 0;
  // Mounts the image's root filesystem read-only and returns its directory on this host.
  virtual Result<std::string> mount(const std::string& reference) = 0;
  virtual Result<void> unmount(const std::string& reference) = 0;
  // Its release, "4.3.1" (`podman --version`): which CDI spec versions it reads.
  virtual Result<std::string> version() = 0;
};

// Rootful podman at `program` (an absolute path).
std::unique_ptr<ImageTool> podman_image_tool(const std::string& program);

}  // namespace gl
