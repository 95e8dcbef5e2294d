// SPDX-License-Identifier: Apache-2.0
// A stand-in for libnvidia-ml.so.1 with NVML's real symbol names and ABI, so the product's
// dlopen code runs unchanged in tests. It stands in only for what cannot run here, a loaded
// driver with GPUs: signatures and codes as nvml.h declares them (NVIDIA/go-nvml
// gen/nvml/nvml.h at v0.13.3-0-10-g2f9e261, NVML API 13), error texts as nvidia-ml-py's
// pynvml.py (NVMLError._errcode_to_string) spells them. `init 9` reproduces what the real
// library (Debian 12's libnvidia-ml1 535.261.03-1) answers without the kernel module, "Driver
// Not Loaded"; tests/integration/nvidia_real_programs_test.sh runs that real library.
// It describes the node in the file named by $GPULAUNCH_FAKE_NVML, re-read at every
// nvmlInit_v2:
//   init 9                       nvmlInit_v2 returns this code (9 = DRIVER_NOT_LOADED)
//   driver 580.95.05
//   cuda 13000                   nvmlSystemGetCudaDriverVersion_v2
//   gpu 12 0 97887 GPU-uuid Name with spaces
//   process 0 4242 2048          a compute process on GPU 0: pid, MiB used (GPU residue)
//   process 0 4242 2048 live     the same, listed only while that pid runs (not a zombie): the
//                                driver frees a process's memory once its handles close at exit
// Health, per GPU index (defaults: a healthy GPU without NVLink fabric, persistence on, PCI bus
// 0x18 + 0x10 * index):
//   pci 0 00000000:3B:00.0       nvmlDeviceGetPciInfo_v3's busId
//   persistence 0 0              nvmlDeviceGetPersistenceMode: 0 off, 1 on
//   ecc 0 2                      volatile uncorrected ECC errors (nvmlDeviceGetTotalEccErrors)
//   ecc 0 none                   ECC off: the call answers NOT_SUPPORTED
//   remap 0 1 0                  nvmlDeviceGetRemappedRows: pending, failure occurred
//   retired 0 1                  nvmlDeviceGetRetiredPagesPendingStatus: pending
//   fabric 0 2 0                 nvmlDeviceGetGpuFabricInfoV: state (NVML_GPU_FABRIC_STATE_*),
//                                status (an nvmlReturn_t, read once the state is 3, completed)
//   lost 3                       GPU 3 fell off the bus: nvmlDeviceGetHandleByIndex_v2 returns
//                                NVML_ERROR_GPU_IS_LOST (15) for it; the count still has it
// `init 18` is NVML_ERROR_LIB_RM_VERSION_MISMATCH, a driver upgraded under a loaded module;
// `init 15` is NVML_ERROR_GPU_IS_LOST, which nvmlInit_v2 returns when a GPU is lost.
// Without the variable or the file, nvmlInit_v2 fails with NVML_ERROR_LIBRARY_NOT_FOUND.

#include <cstdint>
#include <cstdio>
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
  std::string bus_id;
  unsigned persistence = 1;
  long long ecc_uncorrected = 0;  // < 0: ECC off
  unsigned remap_pending = 0;
  unsigned remap_failure = 0;
  unsigned retired_pending = 0;
  int fabric_state = -1;  // < 0: not supported
  int fabric_status = 0;
  bool lost = false;
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
    bool live = false;
  };
  std::vector<Process> processes;
};

Node node;

constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;
constexpr int kArgumentVersionMismatch = 25;
constexpr int kInsufficientSize = 7;
constexpr int kLibraryNotFound = 12;
constexpr int kGpuIsLost = 15;

int copy_text(const std::string& text, char* out, unsigned length) {
  if (!out || text.size() + 1 > length) return kInsufficientSize;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return kSuccess;
}

