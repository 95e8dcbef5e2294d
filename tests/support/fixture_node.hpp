// SPDX-License-Identifier: Apache-2.0
#pragma once
// Builds a node's filesystem in a temp directory, laid out as the real things are: toolkits
// with their version files and fake nvcc scripts printing real-format output, venvs with
// torch/version.py and dist-info METADATA, nvidia-smi, and the fake NVML's fixture file.
// Probed with --root.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gl::test {

// Which files say the toolkit's version, as real installs lay them out: NVIDIA's installer
// (version.json with cuda and cuda_nvcc, include/cuda.h), a distro package (cuda.h only), the
// nvidia-cuda-nvcc wheel (dist-info METADATA, cuda.h), or none at all (only then does gpulaunch
// run the nvcc, unprivileged).
enum class ToolkitLayout { version_json, header_only, pip, nvcc_only };

struct GpuSpec {
  int count = 1;
  int major = 12;
  int minor = 0;
  std::string name = "NVIDIA RTX PRO 6000 Blackwell Server Edition";
  bool mig = false;  // MIG mode on
};

class FixtureNode {
 public:
  FixtureNode();  // a fresh temp directory
  ~FixtureNode();
  FixtureNode(const FixtureNode&) = delete;
  FixtureNode& operator=(const FixtureNode&) = delete;

  const std::filesystem::path& root() const { return root_; }
  // Outside the root: files the test itself owns (NVML fixture, profiles).
  const std::filesystem::path& scratch() const { return scratch_; }

  void write(const std::string& node_path, const std::string& text, bool executable = false);
  void symlink(const std::string& node_path, const std::string& target);
  void mkdir(const std::string& node_path);

  // A toolkit at `path` ("/usr/local/cuda-13.0", or "/usr" for the distro's /usr/bin/nvcc).
  // `lists_archs` = false: nvcc rejects --list-gpu-arch, as nvcc before 11 does.
  void toolkit(const std::string& path, const std::string& version,
               ToolkitLayout layout = ToolkitLayout::version_json, bool lists_archs = true);
  void venv(const std::string& path, const std::optional<std::string>& torch_version,
            const std::optional<std::string>& torch_cuda,
            const std::map<std::string, std::string>& packages, bool with_python = true,
            const std::vector<std::string>& programs = {});
  // Writes the fake NVML's file and returns its path (for $GPULAUNCH_FAKE_NVML).
  std::string nvml(const std::vector<GpuSpec>& gpus, const std::string& driver,
                   const std::string& cuda, int init_code = 0);
  void nvidia_smi(const std::vector<GpuSpec>& gpus, const std::string& driver,
                  const std::string& cuda);

 private:
  std::filesystem::path base_;
  std::filesystem::path root_;
  std::filesystem::path scratch_;
};

// The sm numbers a toolkit of this version compiles for, from the catalog (what the fake nvcc's
// --list-gpu-arch prints).
std::vector<int> archs_for_version(const std::string& version);

}  // namespace gl::test
