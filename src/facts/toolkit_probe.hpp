#pragma once
// One CUDA toolkit root: does it hold an nvcc, which version it is by each source that exists
// (nvcc --version, version.json, include/cuda.h), and which architectures its nvcc lists.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "facts/facts.hpp"
#include "facts/node_fs.hpp"

namespace gl {

// "release 13.0, V13.0.88" -> "13.0" (what FlashInfer matches: `release (\d+\.\d+),`).
std::optional<std::string> parse_nvcc_release(std::string_view output);
// "compute_75\ncompute_80\n..." -> {75, 80, ...}
std::vector<int> parse_gpu_arch_list(std::string_view output);
// `#define CUDA_VERSION 13000` -> "13.0"
std::optional<std::string> parse_cuda_header_version(std::string_view header);
// {"cuda": {"version": "13.0.3"}} -> "13.0.3"
std::optional<std::string> parse_version_json(std::string_view json);

// Fills the version and architecture fields of `toolkit` (root and nvcc set by the caller).
// `same_nvcc`, when given, already ran the same nvcc binary: its answers are reused.
void probe_toolkit(const NodeFs& node, ToolkitFact& toolkit,
                   const ToolkitFact* same_nvcc = nullptr);

}  // namespace gl
