// SPDX-License-Identifier: Apache-2.0
#pragma once
// GPUs and driver, from NVML loaded at run time, else from nvidia-smi, else from
// /proc/driver/nvidia. A node without a driver yields a DriverFact saying so, never a failure.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "facts/facts.hpp"
#include "facts/node_fs.hpp"
#include "util/error.hpp"

namespace gl {

struct GpuProbe {
  DriverFact driver;
  std::vector<GpuFact> gpus;
};

// libnvidia-ml.so.1 through the dynamic loader (LD_LIBRARY_PATH applies), each GPU's health
// with it. `init_error` receives nvmlInit_v2's code when it fails.
Result<GpuProbe> probe_nvml(int* init_error = nullptr);

// A process holding memory on a GPU (NVML's compute processes).
struct GpuProcessUse {
  int gpu = 0;  // NVML index
  unsigned pid = 0;
  unsigned long long used_mib = 0;
};

// Compute processes on the GPUs with the given NVML indices (all GPUs when empty).
Result<std::vector<GpuProcessUse>> nvml_compute_processes(const std::vector<int>& gpus);

// nvidia-smi's --query-gpu CSV and its `-q` report, parsed.
Result<std::vector<GpuFact>> parse_nvidia_smi_csv(std::string_view csv,
                                                  std::string* driver_version);
std::optional<std::string> parse_nvidia_smi_cuda_version(std::string_view query_report);
// The GPUs nvidia-smi's output names as lost ("Unable to determine the device handle for
// GPU0000:3B:00.0: GPU is lost"): what follows "for ", up to ": GPU is lost".
std::vector<std::string> parse_nvidia_smi_lost_gpus(std::string_view output);
// Runs it as `service_user` (nobody when unset) when gpulaunch is root.
Result<GpuProbe> probe_nvidia_smi(const std::string& host_program,
                                  const std::optional<std::string>& service_user);

// The whole fallback chain. `find_nvidia_smi` gives the node path of nvidia-smi on PATH, if
// any; it is asked only where NVML did not answer (a loaded driver's NVML says all it would).
GpuProbe probe_gpus(const NodeFs& node,
                    const std::function<std::optional<std::string>()>& find_nvidia_smi,
                    const std::optional<std::string>& service_user = std::nullopt);

}  // namespace gl