// /proc/PID/stat's state is not Z or X: the process has not exited.
bool running(unsigned pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z' &&
         text[close + 2] != 'X';
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
      char bus[32];
      std::snprintf(bus, sizeof bus, "00000000:%02X:00.0",
                    static_cast<unsigned>(0x18 + 0x10 * node.gpus.size()));
      gpu.bus_id = bus;
      node.gpus.push_back(gpu);
    } else if (key == "mig" || key == "lost") {  // "mig INDEX", "lost INDEX"
      unsigned index = 0;
      words >> index;
      if (index < node.gpus.size())
        (key == "mig" ? node.gpus[index].mig : node.gpus[index].lost) = true;
    } else if (key == "pci" || key == "persistence" || key == "ecc" || key == "remap" ||
               key == "retired" || key == "fabric") {
      unsigned index = 0;
      words >> index;
      if (index >= node.gpus.size()) continue;
      Gpu& gpu = node.gpus[index];
      if (key == "pci") {
        words >> gpu.bus_id;
      } else if (key == "persistence") {
        words >> gpu.persistence;
      } else if (key == "ecc") {
        std::string count;
        words >> count;
        gpu.ecc_uncorrected = count == "none" ? -1 : std::stoll(count);
      } else if (key == "remap") {
        words >> gpu.remap_pending >> gpu.remap_failure;
      } else if (key == "retired") {
        words >> gpu.retired_pending;
      } else {
        words >> gpu.fabric_state >> gpu.fabric_status;
      }
    } else if (key == "process") {
      Node::Process process;
      std::string flag;
      words >> process.gpu >> process.pid >> process.mib >> flag;
      process.live = flag == "live";
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
    case 3:
      return "Not Supported";
    case 12:
      return "NVML Shared Library Not Found";
    case 18:  // nvidia-ml-py pynvml.py, NVMLError._errcode_to_string
      return "RM has detected an NVML/RM version mismatch.";
    case 25:
      return "Argument version mismatch";
    case 15:
      return "GPU is lost";
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
  if (node.gpus[index].lost) return kGpuIsLost;
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
    if (process.gpu == index && (!process.live || running(process.pid)))
      found.push_back({process.pid, process.mib << 20, 0, 0});
  const unsigned room = *count;
  *count = static_cast<unsigned>(found.size());
  if (found.size() > room || (!infos && !found.empty())) return kInsufficientSize;
  for (size_t i = 0; i < found.size(); ++i) infos[i] = found[i];
  return kSuccess;
}

struct nvmlPciInfo_t {  // nvml.h nvmlPciInfo_st
  char busIdLegacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pciDeviceId;
  unsigned pciSubSystemId;
  char busId[32];
};

int nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  const Gpu* gpu = gpu_of(device);
  if (!gpu || !pci) return kInvalidArgument;
  *pci = {};
  return copy_text(gpu->bus_id, pci->busId, sizeof pci->busId);
}

int nvmlDeviceGetPersistenceMode(nvmlDevice_t device, unsigned* mode) {
  const Gpu* gpu = gpu_of(device);
  if (!gpu || !mode) return kInvalidArgument;
  *mode = gpu->persistence;
  return kSuccess;
}

int nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int error_type, int counter_type,
                                unsigned long long* count) {
  const Gpu* gpu = gpu_of(device);
  if (!gpu || !count) return kInvalidArgument;
  if (gpu->ecc_uncorrected < 0) return kNotSupported;
  // Only the volatile uncorrected counter is scripted; the others read zero.
  *count = error_type == 1 && counter_type == 0
               ? static_cast<unsigned long long>(gpu->ecc_uncorrected)
               : 0;
  return kSuccess;
}

int nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned* corrected, unsigned* uncorrected,
                              unsigned* pending, unsigned* failure) {
  const Gpu* gpu = gpu_of(device);
  if (!gpu || !corrected || !uncorrected || !pending || !failure) return kInvalidArgument;
  *corrected = 0;
  *uncorrected = gpu->remap_pending + gpu->remap_failure;
  *pending = gpu->remap_pending;
  *failure = gpu->remap_failure;
  return kSuccess;
}

int nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device, unsigned* pending) {
  const Gpu* gpu = gpu_of(device);
  if (!gpu || !pending) return kInvalidArgument;
  *pending = gpu->retired_pending;
  return kSuccess;
}

struct nvmlGpuFabricInfoV_t {  // nvml.h nvmlGpuFabricInfo_v3_t
  unsigned version;
  unsigned char clusterUuid[16];
  int status;
  unsigned cliqueId;
  unsigned char state;
  unsigned healthMask;
  unsigned char healthSummary;
};

int nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t* info) {
  const Gpu* gpu = gpu_of(device);
  if (!gpu || !info) return kInvalidArgument;
  // NVML_STRUCT_VERSION(GpuFabricInfo, 3): a caller that sets another version is refused.
  if (info->version != (sizeof(nvmlGpuFabricInfoV_t) | (3u << 24))) return kArgumentVersionMismatch;
  if (gpu->fabric_state < 0) return kNotSupported;
  info->state = static_cast<unsigned char>(gpu->fabric_state);
  info->status = gpu->fabric_status;
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
