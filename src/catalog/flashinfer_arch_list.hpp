// SPDX-License-Identifier: Apache-2.0
#pragma once
// FLASHINFER_CUDA_ARCH_LIST as FlashInfer reads it, and the gencode targets FlashInfer derives
// from it or from a GPU (flashinfer/compilation_context.py, CompilationContext.__init__ and
// _normalize_cuda_arch, FlashInfer v0.6.18rc7 / main fb28d72 of 2026-08-22):
// - the value is split on each single space (str.split(" ")): "9.0a;10.0a" or a doubled space
//   makes FlashInfer raise at import;
// - each entry is "major.minor"; one whose minor ends in a letter ("9.0a", "12.0f") is passed to
//   nvcc as is (compute_90a), so "9.0+PTX" becomes compute_90+PTX, which nvcc rejects;
// - one without a suffix is normalised: 9.x -> a, 12.0 -> f and 12.x -> a (both only with
//   nvcc >= 12.9, else RuntimeError "SM 12.x requires CUDA >= 12.9"), 10.x and up -> a, below 9
//   none.
// nvcc's own rules for the suffixes (NVIDIA, "NVIDIA Blackwell and NVIDIA CUDA 12.9 Introduce
// Family-Specific Architecture Features", 2025): `a` exists from sm_90 on, `f` from sm_100 on and
// only in nvcc >= 12.9.

#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/cuda_arch.hpp"
#include "util/version.hpp"

namespace gl {

struct FlashInferArch {
  ComputeCapability capability;
  char suffix = 0;  // 'a', 'f', or 0 (FlashInfer adds its own)

  auto operator<=>(const FlashInferArch&) const = default;
  std::string text() const;    // "12.0f"
  std::string target() const;  // "compute_120f", what nvcc's -gencode gets
};

struct ArchListError {
  std::string message;                   // why FlashInfer or nvcc refuses the value
  std::optional<std::string> corrected;  // the same architectures in FlashInfer's grammar
};

std::expected<std::vector<FlashInferArch>, ArchListError> parse_flashinfer_arch_list(
    std::string_view text);

// The target FlashInfer compiles for a capability with no suffix, given the nvcc version its gate
// reads; nullopt where FlashInfer raises (12.x below 12.9).
std::optional<FlashInferArch> flashinfer_target(ComputeCapability capability,
                                                const Version& gate_nvcc);

// The lowest nvcc that compiles a suffixed target: the architecture's own minimum, and 12.9 for
// a family (`f`) target; nullopt when the catalog does not know the architecture.
std::optional<Version> min_nvcc_for_target(const FlashInferArch& target);

}  // namespace gl
