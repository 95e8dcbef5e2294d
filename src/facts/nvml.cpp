// SPDX-License-Identifier: Apache-2.0
// NVML through dlopen: no link-time dependency, so gpulaunch runs on nodes without a driver.
// The ABI below is NVML's own (nvml.h): nvmlReturn_t is int, nvmlDevice_t an opaque pointer.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <functional>

#include "catalog/node_health.hpp"
#include "facts/gpu_probe.hpp"
#include "util/shared_library.hpp"
#include "util/try.hpp"
#include "util/version.hpp"

namespace gl {
namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct nvmlProcessInfo_t {  // nvmlProcessInfo_v2_t: what nvmlDeviceGetComputeRunningProcesses_v3
                            // fills
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
};
// nvml.h (NVIDIA/go-nvml gen/nvml/nvml.h, v0.13.3-0-10-g2f9e261): what the health reads fill.
struct nvmlPciInfo_t {  // what nvmlDeviceGetPciInfo_v3 fills
  char busIdLegacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pciDeviceId;
  unsigned pciSubSystemId;
  char busId[32];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE: "00000000:3B:00.0"
};
struct nvmlGpuFabricInfo_t {  // nvmlDeviceGetGpuFabricInfo (deprecated in 13.0, kept as fallback)
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned cliqueId;
  unsigned char state;  // NVML_GPU_FABRIC_STATE_*
};
struct nvmlGpuFabricInfoV_t {  // nvmlGpuFabricInfo_v3_t; v2 is the same without healthSummary
  unsigned version;
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned cliqueId;
  unsigned char state;
  unsigned healthMask;
  unsigned char healthSummary;
};
// NVML_STRUCT_VERSION(GpuFabricInfo, N): the struct's size | N << 24.
constexpr unsigned kFabricInfoV3 = sizeof(nvmlGpuFabricInfoV_t) | (3u << 24);
constexpr unsigned kFabricInfoV2 = offsetof(nvmlGpuFabricInfoV_t, healthSummary) |
                                   (2u << 24);  // v2's size: the last int, padded, ends there
constexpr nvmlReturn_t kNvmlArgumentVersionMismatch = 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
constexpr unsigned kNvmlFeatureEnabled = 1;                // NVML_FEATURE_ENABLED
constexpr int kNvmlMemoryErrorUncorrected = 1;             // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int kNvmlVolatileEcc = 0;                        // NVML_VOLATILE_ECC

constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr unsigned kNvmlMigEnabled = 1;  // NVML_DEVICE_MIG_ENABLE
constexpr nvmlReturn_t kNvmlInsufficientSize = 7;
constexpr unsigned kNameLength = 96;

// The optional calls the health reads make: any may be missing from an older driver, and each
// answers NOT_SUPPORTED where the GPU lacks the feature; nullopt then.
struct HealthCalls {
  nvmlReturn_t (*pci_info)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*persistence)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*ecc_total)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*remapped_rows)(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*retired_pending)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*fabric_v)(nvmlDevice_t, nvmlGpuFabricInfoV_t*) = nullptr;
  nvmlReturn_t (*fabric)(nvmlDevice_t, nvmlGpuFabricInfo_t*) = nullptr;

  explicit HealthCalls(const SharedLibrary& library)
      : pci_info(
            library.symbol<nvmlReturn_t(nvmlDevice_t, nvmlPciInfo_t*)>("nvmlDeviceGetPciInfo_v3")),
        persistence(
            library.symbol<nvmlReturn_t(nvmlDevice_t, unsigned*)>("nvmlDeviceGetPersistenceMode")),
        ecc_total(library.symbol<nvmlReturn_t(nvmlDevice_t, int, int, unsigned long long*)>(
            "nvmlDeviceGetTotalEccErrors")),
        remapped_rows(
            library.symbol<nvmlReturn_t(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*)>(
                "nvmlDeviceGetRemappedRows")),
        retired_pending(library.symbol<nvmlReturn_t(nvmlDevice_t, unsigned*)>(
            "nvmlDeviceGetRetiredPagesPendingStatus")),
        fabric_v(library.symbol<nvmlReturn_t(nvmlDevice_t, nvmlGpuFabricInfoV_t*)>(
            "nvmlDeviceGetGpuFabricInfoV")),
        fabric(library.symbol<nvmlReturn_t(nvmlDevice_t, nvmlGpuFabricInfo_t*)>(
            "nvmlDeviceGetGpuFabricInfo")) {}
};

