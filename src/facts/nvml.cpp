// SPDX-License-Identifier: Apache-2.0
// NVML through dlopen: no link-time dependency, so gpulaunch runs on nodes without a driver.
// The ABI below is NVML's own (nvml.h): nvmlReturn_t is int, nvmlDevice_t an opaque pointer.

#include <dlfcn.h>

#include <algorithm>

#include "facts/gpu_probe.hpp"
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
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr unsigned kNvmlMigEnabled = 1;  // NVML_DEVICE_MIG_ENABLE
constexpr nvmlReturn_t kNvmlInsufficientSize = 7;
constexpr unsigned kNameLength = 96;

class Library {
 public:
  Library() : handle_(dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {}
  ~Library() {
    if (handle_) dlclose(handle_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  template <class Function>
  Function* symbol(const char* name) const {
    return reinterpret_cast<Function*>(dlsym(handle_, name));
  }

 private:
  void* handle_;
};

}  // namespace

Result<GpuProbe> probe_nvml() {
  Library library;
  if (!library.loaded()) {
    const char* why = dlerror();
    return failf("Failed to load 'libnvidia-ml.so.1': {}", why ? why : "not found");
  }
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
  auto describe = [&](nvmlReturn_t code) {
    const char* text = error_string ? error_string(code) : nullptr;
    return text ? std::string(text) : "NVML error " + std::to_string(code);
  };

  if (nvmlReturn_t code = init(); code != kNvmlSuccess)
    return failf("Failed to initialise NVML: {}", describe(code));
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
    probe.gpus.push_back(std::move(gpu));
  }
  shutdown();
  return probe;
}

Result<std::vector<GpuProcessUse>> nvml_compute_processes(const std::vector<int>& gpus) {
  Library library;
  if (!library.loaded()) return fail("Failed to load 'libnvidia-ml.so.1'");
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
