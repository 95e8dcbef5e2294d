// SPDX-License-Identifier: Apache-2.0
#include "util/did_you_mean.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

TEST(DidYouMean, SuggestsCloseKeys) {
  std::vector<std::string> keys{"tp", "pp", "ep", "dp", "dp_attention", "nodes"};
  EXPECT_EQ(did_you_mean("nodse", keys), "nodes");
  EXPECT_EQ(did_you_mean("dp_atention", keys), "dp_attention");
  EXPECT_EQ(did_you_mean_suffix("nodse", keys), " (did you mean 'nodes'?)");
}

TEST(DidYouMean, StaysQuietForUnrelatedWords) {
  std::vector<std::string> keys{"cuda_home", "min_version", "arch_list"};
  EXPECT_FALSE(did_you_mean("completely_different", keys));
  EXPECT_EQ(did_you_mean_suffix("zzz", keys), "");
}

}  // namespace
}  // namespace gl
