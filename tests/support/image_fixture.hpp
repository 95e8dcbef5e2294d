// SPDX-License-Identifier: Apache-2.0
#pragma once
// An engine image's root filesystem laid out as vLLM's cu130 image is (vllm-project/vllm
// docker/Dockerfile, vllm-base stage on nvidia/cuda:13.0.1-devel-ubuntu22.04; catalog/containers):
// /usr/local/cuda -> cuda-13.0 with compat/libcuda.so.<driver>, Python 3.12's dist-packages under
// /usr/local/lib with torch's version.py and the dist-info of torch, vllm and flashinfer-python;
// the JSON `podman image inspect` prints for it; and a fake podman that answers inspect, mount
// and unmount from them, logging each call.

#include <filesystem>
#include <optional>
#include <string>

namespace gl::test {

struct ImageSpec {
  std::string reference = "localhost/vllm-openai:v0.11.0-cu130";
  std::string podman_version = "4.3.1";  // Debian 12's
  std::string cuda_version = "13.0.1";
  std::string torch_version = "2.9.0+cu130";
  std::string torch_cuda = "13.0";
  std::string vllm_version = "0.11.0";
  std::string flashinfer_version = "0.4.1";
  std::optional<std::string> compat_driver = "580.82.07";  // nullopt: no cuda-compat package
};

// The inspect JSON for `spec` (podman 4.3's ImageData fields: Id, Digest, RepoTags, Config).
std::string image_inspect_json(const ImageSpec& spec);

// Lays out the image's root under `root`.
void write_image_root(const std::filesystem::path& root, const ImageSpec& spec);

// A podman script at `program` answering `image inspect|mount|unmount -- REF` for spec.reference
// from `inspect_file` and `root`; other references exit 125 as podman does; calls go to `log`.
void write_fake_podman(const std::filesystem::path& program, const ImageSpec& spec,
                       const std::filesystem::path& inspect_file, const std::filesystem::path& root,
                       const std::filesystem::path& log);

}  // namespace gl::test
