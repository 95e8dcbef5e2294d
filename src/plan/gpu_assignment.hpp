// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which GPUs the engine gets, decided once: the unit's CUDA_VISIBLE_DEVICES, the GPUs `check`
// judges, the architectures the cache fingerprint keys on and the GPUs `run` waits to be
// released all come from assigned_gpus().

#include <string>
#include <string_view>
#include <vector>

#include "facts/facts.hpp"
#include "profile/profile.hpp"

namespace gl {

// gpus.devices as the profile names them (indices or UUIDs); otherwise the first gpus.count
// indices, by default as many as one node's ranks need.
std::vector<std::string> assigned_gpus(const Profile& profile);

// Whether `device` (an index or a UUID, as gpus.devices names GPUs) is `gpu`.
bool names_gpu(std::string_view device, const GpuFact& gpu);

// The probed GPUs among `devices`, in their order; a device the node lacks is left out.
std::vector<const GpuFact*> assigned_gpu_facts(const std::vector<std::string>& devices,
                                               const Facts& facts);

// The variable the unit pins the assignment in, its value, and the value read back as NVML
// indices: empty when it names a GPU by UUID (meaning: all GPUs).
inline constexpr std::string_view kVisibleDevicesVariable = "CUDA_VISIBLE_DEVICES";
std::string visible_devices_value(const std::vector<std::string>& devices);
std::vector<int> visible_device_indices(std::string_view value);

}  // namespace gl
