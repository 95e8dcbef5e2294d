// SPDX-License-Identifier: Apache-2.0
#include "facts/gpu_probe.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/core.h>

#include "catalog/node_health.hpp"
#include "util/process.hpp"
#include "util/try.hpp"
#include "util/version.hpp"

namespace gl {
namespace {

std::string trim(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  size_t end = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(begin, end - begin + 1));
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) fields.push_back(trim(field));
  return fields;
}

// "580.95.05" from "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep ...".
std::optional<std::string> proc_driver_version(std::string_view text) {
  auto marker = text.find("Kernel Module");
  if (marker == std::string_view::npos) return std::nullopt;
  std::istringstream words(std::string(text.substr(marker + 13)));
  std::string word;
  if (words >> word && parse_version(word)) return word;
  return std::nullopt;
}

}  // namespace

Result<std::vector<GpuFact>> parse_nvidia_smi_csv(std::string_view csv,
                                                  std::string* driver_version) {
  std::vector<GpuFact> gpus;
  std::istringstream lines{std::string(csv)};
  std::string line;
  while (std::getline(lines, line)) {
    // A lost GPU's line in its place (parse_nvidia_smi_lost_gpus reads it).
    if (trim(line).empty() || line.find(kNvidiaSmiNoHandleText) != std::string::npos) continue;
    auto fields = split_csv(line);
    // index, name, uuid, compute_cap, memory.total, driver_version[, mig.mode.current]
    if (fields.size() != 6 && fields.size() != 7)
      return failf("Failed to parse nvidia-smi output: '{}'", line);
    auto index = parse_version(fields[0]);
    auto capability = parse_version(fields[3]);
    auto memory = parse_version(fields[4]);
    if (!index || !capability) return failf("Failed to parse nvidia-smi output: '{}'", line);
    GpuFact gpu;
    gpu.index = index->major;
    gpu.name = fields[1];
    gpu.uuid = fields[2];
    gpu.cc_major = capability->major;
    gpu.cc_minor = capability->minor;
    gpu.memory_total_mib = memory ? static_cast<unsigned long long>(memory->major) : 0;
    if (driver_version) *driver_version = fields[5];
    gpu.mig = fields.size() == 7 && fields[6] == "Enabled";  // "Disabled", "[N/A]" otherwise
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

std::optional<std::string> parse_nvidia_smi_cuda_version(std::string_view report) {
  std::istringstream lines{std::string(report)};
  std::string line;
  while (std::getline(lines, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos || trim(line.substr(0, colon)) != "CUDA Version") continue;
    auto version = parse_version(trim(line.substr(colon + 1)));
    if (version) return version->major_minor();
  }
  return std::nullopt;
}

Result<GpuProbe> probe_nvidia_smi(const std::string& program,
                                  const std::optional<std::string>& service_user) {
  // Found on a PATH that may list a venv: never run as root (util/process drops privileges).
  GL_TRY(auto listing,
         run_unprivileged(program,
                          {"--query-gpu=index,name,uuid,compute_cap,memory.total,driver_version,"
                           "mig.mode.current",
                           "--format=csv,noheader,nounits"},
                          service_user));
  // A lost GPU makes nvidia-smi exit non-zero with its line: the node has a driver, and the
  // finding is the lost GPU (rules/check), not a missing driver.
  auto lost = parse_nvidia_smi_lost_gpus(listing.out);
  if (listing.exit_code != 0 && lost.empty()) {
    // Its own first line says why ("... couldn't communicate with the NVIDIA driver ...").
    std::string_view said = listing.out;
    while (!said.empty() && (said.front() == '\n' || said.front() == ' ')) said.remove_prefix(1);
    said = said.substr(0, std::min(said.find('\n'), size_t{240}));
    return failf("Failed to query GPUs with '{}': exit code {}{}", program, listing.exit_code,
                 said.empty() ? std::string() : fmt::format(": {}", said));
  }
  GpuProbe probe;
  probe.driver.source = "nvidia-smi";
  probe.driver.present = true;
  std::string driver_version;
  GL_TRY(auto gpus, parse_nvidia_smi_csv(listing.out, &driver_version));
  probe.gpus = std::move(gpus);
  probe.driver.lost_gpus = std::move(lost);
  if (!driver_version.empty()) probe.driver.version = driver_version;
  auto report = run_unprivileged(program, {"-q"}, service_user);
  if (report && report->exit_code == 0)
    probe.driver.max_cuda = parse_nvidia_smi_cuda_version(report->out);
  else
    probe.driver.problems.push_back("Failed to read the CUDA version from '" + program + " -q'");
  return probe;
}

std::vector<std::string> parse_nvidia_smi_lost_gpus(std::string_view output) {
  std::vector<std::string> lost;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string_view::npos) end = output.size();
    std::string_view line = output.substr(start, end - start);
    start = end + 1;
    auto at = line.find(kNvidiaSmiNoHandleText);
    if (at == std::string_view::npos) continue;
    line.remove_prefix(at + kNvidiaSmiNoHandleText.size());
    auto tail = line.find(fmt::format(": {}", kNvmlGpuIsLostText));
    if (tail == std::string_view::npos) continue;
    lost.emplace_back(line.substr(0, tail));
  }
  return lost;
}

GpuProbe probe_gpus(const NodeFs& node,
                    const std::function<std::optional<std::string>()>& find_nvidia_smi,
                    const std::optional<std::string>& service_user) {
  std::vector<std::string> problems;
  int nvml_error = 0;
  auto from_nvml = probe_nvml(&nvml_error);
  if (from_nvml) return std::move(*from_nvml);
  problems.push_back(from_nvml.error().message);
  // Kept whichever probe answers next: a driver/library mismatch is the finding (rules/gpu_health).
  std::optional<int> init_error;
  if (nvml_error) init_error = nvml_error;
  if (const auto nvidia_smi = find_nvidia_smi(); nvidia_smi && node.host_path(*nvidia_smi)) {
    auto from_smi = probe_nvidia_smi(node.host_path(*nvidia_smi)->string(), service_user);
    if (from_smi) {
      from_smi->driver.problems.insert(from_smi->driver.problems.begin(), problems.begin(),
                                       problems.end());
      from_smi->driver.nvml_error = init_error;
      return std::move(*from_smi);
    }
    problems.push_back(from_smi.error().message);
  } else {
    problems.push_back("nvidia-smi: not found on PATH");
  }
  GpuProbe probe;
  probe.driver.source = "none";
  // A loaded kernel module without a working user-space library still says which driver it is.
  if (auto text = node.read("/proc/driver/nvidia/version", 4096)) {
    if (auto version = proc_driver_version(*text)) {
      probe.driver.source = "/proc/driver/nvidia";
      probe.driver.version = version;
    }
  }
  probe.driver.problems = std::move(problems);
  probe.driver.nvml_error = init_error;
  return probe;
}

}  // namespace gl
