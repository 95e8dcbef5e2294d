// SPDX-License-Identifier: Apache-2.0
#include "catalog/cuda_arch.hpp"

#include <array>
#include <string>

namespace gl {
namespace {

constexpr Version kCuda12{12, 0, 0};
constexpr Version kCuda13{13, 0, 0};

// Where each row was read (a reviewer diffs these against newer copies):
// - First nvcc per sm: clang/lib/Basic/Cuda.cpp, MinVersionForOffloadArch (llvm/llvm-project
//   adf82cf) gives sm_60-62 8.0, sm_70 9.0, sm_72 9.1 (the row's 9.0 follows CMake below),
//   sm_75 10.0, sm_80 11.0, sm_86 11.1, sm_87 11.4, sm_89/sm_90 11.8, sm_100 12.8; its newer form
//   (read in an annotated copy of the same file, commit not recorded) adds sm_103/sm_121 at 12.9,
//   sm_88/sm_110 at 13.0, and ends sm_101 at 12.9. CMake
//   Modules/Internal/CMakeCUDAArchitecturesAll.cmake (Kitware/CMake 2dac61c) agrees from 8.0
//   to 12.8 (sm_101 and sm_120 at 12.8) but adds sm_70 and sm_72 together at 9.0. The Kepler and
//   Maxwell first versions (5.0 to 7.0) predate both files' floor of CUDA 7.0 and were not re-read.
// - Kepler's end: the same clang file caps sm_35/sm_37 at 11.8, and the CMake file drops them
//   from 12.0 on.
// - CUDA 13.0's drop of sm_50 to sm_72: CUDA 12.9 Toolkit release notes (Maxwell, Pascal and Volta
//   lose offline compilation in the next major) and NVIDIA's technical blog of August 2025 (CUDA
//   13.0 compiles only for compute capability 7.5 and up), both read as quoted by news copies.
constexpr std::array kArchRequirements{
    ArchRequirement{35, {5, 0, 0}, kCuda12, "Kepler GK110; dropped by CUDA 12.0"},
    ArchRequirement{37, {6, 5, 0}, kCuda12, "Kepler K80; dropped by CUDA 12.0"},
    ArchRequirement{50, {6, 0, 0}, kCuda13, "Maxwell; dropped by CUDA 13.0"},
    ArchRequirement{52, {6, 5, 0}, kCuda13, "Maxwell; dropped by CUDA 13.0"},
    ArchRequirement{53, {7, 0, 0}, kCuda13, "Jetson TX1; dropped by CUDA 13.0"},
    ArchRequirement{60, {8, 0, 0}, kCuda13, "Pascal P100; dropped by CUDA 13.0"},
    ArchRequirement{61, {8, 0, 0}, kCuda13, "Pascal; dropped by CUDA 13.0"},
    ArchRequirement{62, {8, 0, 0}, kCuda13, "Jetson TX2; dropped by CUDA 13.0"},
    ArchRequirement{70, {9, 0, 0}, kCuda13, "Volta; dropped by CUDA 13.0"},
    ArchRequirement{72, {9, 0, 0}, kCuda13, "Xavier; dropped by CUDA 13.0"},
    ArchRequirement{75, {10, 0, 0}, std::nullopt, "Turing; lowest CUDA 13 supports"},
    ArchRequirement{80, {11, 0, 0}, std::nullopt, "A100"},
    ArchRequirement{86, {11, 1, 0}, std::nullopt, "Ampere consumer"},
    ArchRequirement{87, {11, 4, 0}, std::nullopt, "Orin"},
    ArchRequirement{88, {13, 0, 0}, std::nullopt, "listed from CUDA 13.0"},
    ArchRequirement{89, {11, 8, 0}, std::nullopt, "Ada"},
    ArchRequirement{90, {11, 8, 0}, std::nullopt, "Hopper"},
    ArchRequirement{100, {12, 8, 0}, std::nullopt, "B200"},
    ArchRequirement{101, {12, 8, 0}, kCuda13, "Thor; renumbered sm_110 by CUDA 13.0"},
    ArchRequirement{103, {12, 9, 0}, std::nullopt, "B300"},
    ArchRequirement{110, {13, 0, 0}, std::nullopt, "Thor"},
    ArchRequirement{120, {12, 8, 0}, std::nullopt, "RTX PRO 6000 / RTX 50"},
    ArchRequirement{121, {12, 9, 0}, std::nullopt, "DGX Spark"},
};

// NVIDIA CUDA Compatibility guide, "Minor Version Compatibility", Table 1 (docs.nvidia.com/deploy/
// cuda-compatibility/minor-version-compatibility.html, the copy that lists CUDA 13.x): a CUDA 13.x
// toolkit needs driver branch 580 or newer; 12.x needs 525 or newer (the table caps 12.x below
// 580).
constexpr std::array kDriverRequirements{
    DriverRequirement{13, 580},
    DriverRequirement{12, 525},
};

// flashinfer/compilation_context.py, CompilationContext._normalize_cuda_arch: a 12.x GPU needs
// nvcc 12.9 or newer (120 gets the 12.0f family target, 121 its own 12.1a), else it raises "SM
// 12.x requires CUDA >= 12.9", which the JIT swallows. Introduced by e2f821b8c (#2839); read in
// the flashinfer-ai/flashinfer tags v0.6.7 (the first release with it), v0.6.17 and v0.6.18rc7
// and on main at fb28d72 (version.txt 0.6.18, 2026-08-22); v0.6.6 has no such check.
// flashinfer-ai/flashinfer PR #3633 ("fix(jit): refresh stale arch detection and allow SM120 on
// CUDA 12.8"), merged after 2026-09-07 and so after 0.6.18, relaxes it for SM120: a later
// release is judged by a warning, not refused.
constexpr std::array kJitGates{
    JitGate{"flashinfer",
            {0, 6, 7},
            {0, 6, 18},
            12,
            {12, 9, 0},
            "flashinfer/compilation_context.py _normalize_cuda_arch, read in v0.6.7 to 0.6.18 "
            "(fb28d72), FlashInfer #2839",
            "FlashInfer PR #3633 (merged after 0.6.18) allows SM120 on CUDA 12.8"},
};

// CUDA releases NVIDIA's apt repositories ship as cuda-nvcc-X-Y (developer.download.nvidia.com/
// compute/cuda/repos/<distro>/x86_64, installed at /usr/local/cuda-X.Y): those the arch rows
// above were read for, 11.0 up to 13.0. A release is listed only where the arch table knows what
// it compiles for.
constexpr std::array kToolkitReleases{
    ToolkitRelease{{11, 0, 0}}, ToolkitRelease{{11, 1, 0}}, ToolkitRelease{{11, 2, 0}},
    ToolkitRelease{{11, 3, 0}}, ToolkitRelease{{11, 4, 0}}, ToolkitRelease{{11, 5, 0}},
    ToolkitRelease{{11, 6, 0}}, ToolkitRelease{{11, 7, 0}}, ToolkitRelease{{11, 8, 0}},
    ToolkitRelease{{12, 0, 0}}, ToolkitRelease{{12, 1, 0}}, ToolkitRelease{{12, 2, 0}},
    ToolkitRelease{{12, 3, 0}}, ToolkitRelease{{12, 4, 0}}, ToolkitRelease{{12, 5, 0}},
    ToolkitRelease{{12, 6, 0}}, ToolkitRelease{{12, 8, 0}}, ToolkitRelease{{12, 9, 0}},
    ToolkitRelease{{13, 0, 0}},
};

}  // namespace

std::span<const ArchRequirement> arch_requirements() {
  return kArchRequirements;
}
std::span<const DriverRequirement> driver_requirements() {
  return kDriverRequirements;
}
std::span<const JitGate> jit_gates() {
  return kJitGates;
}
std::span<const ToolkitRelease> toolkit_releases() {
  return kToolkitReleases;
}

std::string ToolkitRelease::package() const {
  return "cuda-nvcc-" + std::to_string(version.major) + "-" + std::to_string(version.minor);
}
std::string ToolkitRelease::root() const {
  return "/usr/local/cuda-" + version.major_minor();
}

std::optional<Version> min_nvcc_for(ComputeCapability capability) {
  for (const auto& row : kArchRequirements)
    if (row.sm == capability.sm()) return row.min_nvcc;
  return std::nullopt;
}

std::vector<int> archs_for_nvcc(const Version& version) {
  std::vector<int> archs;
  for (const auto& row : kArchRequirements)
    if (row.min_nvcc <= version && !(row.dropped && *row.dropped <= version))
      archs.push_back(row.sm);
  return archs;  // the table is in sm order
}

std::optional<int> lowest_sm_for(int toolkit_major) {
  // Drops happen at a major's .0, so the .0 release's list starts where the whole major does.
  auto archs = archs_for_nvcc(Version{toolkit_major, 0, 0});
  return archs.empty() ? std::nullopt : std::optional(archs.front());
}

std::optional<int> min_driver_for(int cuda_major) {
  for (const auto& row : kDriverRequirements)
    if (row.cuda_major == cuda_major) return row.min_driver_major;
  return std::nullopt;
}

}  // namespace gl
