// SPDX-License-Identifier: Apache-2.0
#include "support/image_fixture.hpp"

#include <fstream>

#include <fmt/core.h>

namespace gl::test {
namespace fs = std::filesystem;
namespace {

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string metadata(const std::string& name, const std::string& version) {
  return fmt::format("Metadata-Version: 2.1\nName: {}\nVersion: {}\n\nDescription.\n", name,
                     version);
}

}  // namespace

std::string image_inspect_json(const ImageSpec& spec) {
  const std::string major_minor = spec.cuda_version.substr(0, spec.cuda_version.rfind('.'));
  return fmt::format(
      R"([{{
  "Id": "4f1c2a9e0b7d",
  "Digest": "sha256:9b2d6c1e5f0a4b3c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
  "RepoTags": ["{0}"],
  "Config": {{
    "User": "",
    "Env": ["PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "NVARCH=x86_64",
            "NVIDIA_REQUIRE_CUDA=cuda>={1} brand=unknown,driver>=535,driver<536 brand=tesla,driver>=570,driver<571",
            "CUDA_VERSION={2}",
            "NVIDIA_VISIBLE_DEVICES=all",
            "NVIDIA_DRIVER_CAPABILITIES=compute,utility"],
    "Entrypoint": ["vllm", "serve"],
    "WorkingDir": "/vllm-workspace",
    "Labels": {{"maintainer": "NVIDIA CORPORATION <cudatools@nvidia.com>",
               "org.opencontainers.image.ref.name": "ubuntu"}}
  }}
}}]
)",
      spec.reference, major_minor, spec.cuda_version);
}

void write_image_root(const fs::path& root, const ImageSpec& spec) {
  const std::string major_minor = spec.cuda_version.substr(0, spec.cuda_version.rfind('.'));
  const fs::path cuda = root / ("usr/local/cuda-" + major_minor);
  fs::create_directories(cuda / "lib64");
  write_file(cuda / "lib64" / ("libcudart.so." + spec.cuda_version), "ELF");
  if (spec.compat_driver) {
    write_file(cuda / "compat" / ("libcuda.so." + *spec.compat_driver), "ELF");
    fs::create_symlink("libcuda.so." + *spec.compat_driver, cuda / "compat/libcuda.so.1");
  }
  fs::create_symlink("cuda-" + major_minor, root / "usr/local/cuda");
  write_file(root / "usr/bin/python3.12", "ELF");
  fs::create_symlink("python3.12", root / "usr/bin/python3");
  const fs::path site = root / "usr/local/lib/python3.12/dist-packages";
  write_file(site / "torch/version.py",
             fmt::format("from typing import Optional\n__version__ = '{}'\ndebug = False\n"
                         "cuda: Optional[str] = '{}'\nhip: Optional[str] = None\n",
                         spec.torch_version, spec.torch_cuda));
  write_file(site / ("torch-" + spec.torch_version + ".dist-info/METADATA"),
             metadata("torch", spec.torch_version));
  write_file(site / "vllm/__init__.py", "");
  write_file(site / ("vllm-" + spec.vllm_version + ".dist-info/METADATA"),
             metadata("vllm", spec.vllm_version));
  write_file(site / "flashinfer/__init__.py", "");
  write_file(site / ("flashinfer_python-" + spec.flashinfer_version + ".dist-info/METADATA"),
             metadata("flashinfer-python", spec.flashinfer_version));
}

void write_fake_podman(const fs::path& program, const ImageSpec& spec, const fs::path& inspect_file,
                       const fs::path& root, const fs::path& log) {
  write_file(program, fmt::format(R"(#!/bin/sh
echo "$*" >> '{3}'
[ "$1" = "--version" ] && {{ echo "podman version {4}"; exit 0; }}
[ "$3" = "--" ] && [ "$4" = '{0}' ] || {{ echo "Error: {0}: image not known" >&2; exit 125; }}
case "$1 $2" in
  "image inspect") cat '{1}' ;;
  "image mount") echo '{2}' ;;
  "image unmount") echo '{0}' ;;
  *) exit 125 ;;
esac
)",
                                  spec.reference, inspect_file.string(), root.string(),
                                  log.string(), spec.podman_version));
  fs::permissions(program, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
}

}  // namespace gl::test
