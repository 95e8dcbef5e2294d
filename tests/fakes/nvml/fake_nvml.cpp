// SPDX-License-Identifier: Apache-2.0
// A stand-in for libnvidia-ml.so.1 with NVML's real symbol names and ABI, so the product's
// dlopen code runs unchanged in tests. It describes the node in the file named by
// $GPULAUNCH_FAKE_NVML, re-read at every nvmlInit_v2:
//   init 9                       nvmlInit_v2 returns this code (9 = DRIVER_NOT_LOADED)
//   driver 580.95.05
//   cuda 13000                   nvmlSystemGetCudaDriverVersion_v2
//   gpu 12 0 97887 GPU-uuid Name with spaces
//   process 0 4242 2048          a compute process on GPU 0: pid, MiB used (GPU residue)
// Without the variable or the file, nvmlInit_v2 fails with NVML_ERROR_LIBRARY_NOT_FOUND.

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Gpu {
  int major = 0;
  int minor = 0;
  unsigned long long mib = 0;
  std::string uuid;
  std::string name;
  bool mig = false;
};

struct Node {
  int init_code = 0;
  std::string driver;
  int cuda = 0;
  std::vector<Gpu> gpus;
  struct Process {
    unsigned gpu = 0;
    unsigned pid = 0;
    unsigned long long mib = 0;
  };
  std::vector<Process> processes;
};

Node node;

constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kInsufficientSize = 7;
constexpr int kLibraryNotFound = 12;

int copy_text(const std::string& text, char* out, unsigned length) {
  if (!out || text.size() + 1 > length) return kInsufficientSize;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return kSuccess;
}

}  // namespace

extern "C" {

struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
typedef struct nvmlDevice_st* nvmlDevice_t;

int nvmlInit_v2() {
  node = Node{};
  const char* path = std::getenv("GPULAUNCH_FAKE_NVML");
  if (!path) return kLibraryNotFound;
  std::ifstream in(path);
  if (!in) return kLibraryNotFound;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "init")
      words >> node.init_code;
    else if (key == "driver")
      words >> node.driver;
    else if (key == "cuda")
      words >> node.cuda;
    else if (key == "gpu") {
      Gpu gpu;
      words >> gpu.major >> gpu.minor >> gpu.mib >> gpu.uuid;
      std::getline(words >> std::ws, gpu.name);
      node.gpus.push_back(gpu);
    } else if (key == "mig") {  // "mig INDEX": that GPU is in MIG mode
      unsigned index = 0;
      words >> index;
      if (index < node.gpus.size()) node.gpus[index].mig = true;
    } else if (key == "process") {
      Node::Process process;
      words >> process.gpu >> process.pid >> process.mib;
      node.processes.push_back(process);
    }
  }
  return node.init_code;
}

int nvmlShutdown() {
  return kSuccess;
}

const char* nvmlErrorString(int code) {
  switch (code) {
    case 9:
      return "Driver Not Loaded";
    case 12:
      return "NVML Shared Library Not Found";
    default:
      return "Unknown Error";
  }
}

int nvmlDeviceGetCount_v2(unsigned* count) {
  if (!count) return kInvalidArgument;
  *count = static_cast<unsigned>(node.gpus.size());
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  if (!device || index >= node.gpus.size()) return kInvalidArgument;
  // The handle is the index plus one, so it is never null.
  *device = reinterpret_cast<nvmlDevice_t>(static_cast<std::uintptr_t>(index) + 1);
  return kSuccess;
}

static const Gpu* gpu_of(nvmlDevice_t device) {
  auto index = reinterpret_cast<std::uintptr_t>(device);
  return index == 0 || index > node.gpus.size() ? nullptr : &node.gpus[index - 1];
}

int nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned length) {
  const Gpu* gpu = gpu_of(device);
  return gpu ? copy_text(gpu->name, name, length) : kInvalidArgument;
}

int nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned length) {
  const Gpu* gpu = gpu_of(device);
  return gpu ? copy_text(gpu->uuid, uuid, length) : kInvalidArgument;
}

int nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  const Gpu* gpu = gpu_of(device);
  if (!gpu || !major || !minor) return kInvalidArgument;
  *major = gpu->major;
  *minor = gpu->minor;
  return kSuccess;
}

int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  const Gpu* gpu = gpu_of(device);
  if (!gpu || !memory) return kInvalidArgument;
  memory->total = gpu->mib << 20;
  memory->free = memory->total;
  memory->used = 0;
  return kSuccess;
}

int nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned* current, unsigned* pending) {
  const Gpu* gpu = gpu_of(device);
  if (!gpu || !current || !pending) return kInvalidArgument;
  *current = *pending = gpu->mig ? 1 : 0;
  return kSuccess;
}

struct nvmlProcessInfo_t {  // nvmlProcessInfo_v2_t, what the _v3 call fills
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
};

int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned* count,
                                            nvmlProcessInfo_t* infos) {
  const Gpu* gpu = gpu_of(device);
  if (!gpu || !count) return kInvalidArgument;
  const unsigned index = static_cast<unsigned>(gpu - node.gpus.data());
  std::vector<nvmlProcessInfo_t> found;
  for (const auto& process : node.processes)
    if (process.gpu == index) found.push_back({process.pid, process.mib << 20, 0, 0});
  const unsigned room = *count;
  *count = static_cast<unsigned>(found.size());
  if (found.size() > room || (!infos && !found.empty())) return kInsufficientSize;
  for (size_t i = 0; i < found.size(); ++i) infos[i] = found[i];
  return kSuccess;
}

int nvmlSystemGetDriverVersion(char* version, unsigned length) {
  return copy_text(node.driver, version, length);
}

int nvmlSystemGetCudaDriverVersion_v2(int* version) {
  if (!version) return kInvalidArgument;
  *version = node.cuda;
  return kSuccess;
}

}  // extern "C"
