// SPDX-License-Identifier: Apache-2.0
#pragma once
// One CUDA toolkit root: does it hold an nvcc, which version it is by each file that says so
// (version.json, the nvidia-cuda-nvcc wheel's dist-info, include/cuda.h), and which
// architectures that nvcc compiles for (the catalog's list for its version). nvcc itself runs
// only when no version file exists, then as an unprivileged user (util/process), and its answer
// is cached by file identity (probe_cache). All parsing here is plain scanning: no regex, no
// recursion on file content.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "facts/facts.hpp"
#include "facts/node_fs.hpp"
#include "facts/probe_cache.hpp"

namespace gl {

// "release 13.0, V13.0.88" -> "13.0" (what FlashInfer reads: `release (\d+\.\d+),`).
std::optional<std::string> parse_nvcc_release(std::string_view output);
// "compute_75\ncompute_80\n..." -> {75, 80, ...}
std::vector<int> parse_gpu_arch_list(std::string_view output);
// `#define CUDA_VERSION 13000` -> "13.0"
std::optional<std::string> parse_cuda_header_version(std::string_view header);
// {"cuda": {"version": "13.0.3"}} -> "13.0.3"
std::optional<std::string> parse_version_json(std::string_view json);
// {"cuda_nvcc": {"version": "13.0.88"}} -> "13.0.88": nvcc's own version in the same file.
std::optional<std::string> parse_version_json_nvcc(std::string_view json);

// How nvcc may be run when no file says its version.
struct NvccRunner {
  ProbeCache& cache;
  std::optional<std::string> service_user;  // whom it runs as when gpulaunch is root
};

// Fills the version and architecture fields of `toolkit` (root and nvcc set by the caller).
// `runner` nullptr: nvcc never runs.
void probe_toolkit(const NodeFs& node, ToolkitFact& toolkit, NvccRunner* runner = nullptr);

}  // namespace gl
