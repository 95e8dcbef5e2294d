// SPDX-License-Identifier: Apache-2.0
#include <algorithm>

#include <gtest/gtest.h>

#include "catalog/cuda_arch.hpp"

namespace gl {
namespace {

TEST(CudaArch, TableMatchesTheFieldNotes) {
  EXPECT_EQ(min_nvcc_for({12, 0})->major_minor(), "12.8");
  EXPECT_EQ(min_nvcc_for({12, 1})->major_minor(), "12.9");
  EXPECT_EQ(min_nvcc_for({11, 0})->major_minor(), "13.0");
  EXPECT_EQ(min_nvcc_for({9, 0})->major_minor(), "11.8");
  EXPECT_EQ(min_nvcc_for({6, 1})->major_minor(), "8.0");
  EXPECT_FALSE(min_nvcc_for({14, 0}));
}

// `nvcc --list-gpu-arch` of the nvidia-cuda-nvcc 13.0.88 wheel (this machine's
// /usr/local/cuda-13.0), as sm numbers.
TEST(CudaArch, ListForNvcc13MatchesWhatNvcc13Prints) {
  EXPECT_EQ(archs_for_nvcc({13, 0, 88}),
            (std::vector<int>{75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121}));
}

TEST(CudaArch, ListsFollowWhatEachReleaseAddedAndDropped) {
  auto v12_8 = archs_for_nvcc({12, 8, 93});
  EXPECT_EQ(v12_8.front(), 50);  // 12.x still builds Maxwell
  EXPECT_TRUE(std::ranges::count(v12_8, 101));
  EXPECT_TRUE(std::ranges::count(v12_8, 120));
  EXPECT_FALSE(std::ranges::count(v12_8, 121));  // 12.9
  EXPECT_FALSE(std::ranges::count(v12_8, 110));  // 13.0
  EXPECT_TRUE(std::ranges::count(archs_for_nvcc({12, 9, 86}), 121));
  auto v11_8 = archs_for_nvcc({11, 8, 89});
  EXPECT_EQ(v11_8.front(), 35);
  EXPECT_EQ(v11_8.back(), 90);
  EXPECT_FALSE(std::ranges::count(archs_for_nvcc({12, 0, 0}), 37));
}

TEST(CudaArch, Cuda13DropsBelowTuring) {
  EXPECT_EQ(lowest_sm_for(13), 75);
  EXPECT_EQ(lowest_sm_for(14), 75);
  EXPECT_EQ(lowest_sm_for(12), 50);
  EXPECT_FALSE(lowest_sm_for(4));
}

TEST(CudaArch, DriverBranches) {
  EXPECT_EQ(min_driver_for(13), 580);
  EXPECT_EQ(min_driver_for(12), 525);
}

}  // namespace
}  // namespace gl
