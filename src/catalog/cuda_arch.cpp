#include "catalog/cuda_arch.hpp"

#include <array>

namespace gl {
namespace {

constexpr std::array kArchRequirements{
    ArchRequirement{70, {9, 0, 0}, "Volta; dropped by CUDA 13.0"},
    ArchRequirement{72, {9, 0, 0}, "Xavier; dropped by CUDA 13.0"},
    ArchRequirement{75, {10, 0, 0}, "Turing; lowest CUDA 13 supports"},
    ArchRequirement{80, {11, 0, 0}, "A100"},
    ArchRequirement{86, {11, 1, 0}, "Ampere consumer"},
    ArchRequirement{87, {11, 4, 0}, "Orin"},
    ArchRequirement{89, {11, 8, 0}, "Ada"},
    ArchRequirement{90, {11, 8, 0}, "Hopper"},
    ArchRequirement{100, {12, 8, 0}, "B200"},
    ArchRequirement{101, {12, 8, 0}, "Thor (renumbered 110 in 13.0)"},
    ArchRequirement{103, {12, 9, 0}, "B300"},
    ArchRequirement{110, {13, 0, 0}, "Thor"},
    ArchRequirement{120, {12, 8, 0}, "RTX PRO 6000 / RTX 50"},
    ArchRequirement{121, {12, 9, 0}, "DGX Spark"},
};

constexpr std::array kToolkitFloors{
    ToolkitFloor{13, 75},
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
std::span<const ToolkitFloor> toolkit_floors() {
  return kToolkitFloors;
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

std::optional<int> lowest_sm_for(int toolkit_major) {
  std::optional<int> lowest;
  // A later major keeps every drop of the earlier ones.
  for (const auto& row : kToolkitFloors)
    if (row.toolkit_major <= toolkit_major && (!lowest || row.lowest_sm > *lowest))
      lowest = row.lowest_sm;
  return lowest;
}

std::optional<int> min_driver_for(int cuda_major) {
  for (const auto& row : kDriverRequirements)
    if (row.cuda_major == cuda_major) return row.min_driver_major;
  return std::nullopt;
}

}  // namespace gl
