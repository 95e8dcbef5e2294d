// SPDX-License-Identifier: Apache-2.0
#include "catalog/flashinfer_packages.hpp"

#include <array>

#include "util/version.hpp"

namespace gl {
namespace {

constexpr std::array kCompanions{
    FlashInferCompanion{"flashinfer_cubin", "flashinfer-cubin", VersionMatch::exact,
                        "FLASHINFER_CUBIN_DIR", false},
    FlashInferCompanion{"flashinfer_jit_cache", "flashinfer-jit-cache", VersionMatch::prefix, "",
                        true},
};

}  // namespace

std::span<const FlashInferCompanion> flashinfer_companions() {
  return kCompanions;
}

bool flashinfer_companion_matches(const FlashInferCompanion& row, std::string_view flashinfer,
                                  std::string_view companion) {
  if (flashinfer == kFlashInferUnknownVersion) return true;
  return row.match == VersionMatch::exact ? companion == flashinfer
                                          : companion.starts_with(flashinfer);
}

std::optional<std::string> cuda_wheel_label(std::string_view companion_version,
                                            const std::optional<std::string>& torch_cuda) {
  if (auto plus = companion_version.find("+cu"); plus != std::string_view::npos)
    return std::string(companion_version.substr(plus + 1));
  if (!torch_cuda) return std::nullopt;
  auto version = parse_version(*torch_cuda);
  if (!version) return std::nullopt;
  return "cu" + std::to_string(version->major) + std::to_string(version->minor);
}

}  // namespace gl
