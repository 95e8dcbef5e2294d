// NVML through dlopen: no link-time dependency, so gpulaunch runs on nodes without a driver.
// The ABI below is NVML's own (nvml.h): nvmlReturn_t is int, nvmlDevice_t an opaque pointer.

#include <dlfcn.h>

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
constexpr nvmlReturn_t kNvmlSuccess = 0;
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
    probe.gpus.push_back(std::move(gpu));
  }
  shutdown();
  return probe;
}

}  // namespace gl