// The fabric's state and, once completed, its error: the versioned call (v3, else v2 for a driver
// that knows only v2), else the deprecated one.
void read_fabric(const HealthCalls& calls, nvmlDevice_t device, GpuHealthFact& health,
                 const std::function<std::string(nvmlReturn_t)>& describe) {
  nvmlReturn_t code = kNvmlErrorNotSupported;
  unsigned char state = 0;
  nvmlReturn_t status = kNvmlSuccess;
  if (calls.fabric_v) {
    nvmlGpuFabricInfoV_t info{};
    info.version = kFabricInfoV3;
    code = calls.fabric_v(device, &info);
    if (code == kNvmlArgumentVersionMismatch) {
      info = {};
      info.version = kFabricInfoV2;
      code = calls.fabric_v(device, &info);
    }
    state = info.state;
    status = info.status;
  } else if (calls.fabric) {
    nvmlGpuFabricInfo_t info{};
    code = calls.fabric(device, &info);
    state = info.state;
    status = info.status;
  } else {
    return;
  }
  if (code == kNvmlErrorNotSupported) {
    health.fabric_state = fabric_state_name(FabricState::not_supported);
    return;
  }
  if (code != kNvmlSuccess || state > static_cast<unsigned char>(FabricState::completed)) return;
  const auto fabric = static_cast<FabricState>(state);
  health.fabric_state = fabric_state_name(fabric);
  // nvml.h: the status "must be checked only if state returns complete".
  if (fabric == FabricState::completed && status != kNvmlSuccess)
    health.fabric_error = describe(status);
}

void read_health(const HealthCalls& calls, nvmlDevice_t device, GpuFact& gpu,
                 const std::function<std::string(nvmlReturn_t)>& describe) {
  if (nvmlPciInfo_t pci{}; calls.pci_info && calls.pci_info(device, &pci) == kNvmlSuccess)
    gpu.pci_bus_id = std::string(pci.busId, strnlen(pci.busId, sizeof pci.busId));
  auto& health = gpu.health;
  if (unsigned mode = 0; calls.persistence && calls.persistence(device, &mode) == kNvmlSuccess)
    health.persistence_mode = mode == kNvmlFeatureEnabled;
  if (unsigned long long count = 0;
      calls.ecc_total && calls.ecc_total(device, kNvmlMemoryErrorUncorrected, kNvmlVolatileEcc,
                                         &count) == kNvmlSuccess)
    health.ecc_uncorrected_volatile = count;
  unsigned corrected = 0, uncorrected = 0, pending = 0, failure = 0;
  if (calls.remapped_rows &&
      calls.remapped_rows(device, &corrected, &uncorrected, &pending, &failure) == kNvmlSuccess) {
    health.row_remap_pending = pending != 0;
    health.row_remap_failure = failure != 0;
  }
  if (unsigned retired = 0;
      calls.retired_pending && calls.retired_pending(device, &retired) == kNvmlSuccess)
    health.retired_pages_pending = retired == kNvmlFeatureEnabled;
  read_fabric(calls, device, health, describe);
}

}  // namespace

