// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every version threshold the check rules use, as data (field-facts sections 2-3): the nvcc
// versions that compile for each GPU architecture (first and, once dropped, last), the driver
// each toolkit major needs, and the JIT libraries' own gates. Change a threshold by editing a row.
//
// The architecture rows give, for any nvcc from CUDA 11.0 on, the list its `--list-gpu-arch`
// prints (archs_for_nvcc), so `check` knows it from the toolkit's version files without running
// nvcc. Sources: the "GPU feature list" of the nvcc documentation of each release and the CUDA
// release notes (11.0: sm_80; 11.1: sm_86; 11.4: sm_87; 11.8: sm_89/sm_90; 12.0 drops sm_35/37;
// 12.8: sm_100/101/120; 12.9: sm_103/121; 13.0 drops Maxwell, Pascal and Volta, renames sm_101
// to sm_110, adds sm_88), checked against `nvcc --list-gpu-arch` of the nvidia-cuda-nvcc 13.0.88
// wheel: compute_75 80 86 87 88 89 90 100 103 110 120 121.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/version.hpp"

namespace gl {

// Compute capability, "12.0" = sm_120.
struct ComputeCapability {
  int major = 0;
  int minor = 0;

  auto operator<=>(const ComputeCapability&) const = default;
  int sm() const { return major * 10 + minor; }
};

struct ArchRequirement {
  int sm;                          // 120
  Version min_nvcc;                // lowest toolkit that compiles for it
  std::optional<Version> dropped;  // first toolkit that no longer does
  std::string_view note;
};

struct DriverRequirement {
  int cuda_major;
  int min_driver_major;  // driver branch, "580"
};

// A JIT library that refuses some architectures below an nvcc version, from a library version on.
// The gate holds where it was read: releases `since` through `verified_through`. A newer release
// may have dropped or moved it (`check` warns there instead of refusing, with `changed_by`).
struct JitGate {
  std::string_view package;  // dist name as read from METADATA, normalised: "flashinfer"
  Version since;             // library versions at or above this carry the gate
  Version verified_through;  // the newest release read that still carries it
  int arch_major;            // compute-capability major the gate covers (12 = sm_12x)
  Version min_nvcc;
  std::string_view reference;   // the upstream file and the releases it was read in
  std::string_view changed_by;  // what upstream changed after verified_through, "" if nothing known
};

// A CUDA toolkit NVIDIA's apt repositories ship as cuda-nvcc-X-Y, installed at
// /usr/local/cuda-X.Y: what `check` may name when no toolkit on the node passes every rule.
struct ToolkitRelease {
  Version version;              // major.minor
  std::string package() const;  // "cuda-nvcc-12-9"
  std::string root() const;     // "/usr/local/cuda-12.9"
};

std::span<const ArchRequirement> arch_requirements();
std::span<const DriverRequirement> driver_requirements();
std::span<const JitGate> jit_gates();
// Ascending by version.
std::span<const ToolkitRelease> toolkit_releases();

// The table row for a capability; nullopt for one the table does not know.
std::optional<Version> min_nvcc_for(ComputeCapability capability);
// The sm numbers nvcc `version` compiles for, ascending: what its --list-gpu-arch prints.
std::vector<int> archs_for_nvcc(const Version& version);
// Lowest sm every toolkit of this major supports; nullopt when the table knows none.
std::optional<int> lowest_sm_for(int toolkit_major);
std::optional<int> min_driver_for(int cuda_major);

}  // namespace gl
