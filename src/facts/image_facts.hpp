// SPDX-License-Identifier: Apache-2.0
#pragma once
// An engine's OCI image read without running it: its config (podman image inspect's JSON) and
// its root filesystem (podman image mount), read like a node under --root: links resolved inside
// the image, regular files only (facts/node_fs). The host's CDI specs for its GPUs beside it.

#include <optional>
#include <string>
#include <string_view>

#include "facts/facts.hpp"
#include "facts/image_tool.hpp"
#include "facts/node_fs.hpp"

namespace gl {

// `podman image inspect`'s JSON into `image` (id, digest, env, labels, NVIDIA_REQUIRE_CUDA,
// CUDA_VERSION); an error when it is not an array holding one image object.
Result<void> parse_image_inspect(std::string_view json, ImageFact& image);

// The image's files: its compat libcuda (catalog/containers) into `image`, its Python returned.
PythonEnvFact read_image_root(const NodeFs& image_root, ImageFact& image);

struct ImageProbe {
  ImageFact image;
  std::optional<PythonEnvFact> python;  // nullopt when the image could not be mounted
};

// Inspects, mounts, reads and unmounts `reference`; failures are kept in image.problems.
ImageProbe probe_image(ImageTool& tool, const std::string& reference);

// The CDI specs under `node`'s spec directories that offer nvidia.com/gpu devices.
CdiFact probe_cdi(const NodeFs& node);

}  // namespace gl
