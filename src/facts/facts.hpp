#pragma once
// What a node is, as one value: GPUs and driver, every CUDA toolkit a process could find, the
// engine's Python environment read as files, and the paths and ports a profile needs. Gathered
// on one node, serialised to JSON, and checked against a profile here or on another machine.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "util/error.hpp"

namespace gl {

struct GpuFact {
  int index = 0;
  std::string name;
  std::string uuid;
  int cc_major = 0;  // compute capability 12.0 = sm_120
  int cc_minor = 0;
  unsigned long long memory_total_mib = 0;
};

struct DriverFact {
  bool present = false;
  std::string source;                   // "nvml", "nvidia-smi", "/proc/driver/nvidia", "none"
  std::optional<std::string> version;   // "580.95.05"
  std::optional<std::string> max_cuda;  // the newest CUDA the driver runs: "13.0"
  std::vector<std::string> problems;    // why a probe failed: kept, a missing driver is a fact
};

struct ToolkitFact {
  std::string root;                    // as a process sees it: /usr/local/cuda-13.0, /usr
  std::string nvcc;                    // root/bin/nvcc
  std::vector<std::string> found_via;  // "PATH (shell)", "CUDA_HOME (unit)", "/usr/local/cuda-*"
  std::string resolved_root;           // symlinks followed: /usr/local/cuda -> /usr/local/cuda-13.0
  bool root_exists = false;
  bool nvcc_exists = false;
  std::optional<std::string> nvcc_version;    // `nvcc --version`: what JIT libraries ask
  std::optional<std::string> json_version;    // version.json
  std::optional<std::string> header_version;  // include/cuda.h CUDA_VERSION
  std::optional<std::vector<int>> archs;      // `nvcc --list-gpu-arch`, as sm numbers
  std::vector<std::string> problems;

  // The version a JIT library sees: nvcc's own, else the files'.
  std::optional<std::string> version() const;
};

struct PythonEnvFact {
  std::string prefix;       // the venv, or the interpreter's prefix
  std::string interpreter;  // bin/python
  bool interpreter_exists = false;
  std::vector<std::string> site_packages;
  std::optional<std::string> torch_version;     // "2.9.0+cu130"
  std::optional<std::string> torch_cuda;        // "13.0"; absent for a CPU build or no torch
  std::map<std::string, std::string> packages;  // normalised dist name -> version
  std::map<std::string, bool> modules;          // import name -> a package directory exists
};

struct PathFact {
  std::string path;
  bool exists = false;
  bool directory = false;
  bool executable = false;
};

struct PortFact {
  std::string host;
  long long port = 0;
  bool taken = false;
  std::optional<std::string> problem;
};

struct Facts {
  std::string root = "/";  // what `--root` pointed at when gathered
  DriverFact driver;
  std::vector<GpuFact> gpus;
  std::vector<ToolkitFact> toolkits;
  std::optional<PythonEnvFact> python;
  std::vector<PathFact> paths;
  std::vector<PortFact> ports;

  const ToolkitFact* toolkit_at(const std::string& root) const;
  const ToolkitFact* toolkit_with_nvcc(const std::string& nvcc) const;
  const PathFact* path(const std::string& path) const;
};

nlohmann::json facts_to_json(const Facts& facts);
Result<Facts> facts_from_json(const nlohmann::json& json);
// Bounded JSON (util/json_file.hpp) with facts' top-level keys, else "'ORIGIN' is not a gpulaunch
// facts file: why".
Result<Facts> parse_facts(std::string_view text, const std::string& origin);

// Capability as "12.0".
std::string capability_text(const GpuFact& gpu);

}  // namespace gl

namespace gl {
// Reads a file written by `gpulaunch facts --json`: a regular file of at most 16 MiB.
Result<Facts> load_facts_file(const std::string& path);
}  // namespace gl