Result<GpuProbe> probe_nvml(int* init_error) {
  GL_TRY(const auto library, SharedLibrary::open("libnvidia-ml.so.1", "libnvidia-ml.so.1"));
  auto init = library.symbol<nvmlReturn_t()>("nvmlInit_v2");
  auto shutdown = library.symbol<nvmlReturn_t()>("nvmlShutdown");
  auto error_string = library.symbol<const char*(nvmlReturn_t)>("nvmlErrorString");
  auto count = library.symbol<nvmlReturn_t(unsigned*)>("nvmlDeviceGetCount_v2");
  auto by_index =
      library.symbol<nvmlReturn_t(unsigned, nvmlDevice_t*)>("nvmlDeviceGetHandleByIndex_v2");
  auto get_name = library.symbol<nvmlReturn_t(nvmlDevice_t, char*, unsigned)>("nvmlDeviceGetName");
  auto get_uuid = library.symbol<nvmlReturn_t(nvmlDevice_t, char*, unsigned)>("nvmlDeviceGetUUID");
  auto get_capability =
      library.symbol<nvmlReturn_t(nvmlDevice_t, int*, int*)>("nvmlDeviceGetCudaComputeCapability");
  auto get_memory =
      library.symbol<nvmlReturn_t(nvmlDevice_t, nvmlMemory_t*)>("nvmlDeviceGetMemoryInfo");
  auto driver_version = library.symbol<nvmlReturn_t(char*, unsigned)>("nvmlSystemGetDriverVersion");
  auto cuda_version = library.symbol<nvmlReturn_t(int*)>("nvmlSystemGetCudaDriverVersion_v2");
  // Optional: drivers before R450 have no MIG (nvml.h: current, pending; 1 = enabled).
  auto get_mig_mode =
      library.symbol<nvmlReturn_t(nvmlDevice_t, unsigned*, unsigned*)>("nvmlDeviceGetMigMode");
  if (!init || !shutdown || !count || !by_index || !get_name || !get_uuid || !get_capability ||
      !get_memory || !driver_version || !cuda_version)
    return fail("Failed to load 'libnvidia-ml.so.1': a required NVML symbol is missing");
  std::function<std::string(nvmlReturn_t)> describe = [&](nvmlReturn_t code) {
    const char* text = error_string ? error_string(code) : nullptr;
    return text ? std::string(text) : "NVML error " + std::to_string(code);
  };

  if (nvmlReturn_t code = init(); code != kNvmlSuccess) {
    if (init_error) *init_error = code;
    return failf("Failed to initialise NVML: {}", describe(code));
  }
  const HealthCalls health_calls(library);
  GpuProbe probe;
  probe.driver.source = "nvml";
  probe.driver.present = true;
  char text[kNameLength] = {};
  if (driver_version(text, sizeof text) == kNvmlSuccess) probe.driver.version = text;
  int cuda = 0;
  if (cuda_version(&cuda) == kNvmlSuccess)
    probe.driver.max_cuda = version_from_cuda_int(cuda).major_minor();
  unsigned devices = 0;
  if (nvmlReturn_t code = count(&devices); code != kNvmlSuccess) {
    probe.driver.problems.push_back("Failed to count GPUs: " + describe(code));
    devices = 0;
  }
  for (unsigned index = 0; index < devices; ++index) {
    nvmlDevice_t device = nullptr;
    if (nvmlReturn_t code = by_index(index, &device); code != kNvmlSuccess) {
      if (code == kNvmlErrorGpuIsLost)
        probe.driver.lost_gpus.push_back("GPU " + std::to_string(index));
      probe.driver.problems.push_back("Failed to open GPU " + std::to_string(index) + ": " +
                                      describe(code));
      continue;
    }
    GpuFact gpu;
    gpu.index = static_cast<int>(index);
    char name[kNameLength] = {};
    if (get_name(device, name, sizeof name) == kNvmlSuccess) gpu.name = name;
    char uuid[kNameLength] = {};
    if (get_uuid(device, uuid, sizeof uuid) == kNvmlSuccess) gpu.uuid = uuid;
    get_capability(device, &gpu.cc_major, &gpu.cc_minor);
    nvmlMemory_t memory{};
    if (get_memory(device, &memory) == kNvmlSuccess) gpu.memory_total_mib = memory.total >> 20;
    unsigned mig_current = 0, mig_pending = 0;
    if (get_mig_mode && get_mig_mode(device, &mig_current, &mig_pending) == kNvmlSuccess)
      gpu.mig = mig_current == kNvmlMigEnabled;
    read_health(health_calls, device, gpu, describe);
    probe.gpus.push_back(std::move(gpu));
  }
  shutdown();
  return probe;
}

Result<std::vector<GpuProcessUse>> nvml_compute_processes(const std::vector<int>& gpus) {
  GL_TRY(const auto library, SharedLibrary::open("libnvidia-ml.so.1", "libnvidia-ml.so.1"));
  auto init = library.symbol<nvmlReturn_t()>("nvmlInit_v2");
  auto shutdown = library.symbol<nvmlReturn_t()>("nvmlShutdown");
  auto count = library.symbol<nvmlReturn_t(unsigned*)>("nvmlDeviceGetCount_v2");
  auto by_index =
      library.symbol<nvmlReturn_t(unsigned, nvmlDevice_t*)>("nvmlDeviceGetHandleByIndex_v2");
  auto processes = library.symbol<nvmlReturn_t(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*)>(
      "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!init || !shutdown || !count || !by_index || !processes)
    return fail("Failed to load 'libnvidia-ml.so.1': a required NVML symbol is missing");
  if (nvmlReturn_t code = init(); code != kNvmlSuccess)
    return failf("Failed to initialise NVML: error {}", code);
  unsigned devices = 0;
  std::vector<GpuProcessUse> found;
  if (count(&devices) == kNvmlSuccess)
    for (unsigned index = 0; index < devices; ++index) {
      if (!gpus.empty() &&
          std::find(gpus.begin(), gpus.end(), static_cast<int>(index)) == gpus.end())
        continue;
      nvmlDevice_t device = nullptr;
      if (by_index(index, &device) != kNvmlSuccess) continue;
      // Processes come and go between the two calls: ask again while the buffer is too small.
      std::vector<nvmlProcessInfo_t> infos(16);
      for (int attempt = 0; attempt < 4; ++attempt) {
        unsigned size = static_cast<unsigned>(infos.size());
        nvmlReturn_t code = processes(device, &size, infos.data());
        if (code == kNvmlInsufficientSize) {
          infos.resize(size + 8);
          continue;
        }
        if (code == kNvmlSuccess)
          for (unsigned i = 0; i < size; ++i)
            found.push_back({static_cast<int>(index), infos[i].pid, infos[i].usedGpuMemory >> 20});
        break;
      }
    }
  shutdown();
  return found;
}

}  // namespace gl
