// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "catalog/flashinfer_packages.hpp"

namespace gl {
namespace {

const FlashInferCompanion& row(std::string_view dist) {
  for (const auto& companion : flashinfer_companions())
    if (companion.dist == dist) return companion;
  throw std::runtime_error("no row");
}

// flashinfer/jit/env.py: the cubin package must match exactly, the JIT cache by prefix because
// its version carries the CUDA label.
TEST(FlashInferPackages, VersionRulesFollowFlashInfersImport) {
  const auto& cubin = row("flashinfer_cubin");
  const auto& jit = row("flashinfer_jit_cache");
  EXPECT_TRUE(flashinfer_companion_matches(cubin, "0.6.18", "0.6.18"));
  EXPECT_FALSE(flashinfer_companion_matches(cubin, "0.6.18", "0.6.17"));
  EXPECT_TRUE(flashinfer_companion_matches(jit, "0.6.18", "0.6.18+cu130"));
  EXPECT_FALSE(flashinfer_companion_matches(jit, "0.6.18", "0.6.17+cu130"));
  EXPECT_TRUE(flashinfer_companion_matches(jit, "0.0.0+unknown", "0.6.17+cu130"));
  EXPECT_EQ(cubin.skipped_by, "FLASHINFER_CUBIN_DIR");
  EXPECT_EQ(jit.skipped_by, "");
}

TEST(FlashInferPackages, WheelLabelFromTheCacheElseTorch) {
  EXPECT_EQ(cuda_wheel_label("0.6.17+cu129", "13.0"), "cu129");
  EXPECT_EQ(cuda_wheel_label("0.6.17", "13.0"), "cu130");
  EXPECT_FALSE(cuda_wheel_label("0.6.17", std::nullopt));
}

}  // namespace
}  // namespace gl
