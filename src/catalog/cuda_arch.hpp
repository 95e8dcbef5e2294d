#pragma once
// Every version threshold the check rules use, as data (field-facts sections 2-3): the lowest
// nvcc per GPU architecture, the architectures each toolkit major dropped, the driver each
// toolkit major needs, and the JIT libraries' own gates. Change a threshold by editing a row.

#include <optional>
#include <span>
#include <string_view>

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
  int sm;            // 120
  Version min_nvcc;  // lowest toolkit that compiles for it
  std::string_view note;
};

// The lowest architecture each toolkit major still compiles for.
struct ToolkitFloor {
  int toolkit_major;
  int lowest_sm;
};

struct DriverRequirement {
  int cuda_major;
  int min_driver_major;  // driver branch, "580"
};

// A JIT library that refuses some architectures below an nvcc version, from a library version on.
struct JitGate {
  std::string_view package;  // dist name as read from METADATA, normalised: "flashinfer"
  Version since;             // library versions at or above this carry the gate
  int arch_major;            // compute-capability major the gate covers (12 = sm_12x)
  Version min_nvcc;
  std::string_view reference;
};

std::span<const ArchRequirement> arch_requirements();
std::span<const ToolkitFloor> toolkit_floors();
std::span<const DriverRequirement> driver_requirements();
std::span<const JitGate> jit_gates();

// The table row for a capability; nullopt for one the table does not know.
std::optional<Version> min_nvcc_for(ComputeCapability capability);
// Lowest sm a toolkit of this major supports; nullopt when it dropped nothing we track.
std::optional<int> lowest_sm_for(int toolkit_major);
std::optional<int> min_driver_for(int cuda_major);

}  // namespace gl
