#include <gtest/gtest.h>

#include "catalog/cuda_arch.hpp"

namespace gl {
namespace {

TEST(CudaArch, TableMatchesTheFieldNotes) {
  EXPECT_EQ(min_nvcc_for({12, 0})->major_minor(), "12.8");
  EXPECT_EQ(min_nvcc_for({12, 1})->major_minor(), "12.9");
  EXPECT_EQ(min_nvcc_for({11, 0})->major_minor(), "13.0");
  EXPECT_EQ(min_nvcc_for({9, 0})->major_minor(), "11.8");
  EXPECT_FALSE(min_nvcc_for({6, 1}));
}

TEST(CudaArch, Cuda13DropsBelowTuring) {
  EXPECT_EQ(lowest_sm_for(13), 75);
  EXPECT_EQ(lowest_sm_for(14), 75);
  EXPECT_FALSE(lowest_sm_for(12));
}

TEST(CudaArch, DriverBranches) {
  EXPECT_EQ(min_driver_for(13), 580);
  EXPECT_EQ(min_driver_for(12), 525);
}

}  // namespace
}  // namespace gl
