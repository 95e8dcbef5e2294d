// SPDX-License-Identifier: Apache-2.0
#pragma once
// What makes a node's GPUs or driver unfit for a start, as data: NVML's codes and fabric states,
// the Fabric Manager's unit, the health thresholds, and the Xid events that matter with their
// meaning and fix. The NVML probe, the kernel-log parser and `check`'s node-health rules read it.

#include <optional>
#include <span>
#include <string_view>

namespace gl {

// nvml.h (NVIDIA/go-nvml gen/nvml/nvml.h, v0.13.3-0-10-g2f9e261, NVML API 13): nvmlReturn_t
// values the probe tells apart.
inline constexpr int kNvmlErrorNotSupported = 3;           // NVML_ERROR_NOT_SUPPORTED
inline constexpr int kNvmlErrorLibRmVersionMismatch = 18;  // NVML_ERROR_LIB_RM_VERSION_MISMATCH
// What nvmlErrorString says for it (nvidia-ml-py pynvml.py, NVMLError._errcode_to_string) and
// what `nvidia-smi` prints in the same state.
inline constexpr std::string_view kNvmlVersionMismatchText =
    "RM has detected an NVML/RM version mismatch.";
inline constexpr std::string_view kNvidiaSmiVersionMismatchText =
    "Failed to initialize NVML: Driver/library version mismatch";

// The driver's libraries installed, its kernel module not loaded: nvml.h
// NVML_ERROR_DRIVER_NOT_LOADED (9) from nvmlInit_v2 ("Driver Not Loaded"), and nvidia-smi's line
// before it exits 9. Both read from Debian 12's libnvidia-ml1 and nvidia-smi 535.261.03-1, run
// on a node without the module (tests/integration/nvidia_real_programs_test.sh).
inline constexpr int kNvmlErrorDriverNotLoaded = 9;
// nvml.h NVML_ERROR_LIBRARY_NOT_FOUND (12): no driver library behind the loader's answer, as no
// library at all.
inline constexpr int kNvmlErrorLibraryNotFound = 12;
inline constexpr std::string_view kNvidiaSmiNoDriverText =
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver";

// nvml.h NVML_GPU_FABRIC_STATE_*: where a GPU is in registering with the NVLink fabric
// (nvmlDeviceGetGpuFabricInfoV; Hopper and newer, NVSwitch systems).
enum class FabricState { not_supported = 0, not_started = 1, in_progress = 2, completed = 3 };
std::string_view fabric_state_name(FabricState state);  // "not-supported", "completed", ...
std::optional<FabricState> fabric_state_named(std::string_view name);

// The unit NVIDIA's Fabric Manager package installs (fabricmanager's
// nvidia-fabricmanager.service; NVIDIA Fabric Manager User Guide, "Starting Fabric Manager").
inline constexpr std::string_view kFabricManagerUnit = "nvidia-fabricmanager.service";
// What CUDA says on a GPU the fabric has not registered: cudaErrorSystemNotReady = 802,
// cudaGetErrorString's "system not yet initialized" (CUDA Runtime API, cudaError enum, 12.x/13.x).
inline constexpr int kCudaErrorSystemNotReady = 802;
inline constexpr std::string_view kCudaSystemNotReadyText = "system not yet initialized";

// A GPU fallen off the bus or otherwise out of the driver's reach: nvml.h NVML_ERROR_GPU_IS_LOST
// (15; "The GPU has fallen off the bus or has otherwise become inaccessible"), returned by
// nvmlInit_v2 or by nvmlDeviceGetHandleByIndex_v2 for that GPU; nvmlErrorString's text
// (nvidia-ml-py pynvml.py, NVMLError._errcode_to_string), which nvidia-smi prints after
// "Unable to determine the device handle for GPU<address>: " in its place in the listing. The
// kernel logs Xid 79 for it. It is not "too few GPUs": the GPU is there and needs a reset or a
// reboot (a reset cannot reach a GPU the bus has lost).
inline constexpr int kNvmlErrorGpuIsLost = 15;
inline constexpr std::string_view kNvmlGpuIsLostText = "GPU is lost";
inline constexpr std::string_view kNvidiaSmiNoHandleText =
    "Unable to determine the device handle for ";
inline constexpr int kXidFallenOffTheBus = 79;
inline constexpr std::string_view kGpuLostFix =
    "reboot the node (a GPU off the bus comes back only with a reboot; `nvidia-smi -r -i N` "
    "helps only where the driver still reaches it); if it recurs, have the GPU, its slot, power "
    "and cooling checked. Do not lower the parallelism: the GPU is there, only unreachable";
inline constexpr std::string_view kGpuLostSource =
    "nvml.h NVML_ERROR_GPU_IS_LOST (NVIDIA/go-nvml gen/nvml/nvml.h, NVML API 13); NVIDIA Xid "
    "catalog, Xid 79";

// A per-GPU health reading judged against a limit.
enum class HealthCheck {
  ecc_uncorrected_volatile,  // nvmlDeviceGetTotalEccErrors(UNCORRECTED, VOLATILE_ECC)
  row_remap_failure,         // nvmlDeviceGetRemappedRows failureOccurred
  row_remap_pending,         // nvmlDeviceGetRemappedRows isPending
  retired_pages_pending,     // nvmlDeviceGetRetiredPagesPendingStatus
  persistence_off,           // nvmlDeviceGetPersistenceMode == DISABLED
};

struct HealthThreshold {
  HealthCheck check;
  std::string_view code;     // the finding's code
  bool blocks_start;         // an error; else a warning
  unsigned long long limit;  // a count above this is a fault (flags: 0)
  std::string_view meaning;
  std::string_view rule;    // the requirement, in words
  std::string_view fix;     // {gpu} is the GPU's NVML index
  std::string_view source;  // where the fact and the severity were read
};
const HealthThreshold& health_threshold(HealthCheck check);

// One Xid the kernel log may hold that says a GPU is unfit for the next start.
struct XidRow {
  int xid;
  std::string_view name;
  bool blocks_start;  // an error; else a warning
  std::string_view meaning;
  std::string_view fix;
};
std::span<const XidRow> xid_rows();
const XidRow* xid_row(int xid);
// The catalog the rows were read from.
inline constexpr std::string_view kXidCatalogSource =
    "NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors, analyzing-xid-catalog.html, "
    "resolution buckets for A100/H100/B100/GB200)";
// What every Xid line of the NVIDIA kernel module starts with (open-gpu-kernel-modules
// nvErrorLog: "NVRM: Xid (PCI:0000:2b:00): 79, ..."); the journal is searched for it.
inline constexpr std::string_view kXidMarker = "NVRM: Xid (";

}  // namespace gl
