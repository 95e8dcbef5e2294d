// SPDX-License-Identifier: Apache-2.0
#pragma once
// Facts about engines' OCI images and the container stack that runs them, each with the upstream
// file and version it was read from.

#include <span>
#include <string_view>

namespace gl {

// Where NVIDIA's CUDA base images (nvidia/cuda; read in nvidia/container-images,
// dist/12.0.0/ubuntu2204/base/Dockerfile; later releases keep the same two variables) keep what
// `check` reads from an image:
//   ENV CUDA_VERSION 12.0.0
//   ENV NVIDIA_REQUIRE_CUDA "cuda>=12.0 brand=tesla,driver>=450,driver<451 ..."
// (space: OR, comma: AND, as nvidia-container-toolkit's requirements parser reads it), and
// cuda-compat-13-0 installs /usr/local/cuda-13.0/compat/libcuda.so.580.XX.YY (the driver the
// package was cut from; NVIDIA's "CUDA Compatibility" guide, Forward Compatibility, v580).
inline constexpr std::string_view kRequireCudaVariable = "NVIDIA_REQUIRE_CUDA";
inline constexpr std::string_view kCudaVersionVariable = "CUDA_VERSION";
inline constexpr std::string_view kCompatLibraryPrefix = "libcuda.so.";
// /usr/local/cuda/compat and each /usr/local/cuda-X.Y/compat.
inline constexpr std::string_view kCudaInstallParent = "/usr/local";

// `podman image inspect` answers a JSON array of containers/podman pkg/inspect/inspect.go's
// ImageData: "Id", "Digest", "RepoDigests", and "Config" (the OCI image-spec ImageConfig: "Env"
// as KEY=VALUE strings, "Labels"); podman-image-inspect(1) shows the same keys (podman v5 docs).
//
// vLLM's image (vllm-project/vllm docker/Dockerfile, vllm-base stage, read at commit 0000977e,
// whose default CUDA is 12.8.1): Python from
// deadsnakes at /usr/bin/python3, packages installed with `uv pip install --system` into
// /usr/local/lib/python3.12/dist-packages, and `ldconfig /usr/local/cuda-X.Y/compat/` so the
// compat libcuda is found first. SGLang's image (sgl-project/sglang docker/Dockerfile) installs
// into the same system Python. gpulaunch reads the image's Python under this prefix
// (facts/python_env looks in lib/ and local/lib/).
inline constexpr std::string_view kImagePythonPrefix = "/usr";
inline constexpr std::string_view kImagePythonInterpreter = "/usr/bin/python3";

// Forward compatibility runs only on NVIDIA data-center GPUs, select NGC-ready RTX SKUs and
// Jetson (NVIDIA "CUDA Compatibility", Forward Compatibility, v580): elsewhere the compat libcuda
// fails with CUDA error 804 (cudaErrorCompatNotSupportedOnDevice); without one, a runtime newer
// than the driver fails with 803 (cudaErrorSystemDriverMismatch) or 35 (insufficient driver).

// CDI (cncf-tags/container-device-interface SPEC.md v0.8; NVIDIA Container Toolkit
// "Support for Container Device Interface", v1.18): specs in /etc/cdi and /var/run/cdi (the
// latter cleared at boot; nvidia-cdi-refresh.service regenerates it from 1.18), devices named
// KIND=NAME: nvidia.com/gpu=0 (index), =GPU-<uuid>, =all. podman takes them as
// `podman run --device nvidia.com/gpu=0` (podman-run(1) --device, podman 4.1+).
std::span<const std::string_view> cdi_spec_directories();
inline constexpr std::string_view kCdiGpuKind = "nvidia.com/gpu";
// `nvidia-ctk cdi generate` (NVIDIA Container Toolkit v1.18) mounts the driver's libraries by
// their full versioned names, e.g. hostPath /usr/lib/x86_64-linux-gnu/libcuda.so.580.82.07: a
// spec names the driver it was generated for, and goes stale when the driver is upgraded (the
// toolkit's nvidia-cdi-refresh.service exists for that).
inline constexpr std::string_view kCdiDriverLibrary = "libcuda.so.";

// The newest CDI spec version a podman release reads: its CDI library refuses any other version
// ("invalid version") and, parsing strictly, any field it does not know. Only releases whose
// library was read are listed; another podman is not judged.
//   podman 4.3 (Debian 12's 4.3.1+ds1): the library Debian ships with it,
//     golang-github-container-orchestrated-devices-container-device-interface-dev 0.5.2,
//     pkg/cdi/spec.go validSpecVersions 0.1.0-0.5.0 and ParseSpec's yaml.UnmarshalStrict.
// NVIDIA Container Toolkit 1.19 writes specs that need CDI 0.7.0 (additionalGids), which
// podman 4.9 already cannot read (NVIDIA/nvidia-container-toolkit #1860, #1940).
struct PodmanCdiSupport {
  std::string_view podman;  // major.minor
  std::string_view newest_spec;
};
inline constexpr PodmanCdiSupport kPodmanCdiSupport[] = {{"4.3", "0.5.0"}};

// How the unit starts an engine image (plan/container_command): rootful podman in the
// foreground under `run`, Debian 12's podman 4.3 (podman-run(1), v4.3.1):
//   --cgroups=split    the container and conmon in sub-cgroups of the unit's own (the unit
//                      has Delegate=yes), so MemoryMax=, the OOM count and the stop reach them
//   --sdnotify=ignore  podman sends nothing to NOTIFY_SOCKET (libpod/define/sdnotify.go's
//                      "ignore"; "container", the default, would send MAINPID=conmon, which
//                      NotifyAccess=main refuses): `run` alone says READY=1
//   --replace          a container of the same name left by a killed start is removed first
//   --pull=never       the image is the one `check` read and `lock` pinned; no registry
// Without a value, --env=NAME takes NAME's value from podman's own environment (the unit's).
inline constexpr std::string_view kPodmanProgram = "/usr/bin/podman";
// The host's IPC namespace and network, as SGLang's own compose file runs its image
// (sgl-project/sglang docker/compose.yaml: `ipc: host`, `network_mode: host`): NCCL and the
// engines' shared-memory queues outgrow podman's 64m /dev/shm, and `run` probes the port the
// engine binds on the host.
inline constexpr std::string_view kContainerIpc = "host";
inline constexpr std::string_view kContainerNetwork = "host";
// HOME of the unit's own processes (root's podman) where the engine's HOME is its own directory.
inline constexpr std::string_view kContainerHostHome = "/root";
// The unit's own processes (`run`, then root's podman, conmon and the OCI runtime) get gpulaunch's
// own variables alone: root's PATH (podman finds conmon and the OCI runtime on it) and HOME
// (podman reads its configuration under $HOME and the XDG base directories, containers/common
// pkg/config, v0.50), CUDA_VISIBLE_DEVICES (`run` reads the engine's GPUs from it) and the
// [secrets] entries' credential paths. Everything else, the profile's [env] included, reaches
// the container by value in podman's command (plan/container_command): nothing a profile sets
// (LD_PRELOAD, CONTAINERS_CONF, TMPDIR, ...) reaches a process of root's.
inline constexpr std::string_view kContainerUnitVariables[] = {"PATH", "HOME",
                                                               "CUDA_VISIBLE_DEVICES"};
// The container's name: gpulaunch-PROFILE, the unit's name without ".service".
inline constexpr std::string_view kContainerNamePrefix = "gpulaunch-";

}  // namespace gl
