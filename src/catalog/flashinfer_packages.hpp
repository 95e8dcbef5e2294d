// SPDX-License-Identifier: Apache-2.0
#pragma once
// FlashInfer's optional kernel packages and the version check its import runs on them
// (flashinfer/jit/env.py _get_cubin_dir and _get_aot_dir, FlashInfer v0.6.18rc7 / main fb28d72):
// an installed flashinfer-cubin must carry exactly flashinfer-python's version, and
// flashinfer-jit-cache's version must start with it ("0.6.18+cu130"), else `import flashinfer`
// raises "<package> version (X) does not match flashinfer version (Y)". Any non-empty
// FLASHINFER_DISABLE_VERSION_CHECK skips both (even "0": os.getenv's truthiness), as does a
// source build that reports "0.0.0+unknown"; FLASHINFER_CUBIN_DIR skips the cubin one (the
// package is not read). The wheels come from flashinfer.ai's index (flashinfer/__main__.py,
// `flashinfer install-cubin-wheel` / `install-jit-cache-wheel`).

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gl {

enum class VersionMatch { exact, prefix };

struct FlashInferCompanion {
  std::string_view dist;      // normalised dist-info name: "flashinfer_jit_cache"
  std::string_view pip_name;  // "flashinfer-jit-cache"
  VersionMatch match;
  std::string_view skipped_by;  // a variable whose presence skips the check; "" for none
  bool per_cuda;                // wheels per CUDA label: ".../whl/cu130", "+cu130"
};

inline constexpr std::string_view kFlashInferDisableVersionCheck =
    "FLASHINFER_DISABLE_VERSION_CHECK";
inline constexpr std::string_view kFlashInferUnknownVersion = "0.0.0+unknown";
inline constexpr std::string_view kFlashInferWheelIndex = "https://flashinfer.ai/whl";

std::span<const FlashInferCompanion> flashinfer_companions();

// Does FlashInfer's import accept `companion` next to flashinfer-python `flashinfer`?
bool flashinfer_companion_matches(const FlashInferCompanion& row, std::string_view flashinfer,
                                  std::string_view companion);

// "cu130" from a companion version "0.6.18+cu130", else from torch's CUDA "13.0".
std::optional<std::string> cuda_wheel_label(std::string_view companion_version,
                                            const std::optional<std::string>& torch_cuda);

}  // namespace gl
