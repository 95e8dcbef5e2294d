// SPDX-License-Identifier: Apache-2.0
// What a profile derives from its settings: the ranks, the GPUs a node needs, and how messages
// describe them.

#include "profile/profile.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

Profile parallel(EngineKind kind, long long tp, long long dp, bool dp_attention = false,
                 long long nodes = 1) {
  Profile profile;
  profile.engine.kind = kind;
  profile.parallelism.tp = tp;
  profile.parallelism.dp = dp;
  profile.parallelism.dp_attention = dp_attention;
  profile.parallelism.nodes = nodes;
  return profile;
}

// The description names the dp factor exactly when the GPU count includes it.
TEST(Profile, TheWorldsDescriptionCountsWhatItsSizeCounts) {
  const auto vllm = parallel(EngineKind::vllm, 2, 2);
  EXPECT_EQ(vllm.gpus_per_node(), 4);
  EXPECT_EQ(vllm.world_text(), "tp 2 x pp 1 x dp 2");
  const auto sglang = parallel(EngineKind::sglang, 2, 2);
  EXPECT_EQ(sglang.gpus_per_node(), 4);
  EXPECT_EQ(sglang.world_text(), "tp 2 x pp 1 x dp 2");
  const auto attention = parallel(EngineKind::sglang, 4, 2, true);
  EXPECT_EQ(attention.gpus_per_node(), 4);
  EXPECT_EQ(attention.world_text(), "tp 4 x pp 1");
  const auto two_nodes = parallel(EngineKind::vllm, 4, 2, false, 2);
  EXPECT_EQ(two_nodes.gpus_per_node(), 4);
  EXPECT_EQ(two_nodes.world_text(), "tp 4 x pp 1 x dp 2 over 2 nodes");
}

}  // namespace
}  // namespace gl
