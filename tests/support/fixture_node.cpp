// SPDX-License-Identifier: Apache-2.0
#include "support/fixture_node.hpp"

#include <algorithm>
#include <fstream>
#include <random>

#include <fmt/core.h>

#include "catalog/cuda_arch.hpp"

namespace gl::test {
namespace fs = std::filesystem;

FixtureNode::FixtureNode() {
  std::random_device random;
  base_ = fs::temp_directory_path() / fmt::format("gpulaunch-node-{:x}", random());
  root_ = base_ / "root";
  scratch_ = base_ / "scratch";
  fs::create_directories(root_);
  fs::create_directories(scratch_);
}

FixtureNode::~FixtureNode() {
  std::error_code ignored;
  fs::remove_all(base_, ignored);
}

void FixtureNode::write(const std::string& node_path, const std::string& text, bool executable) {
  fs::path path = root_ / fs::path(node_path).relative_path();
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
  if (executable)
    fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
}

void FixtureNode::symlink(const std::string& node_path, const std::string& target) {
  fs::path path = root_ / fs::path(node_path).relative_path();
  fs::create_directories(path.parent_path());
  fs::create_symlink(target, path);
}

void FixtureNode::mkdir(const std::string& node_path) {
  fs::create_directories(root_ / fs::path(node_path).relative_path());
}

std::vector<int> archs_for_version(const std::string& text) {
  return archs_for_nvcc(parse_version(text).value_or(Version{}));
}

void FixtureNode::toolkit(const std::string& path, const std::string& version_text,
                          ToolkitLayout layout, bool lists_archs) {
  auto version = parse_version(version_text).value_or(Version{});
  std::string archs;
  for (int sm : archs_for_version(version_text)) archs += fmt::format("compute_{}\n", sm);
  // nvcc is closed source: its lines are the real nvcc 13.0.88's (cuda_13.0.r13.0/
  // compiler.36424714_0, run on the CI machine's /usr/local/cuda-13.0), with this release's
  // numbers.
  std::string nvcc = fmt::format(
      "#!/bin/sh\n"
      "case \"$1\" in\n"
      "  --version) printf 'nvcc: NVIDIA (R) Cuda compiler driver\\n"
      "Copyright (c) 2005-2025 NVIDIA Corporation\\nBuilt on Wed_Aug_20_01:58:59_PM_PDT_2025\\n"
      "Cuda compilation tools, release {0}.{1}, V{0}.{1}.{2}\\n"
      "Build cuda_{0}.{1}.r{0}.{1}/compiler.36424714_0\\n' ;;\n"
      "  --list-gpu-arch) {3} ;;\n"
      "  *) echo 'nvcc fatal   : No input files specified; use option --help for more "
      "information' >&2; exit 1 ;;\n"
      "esac\n",
      version.major, version.minor, version.patch == 0 ? 88 : version.patch,
      lists_archs
          ? "printf '" +
                [&] {
                  std::string escaped;
                  for (char c : archs)
                    escaped += c == '\n' ? std::string("\\n") : std::string(1, c);
                  return escaped;
                }() +
                "'"
          : std::string("echo \"nvcc fatal   : Unknown option '--list-gpu-arch'\" >&2; exit 1"));
  write(path + "/bin/nvcc", nvcc, true);
  // The runtime the JIT links and includes: NVIDIA's installer has lib64/, the wheels lib/, the
  // distro package puts it on the linker's own path.
  if (path != "/usr") {
    write(path + (layout == ToolkitLayout::pip ? "/lib/" : "/lib64/") +
              fmt::format("libcudart.so.{}", version.major),
          "");
    write(path + "/include/cuda_runtime.h", "#pragma once\n");
  }
  if (layout == ToolkitLayout::nvcc_only) return;
  int encoded = version.major * 1000 + version.minor * 10;
  std::string header = fmt::format(
      "#ifndef __cuda_cuda_h__\n#define __cuda_cuda_h__\n#include <stdlib.h>\n"
      "#define CUDA_VERSION {}\n#endif\n",
      encoded);
  write(path + "/include/cuda.h", header);
  const int nvcc_patch = version.patch == 0 ? 88 : version.patch;
  // As NVIDIA's installer writes it: the SDK's version, then one entry per component.
  if (layout == ToolkitLayout::version_json)
    write(path + "/version.json",
          fmt::format("{{\n   \"cuda\" : {{\n      \"name\" : \"CUDA SDK\",\n      \"version\" : "
                      "\"{0}.{1}.{2}\"\n   }},\n   \"cuda_cudart\" : {{\n      \"name\" : \"CUDA "
                      "Runtime (cudart)\",\n      \"version\" : \"{0}.{1}.77\"\n   }},\n   "
                      "\"cuda_nvcc\" : {{\n      \"name\" : \"CUDA NVCC\",\n      \"version\" : "
                      "\"{0}.{1}.{3}\"\n   }}\n}}\n",
                      version.major, version.minor, version.patch, nvcc_patch));
  if (layout == ToolkitLayout::pip) {
    // pip into site-packages puts the wheel's dist-info beside nvidia/ (nvidia-cuda-nvcc 13.x
    // for nvidia/cu13, nvidia-cuda-nvcc-cu12 for nvidia/cuda_nvcc); wheels unpacked into a
    // toolkit root keep theirs in ROOT/dist-info (as this repository's build machine has it).
    const fs::path root(path);
    const bool in_site = root.parent_path().filename() == "nvidia";
    const std::string dist = root.filename() == "cuda_nvcc"
                                 ? fmt::format("nvidia_cuda_nvcc_cu{}", version.major)
                                 : std::string("nvidia_cuda_nvcc");
    const std::string where =
        in_site ? root.parent_path().parent_path().string() : path + "/dist-info";
    write(where + fmt::format("/{}-{}.{}.{}.dist-info/METADATA", dist, version.major, version.minor,
                              nvcc_patch),
          fmt::format("Metadata-Version: 2.4\nName: {}\nVersion: {}.{}.{}\nSummary: CUDA nvcc\n",
                      dist == "nvidia_cuda_nvcc"
                          ? std::string("nvidia-cuda-nvcc")
                          : fmt::format("nvidia-cuda-nvcc-cu{}", version.major),
                      version.major, version.minor, nvcc_patch));
  }
}

void FixtureNode::venv(const std::string& path, const std::optional<std::string>& torch_version,
                       const std::optional<std::string>& torch_cuda,
                       const std::map<std::string, std::string>& packages, bool with_python,
                       const std::vector<std::string>& programs) {
  const std::string site = path + "/lib/python3.11/site-packages";
  mkdir(site);
  write(path + "/pyvenv.cfg", "home = /usr/bin\nversion = 3.11.2\n");
  if (with_python) write(path + "/bin/python", "#!/bin/sh\nexit 0\n", true);
  for (const auto& program : programs) write(path + "/bin/" + program, "#!/bin/sh\nexit 0\n", true);
  if (torch_version) {
    write(site + "/torch/__init__.py", "");
    write(site + "/torch/version.py",
          fmt::format("from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', "
                      "'git_version', 'hip']\n__version__ = '{}'\ndebug = False\ncuda: "
                      "Optional[str] = {}\ngit_version = 'abc'\nhip: Optional[str] = None\n",
                      *torch_version, torch_cuda ? "'" + *torch_cuda + "'" : std::string("None")));
    write(site + fmt::format("/torch-{}.dist-info/METADATA", *torch_version),
          fmt::format("Metadata-Version: 2.1\nName: torch\nVersion: {}\n", *torch_version));
  }
  for (const auto& [name, version] : packages) {
    // Dist names as the wheels spell them; flashinfer ships as flashinfer-python.
    std::string dist = name == "flashinfer" ? "flashinfer_python" : name;
    write(site + "/" + name + "/__init__.py", "");
    // METADATA names FlashInfer's wheels with dashes (flashinfer-jit-cache).
    std::string display = dist;
    if (dist.starts_with("flashinfer")) std::ranges::replace(display, '_', '-');
    write(site + fmt::format("/{}-{}.dist-info/METADATA", dist, version),
          fmt::format("Metadata-Version: 2.1\nName: {}\nVersion: {}\nSummary: x\n\nLong text\n",
                      display, version));
  }
}

std::string FixtureNode::nvml(const std::vector<GpuSpec>& gpus, const std::string& driver,
                              const std::string& cuda, int init_code) {
  auto version = parse_version(cuda).value_or(Version{});
  std::string text = fmt::format("init {}\ndriver {}\ncuda {}\n", init_code, driver,
                                 version.major * 1000 + version.minor * 10);
  int index = 0;
  for (const auto& spec : gpus)
    for (int i = 0; i < spec.count; ++i, ++index) {
      text += fmt::format("gpu {} {} 97887 GPU-{:08x}-0000-0000-0000-000000000000 {}\n", spec.major,
                          spec.minor, index + 0x1000, spec.name);
      if (spec.mig) text += fmt::format("mig {}\n", index);
    }
  auto path = scratch_ / "nvml.txt";
  std::ofstream(path) << text;
  return path.string();
}

void FixtureNode::nvidia_smi(const std::vector<GpuSpec>& gpus, const std::string& driver,
                             const std::string& cuda) {
  std::string csv;
  int index = 0;
  for (const auto& spec : gpus)
    for (int i = 0; i < spec.count; ++i, ++index)
      csv += fmt::format("{}, {}, GPU-{:08x}-0000-0000-0000-000000000000, {}.{}, 97887, {}, {}\\n",
                         index, spec.name, index + 0x1000, spec.major, spec.minor, driver,
                         spec.mig ? "Enabled" : "Disabled");
  std::string query = fmt::format(
      "\\n==============NVSMI LOG==============\\n\\nTimestamp                                 : "
      "Mon "
      "Jan  5 10:00:00 2026\\nDriver Version                            : {}\\nCUDA Version        "
      "  "
      "                    : {}\\n\\nAttached GPUs                             : {}\\n",
      driver, cuda, index);
  write("/usr/bin/nvidia-smi",
        fmt::format("#!/bin/sh\nif [ \"$1\" = -q ]; then printf '{}'; exit 0; fi\n"
                    "case \"$1\" in --query-gpu=*) printf '{}'; exit 0 ;; esac\n"
                    // What nvidia-smi 535.261.03 (Debian 12) prints and exits with when it
                    // cannot reach the driver.
                    "echo \"NVIDIA-SMI has failed because it couldn't communicate with the "
                    "NVIDIA driver. Make sure that the latest NVIDIA driver is installed and "
                    "running.\"\nexit 9\n",
                    query, csv),
        true);
}

}  // namespace gl::test
