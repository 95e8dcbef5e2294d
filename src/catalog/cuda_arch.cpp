// SPDX-License-Identifier: Apache-2.0
#include "catalog/cuda_arch.hpp"

#include <array>

namespace gl {
namespace {

constexpr Version kCuda12{12, 0, 0};
constexpr Version kCuda13{13, 0, 0};

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

constexpr std::array kDriverRequirements{
    DriverRequirement{13, 580},
    DriverRequirement{12, 525},
};

constexpr std::array kJitGates{
    JitGate{"flashinfer",
            {0, 6, 7},
            12,
            {12, 9, 0},
            "FlashInfer JIT architecture check (flashinfer/jit/cpp_ext.py, FlashInfer #3674)"},
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
