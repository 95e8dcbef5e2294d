// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "catalog/flashinfer_arch_list.hpp"
#include "catalog/torch_arch_list.hpp"

namespace gl {
namespace {

std::vector<std::string> texts(std::string_view list) {
  auto parsed = parse_flashinfer_arch_list(list);
  EXPECT_TRUE(parsed) << list << ": " << (parsed ? "" : parsed.error().message);
  std::vector<std::string> out;
  if (parsed)
    for (const auto& arch : *parsed) out.push_back(arch.text());
  return out;
}

ArchListError refused(std::string_view list) {
  auto parsed = parse_flashinfer_arch_list(list);
  EXPECT_FALSE(parsed) << list;
  return parsed ? ArchListError{} : parsed.error();
}

TEST(FlashInferArchList, SingleSpacesSeparateAndSuffixesAreKept) {
  EXPECT_EQ(texts("12.0f"), std::vector<std::string>{"12.0f"});
  EXPECT_EQ(texts("9.0a 10.0a 12.0"), (std::vector<std::string>{"9.0a", "10.0a", "12.0"}));
  EXPECT_EQ(texts("8.0 8.6"), (std::vector<std::string>{"8.0", "8.6"}));
}

// FlashInfer's str.split(" ") then "major.minor" unpacking raises on each of these.
TEST(FlashInferArchList, OtherSeparatorsAreRefusedWithTheSpacedList) {
  auto semicolon = refused("9.0a;10.0a");
  EXPECT_EQ(semicolon.message,
            "entries separated by ';' (FlashInfer splits the list on single spaces only)");
  EXPECT_EQ(semicolon.corrected, "9.0a 10.0a");
  EXPECT_EQ(refused("8.0,9.0").corrected, "8.0 9.0");
  EXPECT_EQ(refused("9.0a  10.0a").corrected, "9.0a 10.0a");
  EXPECT_EQ(refused(" 12.0f").corrected, "12.0f");
  EXPECT_EQ(refused("12.0f ").message,
            "an empty entry (FlashInfer splits on each single space: a leading, trailing or "
            "doubled space breaks it)");
}

// "9.0+PTX" ends in a letter, so FlashInfer keeps it and nvcc gets compute_90+PTX.
TEST(FlashInferArchList, PtxSuffixIsRefused) {
  auto ptx = refused("8.0 9.0+PTX");
  EXPECT_EQ(ptx.message,
            "'9.0+PTX': FlashInfer has no +PTX; it passes the entry to nvcc as compute_90+PTX, "
            "which nvcc rejects");
  EXPECT_EQ(ptx.corrected, "8.0 9.0");
}

TEST(FlashInferArchList, SuffixesNvccDoesNotHaveAreRefused) {
  auto f = refused("9.0f");
  EXPECT_EQ(f.message, "'9.0f': nvcc has no family target below sm_100 (compute_90f)");
  EXPECT_EQ(f.corrected, "9.0a");
  auto a = refused("8.6a");
  EXPECT_EQ(a.message, "'8.6a': nvcc has no arch-specific target below sm_90 (compute_86a)");
  EXPECT_EQ(a.corrected, "8.6");
}

TEST(FlashInferArchList, NonArchitecturesHaveNoCorrection) {
  auto sm = refused("sm_90");
  EXPECT_EQ(sm.message, "'sm_90' is not an architecture like \"9.0\", \"9.0a\" or \"12.0f\"");
  EXPECT_FALSE(sm.corrected);
  EXPECT_FALSE(refused("").corrected);
  EXPECT_FALSE(refused("9.0A").corrected);
}

// _normalize_cuda_arch in compilation_context.py.
TEST(FlashInferArchList, NormalisationFollowsFlashInfer) {
  EXPECT_EQ(flashinfer_target({12, 0}, {12, 9, 0})->target(), "compute_120f");
  EXPECT_EQ(flashinfer_target({12, 1}, {13, 0, 0})->target(), "compute_121a");
  EXPECT_FALSE(flashinfer_target({12, 0}, {12, 8, 0}));
  EXPECT_EQ(flashinfer_target({9, 0}, {12, 8, 0})->target(), "compute_90a");
  EXPECT_EQ(flashinfer_target({10, 0}, {12, 8, 0})->target(), "compute_100a");
  EXPECT_EQ(flashinfer_target({8, 6}, {12, 8, 0})->target(), "compute_86");
}

TEST(FlashInferArchList, FamilyTargetsNeedNvcc12_9) {
  EXPECT_EQ(min_nvcc_for_target({{12, 0}, 'f'})->major_minor(), "12.9");
  EXPECT_EQ(min_nvcc_for_target({{12, 0}, 'a'})->major_minor(), "12.8");
  EXPECT_EQ(min_nvcc_for_target({{10, 0}, 'f'})->major_minor(), "12.9");
  EXPECT_EQ(min_nvcc_for_target({{9, 0}, 'a'})->major_minor(), "12.0");
  EXPECT_EQ(min_nvcc_for_target({{11, 0}, 'f'})->major_minor(), "13.0");
  EXPECT_EQ(min_nvcc_for_target({{8, 0}, 0})->major_minor(), "11.0");
}

// TORCH_CUDA_ARCH_LIST gets the same architectures in torch's grammar (catalog/torch_arch_list):
// ';' between entries, a family target as its plain architecture, an 'a' target kept.
TEST(TorchArchList, FlashInfersListInTorchsGrammar) {
  EXPECT_EQ(torch_arch_list("12.0f"), "12.0");
  EXPECT_EQ(torch_arch_list("9.0a 10.0f 12.0"), "9.0a;10.0;12.0");
  // Not FlashInfer's grammar (check says so): torch's own, passed as written.
  EXPECT_EQ(torch_arch_list("8.0;9.0+PTX"), "8.0;9.0+PTX");
}

TEST(TorchArchList, ReleasesKnownToRefuseAnEntry) {
  auto refused = [](std::string_view list, Version torch) {
    std::vector<std::string> entries;
    for (const auto& each : torch_refused_arches(list, torch)) entries.push_back(each.entry);
    return entries;
  };
  // Debian 12's torch 1.13 stops at 8.6; 2.6 has no 12.x; 2.7 has 12.0 and 12.0a.
  EXPECT_EQ(refused("8.6;9.0;12.0+PTX", {1, 13, 0}), (std::vector<std::string>{"9.0", "12.0+PTX"}));
  EXPECT_EQ(refused("9.0a 12.0a", {2, 6, 0}), (std::vector<std::string>{"12.0a"}));
  EXPECT_TRUE(refused("9.0a;12.0;12.0a", {2, 7, 1}).empty());
  // 12.1 was read absent through 2.7's line and present later, with no release pinned: a newer
  // torch is not judged.
  EXPECT_EQ(refused("12.1", {2, 7, 0}), (std::vector<std::string>{"12.1"}));
  EXPECT_TRUE(refused("12.1", {2, 9, 0}).empty());
}

}  // namespace
}  // namespace gl
